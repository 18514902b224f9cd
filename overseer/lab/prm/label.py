"""Step labels from Monte Carlo rollouts (Math-Shepherd) and from reviewers' judgements in the audit store.

**Rollouts.** For each agent step *i* (plans, tool calls, answers), a user-supplied rollout function continues
the trajectory from ``steps[: i + 1]`` ``n`` times and says whether each continuation reached a good outcome. The
*soft* estimate is the fraction that did (an estimate of the step's value, as AgentPRM uses); the *hard* estimate
is 1 when any did (Math-Shepherd's). With a second judge (``judge(task, steps, i) -> P(good)``), a label is kept
only when the judge agrees with it (both on the same side of 0.5): consensus filtering.

**Reviews.** Each reviewed step of the store becomes a labelled step of its trajectory: ``approve`` / ``good`` ->
1, ``reject`` / ``bad`` / ``edit`` (the step as proposed was wrong) -> 0; the latest human review wins, an automated
one counts only where no human reviewed.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

from overseer.lab.prm.datasets import LabelledTrajectory
from overseer.steps import Step, Trajectory
from overseer.store import AuditStore

__all__ = ["REVIEW_LABELS", "Rollout", "mc_labels", "review_labels"]

Rollout = Callable[[str, Sequence[Step], random.Random], "bool | Awaitable[bool]"]
Judge = Callable[[str, Sequence[Step], int], float]
ACTION_KINDS = frozenset({"plan", "tool_call", "final"})
REVIEW_LABELS = {"approve": 1.0, "good": 1.0, "correct": 1.0, "reject": 0.0, "bad": 0.0, "edit": 0.0, "wrong": 0.0,
                 "correct-block": 0.0, "wrong-block": 1.0, "missed": 0.0}  # fmt: skip


def _run(rollout: Rollout, task: str, prefix: Sequence[Step], rng: random.Random) -> bool:
    result = rollout(task, prefix, rng)
    if inspect.isawaitable(result):
        import asyncio

        return bool(asyncio.run(_await(result)))
    return bool(result)


async def _await(value: Awaitable[bool]) -> bool:
    return await value


def mc_labels(
    trajectory: Trajectory,
    rollout: Rollout,
    *,
    n: int = 8,
    estimate: Literal["soft", "hard"] = "soft",
    judge: Judge | None = None,
    kinds: Iterable[str] = ACTION_KINDS,
    seed: int = 0,
) -> LabelledTrajectory:
    """Label ``trajectory``'s steps by ``n`` rollouts from each (see the module docstring)."""
    wanted = frozenset(kinds)
    rng = random.Random(seed)
    labels: dict[int, float] = {}
    for i, step in enumerate(trajectory.steps):
        if step.kind not in wanted:
            continue
        prefix = trajectory.steps[: i + 1]
        wins = sum(_run(rollout, trajectory.task, prefix, rng) for _ in range(n))
        value = wins / n if estimate == "soft" else float(wins > 0)
        if judge is not None and (judge(trajectory.task, prefix, i) >= 0.5) != (value >= 0.5):
            continue  # the judges disagree: no label rather than a noisy one
        labels[i] = value
    return LabelledTrajectory(trajectory, labels)


def review_labels(store: AuditStore, *, trajectory_ids: Sequence[str] | None = None) -> Iterator[LabelledTrajectory]:
    """Reviewed trajectories of the store as labelled trajectories (see the module docstring)."""
    by_step: dict[str, Any] = {}
    for review in store.list_reviews():
        if review.label.lower() not in REVIEW_LABELS:
            continue
        if trajectory_ids is not None and review.trajectory_id not in trajectory_ids:
            continue
        current = by_step.get(review.step_id)
        human_over_automated = (
            current is not None and current.reviewer_kind == "human" and review.reviewer_kind != "human"
        )
        if not human_over_automated:
            by_step[review.step_id] = review  # reviews come oldest first: the latest wins
    wanted = sorted({r.trajectory_id for r in by_step.values()})
    for trajectory_id in wanted:
        found = store.get_trajectory(trajectory_id)
        if found is None:
            continue
        stored, steps = found
        labels = {s.index: REVIEW_LABELS[by_step[s.id].label.lower()] for s in steps if s.id in by_step}
        trajectory = Trajectory(
            id=stored.id,
            task=stored.task or "",
            steps=tuple(s.step for s in steps),
            metadata={
                **stored.metadata,
                "dataset": "reviews",
                "agent_model": stored.model or stored.agent or "unknown",
                "case": stored.id,
            },
        )
        yield LabelledTrajectory(trajectory, labels)
