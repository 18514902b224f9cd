"""Re-audit: judge stored trajectories again under another policy or model, and report what would change.

The recorded decisions are never touched (nothing is written to the store). A job is cut into partitions of
trajectories that an engine runs (:mod:`overseer.engines`); each partition is replayed by :mod:`overseer.replay`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from overseer.engines import Checkpoint, make_engine
from overseer.policy import Policy, load_policy
from overseer.replay import Change, RescoreReport, merge_part, override_scorers, replay_part, select_trajectories
from overseer.store import AuditStore

__all__ = ["Change", "RescoreReport", "merge_part", "override_scorers", "replay_part", "rescore", "select_trajectories"]


def rescore(
    store: AuditStore,
    policy: Policy | str,
    *,
    trajectory_ids: Sequence[str] | None = None,
    since: datetime | None = None,
    limit: int | None = None,
    concurrency: int = 8,
    on_progress: Callable[[int, int], None] | None = None,
    engine: str = "local",
    workers: int = 1,
    partition_size: int = 64,
    checkpoint: str | Path | None = None,
) -> RescoreReport:
    """Judge the stored trajectories again under ``policy``; nothing is written to ``store``.

    The trajectories are cut into partitions of ``partition_size``; ``engine`` runs them: ``local`` (this process),
    ``processes`` (``workers`` processes on this machine) or ``ray`` (``workers`` actors on a Ray cluster:
    ``RAY_ADDRESS``, or a local one), each worker loading the policy's models once. With ``checkpoint`` (a folder),
    each finished partition is kept there, and a job run again with the same folder skips them. ``on_progress``
    gets (trajectories done, trajectories in all). The verdicts do not depend on the engine.
    """
    loaded = load_policy(policy)
    ids = select_trajectories(store, trajectory_ids, since, limit)
    parts = [ids[i : i + partition_size] for i in range(0, len(ids), max(1, partition_size))]
    report = RescoreReport(policy=loaded.id)
    saved = Checkpoint.open(checkpoint, loaded.id, parts) if checkpoint is not None else None
    done = 0
    todo: list[tuple[int, list[str]]] = []
    for index, part_ids in enumerate(parts):
        kept = saved.load(index) if saved is not None else None
        if kept is not None:
            merge_part(report, kept)
            done += len(part_ids)
        else:
            todo.append((index, part_ids))
    if saved is not None and done:
        report.resumed = len(parts) - len(todo)
    if on_progress is not None:
        on_progress(done, len(ids))
    runner = make_engine(engine, loaded, store, workers=workers, concurrency=concurrency)
    try:
        for index, part in runner.run(todo):
            if saved is not None:
                saved.save(index, part)
            merge_part(report, part)
            done += len(parts[index])
            if on_progress is not None:
                on_progress(done, len(ids))
    finally:
        runner.close()
    report.changes.sort(key=lambda c: (c.trajectory_id, c.index))
    return report
