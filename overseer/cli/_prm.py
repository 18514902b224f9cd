"""``overseer prm``: build step-labelled data, train and evaluate the step scorer."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from overseer.cli._common import console, err_console, handle_errors

READERS = ("asb", "agentprocessbench", "toolemu", "tau_bench", "who_and_when")
PARTS = ("all", "train", "heldout")
PART_HELP = "Keep only this part of the fixed held-out split (see overseer/lab/prm/datasets.py)."


@click.group("prm")
def prm_group() -> None:
    """The process reward model: data, training, evaluation."""


@prm_group.command("data")
@click.argument("dataset", type=click.Choice(READERS))
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write step-labelled trajectories (JSON Lines) here.",
)
@click.option("--part", type=click.Choice(PARTS), default="all", show_default=True, help=PART_HELP)
@click.option(
    "--labels",
    type=click.Choice(["all", "good"]),
    default="all",
    show_default=True,
    help="good: keep only the steps labelled good (for datasets whose bad labels are not hijacks).",
)
@click.option(
    "--sample",
    type=click.IntRange(1),
    help="Keep this many trajectories at random: half with a bad step, half without, where there are enough.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="For --sample.")
@handle_errors
def data(dataset: str, source: Path, out: Path, part: str, labels: str, sample: int | None, seed: int) -> None:
    """Turn a public DATASET file into step-labelled trajectories (the rules are in overseer/lab/prm/datasets.py)."""
    import random

    from overseer.lab.prm import datasets

    reader = getattr(datasets, f"read_{dataset}")
    items = [i for i in reader(source) if part in ("all", datasets.part(i))]
    if labels == "good":
        items = [
            datasets.LabelledTrajectory(i.trajectory, {k: v for k, v in i.labels.items() if v == 1.0}) for i in items
        ]
        items = [i for i in items if i.labels]
    if sample is not None and sample < len(items):
        rng = random.Random(seed)
        flawed = [i for i in items if 0.0 in i.labels.values()]
        clean = [i for i in items if 0.0 not in i.labels.values()]
        k = min(len(flawed), sample // 2)
        items = rng.sample(flawed, k) + rng.sample(clean, min(len(clean), sample - k))
    n = datasets.write_labelled(items, out)
    console.print(f"{n} trajectories ({part}) -> {out}")


@prm_group.command("train")
@click.argument("data_files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Model directory to write."
)
@click.option(
    "--base", default="minilm", show_default=True, help="minilm (the PyPI-shipped MiniLM) or a model directory."
)
@click.option("--holdout-models", default="", help="Comma-separated agent models kept out of training, for evaluation.")
@click.option("--epochs", type=float, default=1.0, show_default=True)
@click.option("--batch-size", type=int, default=8, show_default=True)
@click.option("--lr", type=float, default=5e-5, show_default=True)
@click.option("--max-length", type=int, default=384, show_default=True)
@click.option("--max-minutes", type=float, help="Stop training after this long (CPU budgets).")
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    help="Stop after this many steps, the schedule planned for all (reproduces a run --max-minutes cut).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--provenance/--no-provenance",
    default=False,
    show_default=True,
    help="Render each call with where its arguments' identifiers first appeared (the model keeps the setting).",
)
@click.option("--layers", help="Keep only these layers of the base, e.g. 0,2,5: a shallower, faster student.")
@click.option(
    "--teacher",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A model directory whose logits the student learns to match (distillation).",
)
@click.option(
    "--hard-weight",
    type=click.FloatRange(0),
    default=0.1,
    show_default=True,
    help="With --teacher: the weight of the labels' loss beside matching the teacher.",
)
@handle_errors
def train_command(
    data_files: tuple[Path, ...],
    out: Path,
    base: str,
    holdout_models: str,
    epochs: float,
    batch_size: int,
    lr: float,
    max_length: int,
    max_minutes: float | None,
    max_steps: int | None,
    seed: int,
    provenance: bool,
    layers: str | None,
    teacher: Path | None,
    hard_weight: float,
) -> None:
    """Train a step scorer on step-labelled DATA_FILES; writes weights, metrics.json and a model card."""
    from overseer.lab.prm.datasets import read_labelled
    from overseer.lab.prm.train import TrainConfig, train

    items = [item for path in data_files for item in read_labelled(path)]
    config = TrainConfig(
        out=str(out),
        base=base,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        max_length=max_length,
        holdout_models=[m for m in holdout_models.split(",") if m],
        max_minutes=max_minutes,
        max_steps=max_steps,
        seed=seed,
        provenance=provenance,
        layers=_layers(layers),
        teacher=str(teacher) if teacher else None,
        hard_weight=hard_weight,
    )
    described = "\n".join(f"- `{p.name}`" for p in data_files)
    with Progress(
        TextColumn("training"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.4f}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
    ) as bar:
        task = bar.add_task("train", total=None, loss=float("nan"))

        def progress(step: int, total: int, loss: float) -> None:
            bar.update(task, completed=step, total=total, loss=loss)

        metrics = train(config, items, progress=progress, describe_data=described)
    click.echo(json.dumps(metrics, indent=2))


@prm_group.command("eval")
@click.argument("model")
@click.argument("data_files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--holdout-models", default="", help="Evaluate only these agent models (comma-separated).")
@click.option("--part", type=click.Choice(PARTS), default="all", show_default=True, help=PART_HELP)
@click.option("--threshold", type=float, default=0.5, show_default=True, help="Flag a step when P(good) is below this.")
@click.option(
    "--thresholds",
    default="",
    help="Comma-separated P(good) thresholds for the tool-call figures (the policy's; default: --threshold).",
)
@click.option(
    "--slide-keep",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.25,
    show_default=True,
    help="The scorer's slide_keep (share of the window a slide keeps).",
)
@click.option(
    "--policy",
    help="Also replay every trajectory under this policy (file or shipped name) and count its actions on tool calls.",
)
@click.option("--limit", type=int, help="Evaluate at most this many trajectories.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Write a PNG of one trajectory's scores.")
@click.option("--trajectory", "trajectory_id", help="The trajectory to plot (default: the first with a bad step).")
@handle_errors
def eval_command(
    model: str,
    data_files: tuple[Path, ...],
    holdout_models: str,
    part: str,
    threshold: float,
    thresholds: str,
    slide_keep: float,
    policy: str | None,
    limit: int | None,
    plot: Path | None,
    trajectory_id: str | None,
) -> None:
    """Evaluate MODEL on step-labelled DATA_FILES (JSON figures; steps scored as the policy's scorer does).

    AUROC, precision/recall, ProcessBench F1, best-of-N, and tool calls blocked per threshold.
    """
    from overseer.exceptions import ConfigError
    from overseer.lab.prm.datasets import part as part_of
    from overseer.lab.prm.datasets import read_labelled
    from overseer.lab.prm.evaluate import evaluate_items, plot_scores, policy_decisions
    from overseer.prm import load_step_model

    try:
        cuts = [float(t) for t in thresholds.split(",") if t.strip()]
    except ValueError:
        raise ConfigError(f"--thresholds {thresholds!r}: expected numbers separated by commas") from None
    wanted = {m for m in holdout_models.split(",") if m}
    items = [
        i
        for p in data_files
        for i in read_labelled(p)
        if (not wanted or i.trajectory.metadata.get("agent_model") in wanted) and part in ("all", part_of(i))
    ]
    items = items[:limit] if limit else items
    step_model = load_step_model(model)
    result = evaluate_items(step_model, items, threshold, thresholds=cuts, slide_keep=slide_keep)
    if policy is not None:
        result["under_policy"] = policy_decisions(policy, items)
    if plot is not None:
        chosen = next(
            (i for i in items if (i.trajectory.id == trajectory_id if trajectory_id else 0.0 in i.labels.values())),
            items[0] if items else None,
        )
        if chosen is not None:
            result["plot"] = str(plot_scores(step_model, chosen, plot, threshold))
    click.echo(json.dumps(result, indent=2))


def _import(target: str) -> object:
    import importlib

    from overseer.exceptions import ConfigError

    module_name, _, attr = target.partition(":")
    try:
        value: object = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError, ValueError) as err:
        raise ConfigError(f"cannot import {target!r} (expected package.module:function): {err}") from None
    return value


@prm_group.command("label")
@click.argument("trajectories", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--rollout", required=True, help="package.module:function(task, steps, rng) -> bool, continuing a prefix."
)
@click.option("--n", "rollouts", type=click.IntRange(1), default=8, show_default=True, help="Rollouts per step.")
@click.option("--estimate", type=click.Choice(["soft", "hard"]), default="soft", show_default=True)
@click.option("--judge", help="package.module:function(task, steps, index) -> P(good), for consensus filtering.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=int, default=0, show_default=True)
@handle_errors
def label(
    trajectories: Path, rollout: str, rollouts: int, estimate: str, judge: str | None, out: Path, seed: int
) -> None:
    """Label every agent step of TRAJECTORIES by Monte Carlo rollouts (Math-Shepherd)."""
    from overseer.lab.prm.datasets import write_labelled
    from overseer.lab.prm.label import mc_labels
    from overseer.readers import read_trajectories

    rollout_fn = _import(rollout)
    judge_fn = _import(judge) if judge else None
    items = (
        mc_labels(t, rollout_fn, n=rollouts, estimate=estimate, judge=judge_fn, seed=seed)  # type: ignore[arg-type]
        for t in read_trajectories(trajectories)
    )
    console.print(f"{write_labelled(items, out)} trajectories labelled -> {out}")


@prm_group.command("reviews")
@click.option(
    "--store", "store_url", help="Audit store URL [default: $OVERSEER_STORE or sqlite:///.overseer/audit.db]."
)
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@handle_errors
def reviews(store_url: str | None, out: Path) -> None:
    """Export reviewers' judgements from the audit store as step-labelled training data."""
    from overseer.lab.prm.datasets import write_labelled
    from overseer.lab.prm.label import review_labels
    from overseer.store import AuditStore, default_store_url

    with AuditStore(store_url or default_store_url()) as store:
        n = write_labelled(review_labels(store), out)
    console.print(f"{n} reviewed trajectories -> {out}")


@prm_group.command("synth")
@click.option(
    "--n", "scenarios", type=click.IntRange(1), default=1000, show_default=True, help="Scenarios to generate."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@handle_errors
def synth(scenarios: int, seed: int, out: Path) -> None:
    """Generate matched benign / hijacked / resisted / legitimate-use trajectories (overseer/lab/prm/synthetic.py)."""
    from overseer.lab.prm.datasets import write_labelled
    from overseer.lab.prm.synthetic import generate

    console.print(f"{write_labelled(generate(scenarios, seed), out)} trajectories -> {out}")


def _layers(value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r}: comma-separated layer numbers, such as 0,2,5") from None
