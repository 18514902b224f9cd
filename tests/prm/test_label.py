import json
import random
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner

from overseer import FinalAnswer, Overseer, Plan, ToolCall, Trajectory
from overseer.cli import cli
from overseer.lab.prm.datasets import read_labelled
from overseer.lab.prm.label import mc_labels
from overseer.steps import Step
from overseer.testing import ConstantScorer


def rollout(task: str, steps: Sequence[Step], rng: random.Random) -> bool:
    """A task succeeds unless a 'bad' call was made; after a 'risky' one, half the continuations fail."""
    texts = [s.text() for s in steps]
    if any("bad" in t for t in texts):
        return False
    return not any("risky" in t for t in texts) or rng.random() < 0.5


TRAJECTORY = Trajectory(
    id="t",
    task="do it",
    steps=(
        Plan(content="plan"),
        ToolCall(tool="risky", args={}),
        ToolCall(tool="bad", args={}),
        FinalAnswer(content="x"),
    ),
)


def test_soft_and_hard_estimates() -> None:
    soft = mc_labels(TRAJECTORY, rollout, n=200, estimate="soft")
    assert soft.labels[0] == 1.0 and 0.35 < soft.labels[1] < 0.65 and soft.labels[2] == 0.0
    hard = mc_labels(TRAJECTORY, rollout, n=50, estimate="hard")
    assert hard.labels == {0: 1.0, 1: 1.0, 2: 0.0, 3: 0.0}


def test_consensus_filtering_drops_disagreements() -> None:
    def judge(task: str, steps: Sequence[Step], index: int) -> float:
        return 0.0 if steps[index].text().startswith("plan") else 1.0  # disagrees on the plan and on the bad call

    labelled = mc_labels(TRAJECTORY, rollout, n=20, estimate="hard", judge=judge)
    assert set(labelled.labels) == {1}


def test_label_command(tmp_path: Path) -> None:
    data = tmp_path / "t.jsonl"
    data.write_text(TRAJECTORY.model_dump_json() + "\n")
    result = CliRunner().invoke(
        cli,
        [
            "prm",
            "label",
            str(data),
            "--rollout",
            f"{__name__}:rollout",
            "--n",
            "20",
            "--estimate",
            "hard",
            "--out",
            str(tmp_path / "out.jsonl"),
        ],
    )
    assert result.exit_code == 0, result.output
    (item,) = read_labelled(tmp_path / "out.jsonl")
    assert item.labels == {0: 1.0, 1: 1.0, 2: 0.0, 3: 0.0}
    bad = CliRunner().invoke(cli, ["prm", "label", str(data), "--rollout", "nowhere:fn", "--out", "x"])
    assert bad.exit_code == 2 and "cannot import 'nowhere:fn'" in bad.output


def test_reviews_become_training_labels(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'a.db'}"
    with Overseer({"name": "p"}, scorers=[ConstantScorer()], store=store) as ov, ov.trajectory("pay", id="r1") as run:
        plan = run.judge(Plan(content="pay it"))
        call = run.judge(ToolCall(tool="send", args={"to": "x"}))
        run.review(plan, "approve", reviewer="bot", reviewer_kind="automated")
        run.review(call, "approve", reviewer="bot", reviewer_kind="automated")
        run.review(call, "reject", reviewer="dana")  # a human overrides the program
        run.review(call, "approve", reviewer="bot", reviewer_kind="automated")  # and a later program does not
    out = tmp_path / "reviews.jsonl"
    result = CliRunner().invoke(cli, ["prm", "reviews", "--store", store, "--out", str(out)])
    assert result.exit_code == 0, result.output
    (item,) = read_labelled(out)
    assert item.trajectory.task == "pay" and item.labels == {0: 1.0, 1: 0.0}
    assert json.loads(out.read_text())["metadata"]["dataset"] == "reviews"
