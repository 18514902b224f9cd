"""Judging given trajectories as if replayed: one verdict per step, each step judged with its real history.

``overseer score``'s units of work: :func:`score_stream` judges a stream on this process (``concurrency``
trajectories at a time, verdicts in input order); :func:`score_part` judges one partition on an engine's worker
(:mod:`overseer.engines`); :mod:`overseer.score` cuts a job into partitions. A trajectory id that the store already
holds is a new run, ``id#2``: a re-run never duplicates a recorded one.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from overseer.steps import Trajectory
from overseer.verdict import Verdict

if TYPE_CHECKING:
    from overseer._pipeline import Overseer
    from overseer.store import AuditStore

__all__ = ["ScoreSummary", "free_id", "score_part", "score_stream"]


@dataclass
class ScoreSummary:
    """What a scoring job decided: steps by action, by rule, and how many trajectories."""

    actions: Counter[str] = field(default_factory=Counter)
    rules: Counter[str] = field(default_factory=Counter)
    trajectories: int = 0
    resumed_partitions: int = 0

    def add(self, record: dict[str, Any]) -> None:
        """Count one verdict record."""
        self.actions[record["action"]] += 1
        if record.get("rule"):
            self.rules[record["rule"]] += 1


async def _judge(overseer: Overseer, trajectory: Trajectory, trajectory_id: str) -> list[Verdict]:
    metadata = {**trajectory.metadata, "mode": trajectory.metadata.get("mode", "replay")}  # judged, not enforced
    handle = overseer.trajectory(trajectory.task, id=trajectory_id, metadata=metadata)
    async with handle:
        return [await handle.ajudge(step) for step in trajectory.steps]


def free_id(store: AuditStore | None, wanted: str, seen: Counter[str]) -> str:
    """``wanted``, or ``wanted#k`` for the k-th run of that id in this job or when the store holds it already."""
    seen[wanted] += 1
    ident = wanted if seen[wanted] == 1 else f"{wanted}#{seen[wanted]}"

    def taken(candidate: str) -> bool:
        if store is None:
            return False
        try:
            return store.has_trajectory(candidate)
        except Exception:  # a store that is down now: its records spill; ids are checked when it answers
            return False

    while taken(ident):
        seen[wanted] += 1
        ident = f"{wanted}#{seen[wanted]}"
    return ident


async def score_stream(
    overseer: Overseer,
    trajectories: Iterable[Trajectory],
    out: IO[str] | None,
    *,
    concurrency: int = 16,
    on_done: Callable[[int], None] | None = None,
) -> ScoreSummary:
    """Judge every trajectory on this process (``concurrency`` at a time), writing verdicts in input order."""
    summary = ScoreSummary()
    window: deque[asyncio.Task[list[Verdict]]] = deque()
    seen: Counter[str] = Counter()
    store = overseer.telemetry.store

    def emit(verdicts: list[Verdict]) -> None:
        for verdict in verdicts:
            record = verdict.to_record()
            summary.add(record)
            if out is not None:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        if on_done is not None:
            on_done(1)

    for trajectory in trajectories:
        ident = free_id(store, trajectory.id, seen)
        window.append(asyncio.create_task(_judge(overseer, trajectory, ident)))
        summary.trajectories += 1
        while len(window) >= concurrency or (window and window[0].done()):
            emit(await window.popleft())
    while window:
        emit(await window.popleft())
    return summary


def score_part(overseer: Overseer, items: Sequence[tuple[str, dict[str, Any]]], concurrency: int = 8) -> dict[str, Any]:
    """One partition (an engine's unit of work): ``(id, trajectory as JSON)`` pairs judged and recorded.

    Returns the verdicts as records, in order. An id the store already holds (a partition cut short by a kill, run
    again) is recorded as a new run, ``id#k``.
    """
    store = overseer.telemetry.store
    seen: Counter[str] = Counter()
    runs = [(free_id(store, ident, seen), Trajectory.model_validate(data)) for ident, data in items]

    async def main() -> list[list[Verdict]]:
        gate = asyncio.Semaphore(concurrency)

        async def one(ident: str, trajectory: Trajectory) -> list[Verdict]:
            async with gate:
                return await _judge(overseer, trajectory, ident)

        return await asyncio.gather(*(one(i, t) for i, t in runs))

    results = asyncio.run(main())
    return {"trajectories": len(runs), "verdicts": [v.to_record() for verdicts in results for v in verdicts]}
