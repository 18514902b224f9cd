"""Fail closed for real: a scorer that blocks its thread, hostile text for every shipped pattern, bad results."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overseer import Observation, Overseer, ScoreRequest, ToolCall, Verdict
from overseer._threads import ModelExecutor
from overseer.patterns import DESTRUCTIVE, INJECTION, SECRETS
from overseer.scorers import BaseScorer, RulesScorer
from overseer.steps import Score

POLICY = {
    "version": 1,
    "name": "deadline",
    "on_scorer_error": "block",
    "scorer_timeout_s": 0.5,
    "scorers": {},
    "rules": [{"name": "aaa", "when": {"kind": "observation", "content": "(a+)+$"}, "action": "flag"}],
}


class Sleeper(BaseScorer):
    """An async scorer that blocks its event loop's thread (a classic mistake, or an attack on oversight)."""

    name = "sleeper"

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        time.sleep(3)  # noqa: ASYNC251 -- on purpose: the scorer blocks its loop
        return [{"sleeper": Score(name="sleeper", value=1.0, scorer="sleeper@0")} for _ in requests]


class Floats(BaseScorer):
    """Returns floats where Scores belong."""

    name = "floats"

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        return [{"x": 0.5} for _ in requests]  # type: ignore[dict-item]


def test_a_scorer_that_blocks_its_thread_is_cut_off_at_the_deadline_and_the_step_blocked() -> None:
    with Overseer(POLICY, scorers=[Sleeper()], store=None) as overseer, overseer.trajectory("t") as run:
        started = time.monotonic()
        verdict = run.judge(ToolCall(tool="send_money", args={"to": "x"}))
        took = time.monotonic() - started
    assert verdict.action == "block" and verdict.rule == "on_scorer_error"
    assert "no answer within 0.5 s" in verdict.reason
    assert took < 2.0, took  # the deadline, not the 3 s the scorer holds its thread


def test_wrong_results_fail_closed_instead_of_crashing() -> None:
    with Overseer(POLICY, scorers=[Floats()], store=None) as overseer, overseer.trajectory("t") as run:
        verdict = run.judge(ToolCall(tool="send_money", args={}))
    assert verdict.action == "block" and "where a mapping of name to Score belongs" in verdict.reason


def test_catastrophic_patterns_run_in_linear_time() -> None:
    scorer = RulesScorer()
    started = time.monotonic()
    request = ScoreRequest(
        trajectory_id="t", task="clean up", history=(), step=ToolCall(tool="shell", args={"command": "rm -" * 12500})
    )
    scorer.score_step(request)
    with Overseer(POLICY, scorers=[RulesScorer()], store=None) as overseer, overseer.trajectory("t") as run:
        verdict = run.judge(Observation(content="a" * 35 + "!"))
        verdict_long = run.judge(Observation(content="a" * 200_000 + "!"))
    assert verdict.action == "allow" and verdict_long.action == "allow"
    assert time.monotonic() - started < 5.0


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([p.regex for p in (*DESTRUCTIVE, *SECRETS, *INJECTION)]),
    st.text(alphabet="rm -fR/\\n:()|&;{}\"'aA0_@.", min_size=1, max_size=40),
    st.integers(min_value=100, max_value=3000),
)
def test_every_shipped_pattern_is_linear_on_repeated_adversarial_text(pattern: object, unit: str, times: int) -> None:
    started = time.monotonic()
    pattern.search(unit * times)  # type: ignore[attr-defined]
    assert time.monotonic() - started < 0.5


def test_the_issue_probe_from_the_command_line_ends_within_the_deadline(tmp_path: Path) -> None:
    probe = tmp_path / "r.jsonl"
    probe.write_text(
        json.dumps({"id": "r", "task": "clean up", "steps": [
            {"kind": "tool_call", "tool": "shell", "args": {"command": "rm -" * 12500}, "call_id": "c1"}]}) + "\n"
    )  # fmt: skip
    policy = tmp_path / "p.yaml"
    policy.write_text("version: 1\nname: rules-only\nscorers: {rules: {type: rules}}\nrules: []\n")
    started = time.monotonic()
    out = subprocess.run(
        [str(Path(sys.executable).parent / "overseer"), "score", str(probe), "--policy", str(policy), "--no-store", "-q", "--out", "-"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[0])["action"] == "allow"
    assert time.monotonic() - started < 30


def test_hostile_policies_are_refused_quickly_with_a_line(tmp_path: Path) -> None:
    from overseer import PolicyError, load_policy

    bomb = tmp_path / "bomb.yaml"
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    bomb.write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    with pytest.raises(PolicyError, match=r"line 2, column 10: .*aliases"):
        load_policy(bomb)
    recursive = tmp_path / "rec.yaml"
    recursive.write_text("a: &a [*a]\n")
    with pytest.raises(PolicyError, match="aliases"):
        load_policy(recursive)
    many = {"version": 1, "name": "many", "rules": [{"name": f"r{i}", "action": "flag"} for i in range(2001)]}
    with pytest.raises(PolicyError, match="2001 rules"):
        load_policy(many)
    assert time.monotonic() - started < 5


def test_csv_cells_cannot_become_formulas_and_bidi_controls_are_shown_inert() -> None:
    from overseer._text import printable
    from overseer.store.export import EXPORT_COLUMNS, render_export

    row = dict.fromkeys(EXPORT_COLUMNS, "")
    row["reason"] = '=HYPERLINK("http://evil.example")'
    assert b"'=HYPERLINK" in render_export([row], "csv")
    assert printable("pay \u202eevil\u202c now") == "pay \ufffdevil\ufffd now"


class SharedModel(BaseScorer):
    """A scorer whose model is one thread that every trajectory shares (as the shipped detector and PRM are).

    Each step costs ``cost`` seconds of the thread's time; ``stuck`` makes the first job hold it for 5 s.
    """

    name = "model"

    def __init__(self, cost: float, *, reports: bool = True, stuck: bool = False) -> None:
        self.cost, self.stuck = cost, stuck
        self.executor = ModelExecutor(1)
        self.jobs = 0
        if reports:
            self.progress = self.executor.progress  # type: ignore[method-assign]

    def _work(self) -> None:
        self.jobs += 1
        time.sleep(5 if self.stuck and self.jobs == 1 else self.cost)

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        await asyncio.get_running_loop().run_in_executor(self.executor, self._work)
        return [{"model": Score(name="model", value=1.0, scorer="model@0")} for _ in requests]

    async def aclose(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def _judge_at_once(scorer: BaseScorer, trajectories: int, **policy: float | None) -> tuple[list[Verdict], float]:
    async def run() -> tuple[list[Verdict], float]:
        with Overseer({**POLICY, "rules": [], **policy}, scorers=[scorer], store=None) as overseer:
            started = time.monotonic()

            async def one(n: int) -> Verdict:
                async with overseer.trajectory(f"read page {n}", id=f"t{n}") as run:
                    return await run.ajudge(Observation(content=f"page {n}"))

            verdicts = await asyncio.gather(*(one(n) for n in range(trajectories)))
            return list(verdicts), time.monotonic() - started

    return asyncio.run(run())


def test_a_step_queued_behind_other_steps_on_a_busy_model_waits_its_turn_instead_of_failing() -> None:
    # 8 steps at 0.2 s each on one model thread: the last waits about 1.6 s, past the 0.5 s deadline
    verdicts, _ = _judge_at_once(SharedModel(0.2, reports=False), 8)
    assert sum(v.rule == "on_scorer_error" for v in verdicts) >= 4  # without progress, the queue is a failure
    verdicts, took = _judge_at_once(SharedModel(0.2), 8)
    assert [v.action for v in verdicts] == ["allow"] * 8, [v.reason for v in verdicts]
    assert took >= 1.5  # each waited its turn
    # the queue has its own bound, past which a step fails closed however busy the model is
    verdicts, _ = _judge_at_once(SharedModel(0.2), 8, scorer_queue_s=0.7)
    assert {v.action for v in verdicts[:2]} == {"allow"}
    assert any(v.rule == "on_scorer_error" for v in verdicts[4:])


def test_a_model_stuck_on_one_job_fails_every_step_queued_behind_it_at_the_deadline() -> None:
    verdicts, took = _judge_at_once(SharedModel(0.01, stuck=True), 6)
    assert [v.rule for v in verdicts] == ["on_scorer_error"] * 6
    assert all("no answer within 0.5 s" in v.reason for v in verdicts)
    assert took < 3.0, took  # the deadline after the stuck job started, not its 5 s
