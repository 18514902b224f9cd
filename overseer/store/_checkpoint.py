"""Checkpoints: an anchor outside the database that the per-trajectory chains cannot give on their own.

A chain per trajectory shows an edited or removed record *inside* it, but not its own truncation (the last records
deleted), nor its disappearance (the whole trajectory deleted), nor a record whose hashes were set to NULL along
with its content. A checkpoint records, for every trajectory at one moment, how many records its chain had, the
hash it had reached, and digests of what the chain does not cover (the trajectory's task, agent, model, metadata
and start time; every score's label and explanation). Its **root** (a SHA-256 over all of that) is what the
operator keeps outside the database (printed, written to a file, sent as a span); ``verify --checkpoint`` then
proves that everything recorded up to the checkpoint is still there and unchanged.

What it does not prove: anything recorded after the checkpoint (take checkpoints regularly), or that the checkpoint
file itself is genuine unless its root is compared with the one kept elsewhere (``--root``). A database writer who
rewrites every record *and* every checkpoint the operator kept is not detected; keep roots where that writer has no
access (a ticket, a log service, a signed commit), as Certificate Transparency keeps signed tree heads.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from overseer.store._chain import ChainProblem, genesis

if TYPE_CHECKING:
    from overseer.store._contract import AuditStore

__all__ = ["checkpoint", "root_of", "verify_checkpoint"]


def _digest(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()
    ).hexdigest()


def _chain(store: AuditStore, trajectory_id: str) -> list[tuple[str, str, str | None]]:
    """The trajectory's records along its chain from the start: (name, hash, step id or None)."""
    by_prev: dict[str, tuple[str, str, str | None]] = {}
    for name, prev, stored, _ in store._chain_records(trajectory_id):
        if prev is not None and stored is not None and prev not in by_prev:
            step_id = name.rsplit("(", 1)[1].rstrip(")") if name.startswith("step ") else None
            by_prev[prev] = (name, stored, step_id)
    out = []
    current = genesis(trajectory_id)
    while current in by_prev:
        record = by_prev.pop(current)
        out.append(record)
        current = record[1]
    return out


def _entry(store: AuditStore, trajectory_id: str, length: int | None = None) -> dict[str, Any] | None:
    chain = _chain(store, trajectory_id)
    if length is not None:
        if len(chain) < length:
            return None
        chain = chain[:length]
    found = store.get_trajectory(trajectory_id)
    header = None
    scores: list[Any] = []
    if found is not None:
        trajectory, steps = found
        header = {"task": trajectory.task, "agent": trajectory.agent, "model": trajectory.model,
                  "metadata": trajectory.metadata, "started_at": trajectory.started_at}  # fmt: skip
        by_id = {s.id: s for s in steps}
        for _, _, step_id in chain:
            step = by_id.get(step_id) if step_id else None
            if step is not None:
                scores.append([[s.name, s.value, s.scorer, s.label, s.explanation] for s in step.scores])
    return {
        "length": len(chain),
        "head": chain[-1][1] if chain else genesis(trajectory_id),
        "header": _digest(header),
        "scores": _digest(scores),
    }


def root_of(trajectories: dict[str, Any]) -> str:
    """The checkpoint's root: one hash over every trajectory's entry."""
    return _digest(sorted(trajectories.items()))


def checkpoint(store: AuditStore) -> dict[str, Any]:
    """A checkpoint of every trajectory in the store (see the module docstring)."""
    entries = {}
    for trajectory_id in store.trajectory_ids():
        entry = _entry(store, trajectory_id)
        assert entry is not None
        entries[trajectory_id] = entry
    return {
        "version": 1,
        "store": store.url,
        "created_at": datetime.now(UTC).isoformat(),
        "trajectories": entries,
        "records": sum(e["length"] for e in entries.values()),
        "root": root_of(entries),
    }


def verify_checkpoint(store: AuditStore, cp: dict[str, Any], root: str | None = None) -> list[ChainProblem]:
    """Every way the store no longer holds what the checkpoint saw (empty: it holds all of it, unchanged)."""
    problems: list[ChainProblem] = []
    entries: dict[str, Any] = cp.get("trajectories") or {}
    computed = root_of(entries)
    if computed != cp.get("root"):
        problems.append(ChainProblem("-", "checkpoint", "the checkpoint file does not match its own root"))
    if root is not None and computed != root:
        problems.append(ChainProblem("-", "checkpoint", f"the checkpoint's root is not the one kept ({root[:12]}...)"))
    present = set(store.trajectory_ids())
    for trajectory_id, expected in sorted(entries.items()):
        if trajectory_id not in present:
            problems.append(ChainProblem(trajectory_id, "trajectory", "deleted: the checkpoint saw it"))
            continue
        now = _entry(store, trajectory_id, expected["length"])
        if now is None or now["head"] != expected["head"]:
            have = len(_chain(store, trajectory_id))
            problems.append(ChainProblem(trajectory_id, "chain", f"the checkpoint saw {expected['length']} chained "
                                         f"record(s) ending in {expected['head'][:12]}; the store's chain now has "
                                         f"{have} from the start (records deleted, or their hashes removed)"))  # fmt: skip
            continue
        if now["header"] != expected["header"]:
            problems.append(
                ChainProblem(trajectory_id, "trajectory", "task, agent, model, metadata or start time changed")
            )
        if now["scores"] != expected["scores"]:
            problems.append(ChainProblem(trajectory_id, "scores", "a score's value, label or explanation changed"))
    return problems
