"""``overseer score`` on an engine: a file of trajectories cut into partitions that workers judge and record.

On another engine than this process (:mod:`overseer.engines`: worker processes on this machine, or a Ray
cluster) each worker loads the policy's models once, judges partition after partition (:func:`overseer.batch.
score_part`) and records its decisions in the audit store itself; this process writes the verdicts in input order
as the partitions come back. With a checkpoint folder each finished partition is kept, and a job run again skips
them. Trajectory ids are given out once per job and kept in the checkpoint, so a resumed job writes the same ids.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from overseer.batch import ScoreSummary, free_id
from overseer.engines import Checkpoint, make_engine
from overseer.policy import Policy
from overseer.steps import Trajectory
from overseer.store import AuditStore

__all__ = ["score_trajectories"]


def score_trajectories(
    trajectories: Iterable[Trajectory],
    policy: Policy,
    *,
    store: AuditStore | None,
    out: IO[str] | None,
    engine: str = "processes",
    workers: int = 2,
    partition_size: int = 64,
    concurrency: int = 8,
    checkpoint: str | Path | None = None,
    on_done: Callable[[int], None] | None = None,
) -> ScoreSummary:
    """Judge every trajectory on ``engine`` in partitions of ``partition_size``; verdicts written in input order.

    Each worker records its own decisions in ``store`` (by URL; ``None``: nothing recorded). With ``checkpoint``
    (a folder), finished partitions are kept there and skipped when the same job runs again.
    """
    items = _numbered(trajectories, store, checkpoint)
    parts = [items[i : i + partition_size] for i in range(0, len(items), max(1, partition_size))]
    saved = None
    if checkpoint is not None:
        saved = Checkpoint.open(checkpoint, policy.id, [[_key(ident, data) for ident, data in part] for part in parts])
        if not (saved.folder / "ids.json").exists():
            saved.keep("ids", [ident for ident, _ in items])
    summary = ScoreSummary(trajectories=len(items))
    finished: dict[int, dict[str, Any]] = {}
    todo: list[tuple[int, Any]] = []
    for index, part in enumerate(parts):
        kept = saved.load(index) if saved is not None else None
        if kept is not None:
            finished[index] = kept
            summary.resumed_partitions += 1
            if on_done is not None:
                on_done(len(part))
        else:
            todo.append((index, part))
    written = 0

    def flush() -> None:
        nonlocal written
        while written in finished:
            for record in finished.pop(written)["verdicts"]:
                summary.add(record)
                if out is not None:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1

    flush()
    if todo:
        runner = make_engine(engine, policy, store, workers=workers, concurrency=concurrency, work="score")
        try:
            for index, result in runner.run(todo):
                if saved is not None:
                    saved.save(index, result)
                finished[index] = result
                if on_done is not None:
                    on_done(len(parts[index]))
                flush()
        finally:
            runner.close()
    flush()
    return summary


def _numbered(
    trajectories: Iterable[Trajectory], store: AuditStore | None, checkpoint: str | Path | None
) -> list[tuple[str, dict[str, Any]]]:
    """Each trajectory with the id it is recorded under; a resumed job takes the ids its first run gave out."""
    kept = Path(checkpoint) / "ids.json" if checkpoint is not None else None
    given: list[str] | None = json.loads(kept.read_text()) if kept is not None and kept.exists() else None
    seen: Counter[str] = Counter()
    items: list[tuple[str, dict[str, Any]]] = []
    for n, trajectory in enumerate(trajectories):
        ident = given[n] if given is not None and n < len(given) else free_id(store, trajectory.id, seen)
        items.append((ident, trajectory.model_dump(mode="json")))
    return items


def _key(ident: str, data: dict[str, Any]) -> str:
    """What a checkpoint knows a trajectory by: its id and its content (step ids left out: a reader makes them up)."""
    content = {**data, "id": None, "steps": [{k: v for k, v in step.items() if k != "id"} for step in data["steps"]]}
    return f"{ident}:{hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]}"
