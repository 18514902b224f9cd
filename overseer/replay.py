"""Re-audit's unit of work: replay one partition of stored trajectories under a policy and compare the verdicts.

:mod:`overseer.engines` runs partitions (in this process, in worker processes, on Ray); :mod:`overseer.rescore`
splits a job into partitions, resumes it from a checkpoint and merges the findings. The recorded decisions are never touched: the replay runs without an audit store (nothing is written), each step
with the history it had, and its new verdict is compared with the stored one.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import yaml

from overseer._pipeline import Overseer
from overseer.exceptions import ConfigError
from overseer.policy import Policy, policy_from_dict
from overseer.steps import Trajectory
from overseer.store import AuditStore, StoredStep

__all__ = ["Change", "RescoreReport", "merge_part", "override_scorers", "replay_part", "select_trajectories"]


@dataclass(frozen=True, slots=True)
class Change:
    """A step whose decision differs under the new policy."""

    trajectory_id: str
    index: int
    step_id: str
    kind: str
    tool: str | None
    before: str
    before_rule: str | None
    after: str
    after_rule: str | None
    after_reason: str

    @property
    def change(self) -> str:
        """``newly blocked``, ``newly allowed`` or ``changed``."""
        if self.after == "block":
            return "newly blocked"
        if self.after == "allow":
            return "newly allowed"
        return "changed"

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object."""
        return {**asdict(self), "change": self.change}


@dataclass
class RescoreReport:
    """What a re-audit found."""

    policy: str
    trajectories: int = 0
    steps: int = 0
    changes: list[Change] = field(default_factory=list)
    transitions: Counter[tuple[str, str]] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)
    """Trajectories that could not be replayed, with why."""
    resumed: int = 0
    """Partitions taken from a checkpoint of an earlier run of the same job, not judged again."""

    @property
    def newly_blocked(self) -> int:
        """Steps now blocked that were not."""
        return sum(1 for c in self.changes if c.change == "newly blocked")

    @property
    def newly_allowed(self) -> int:
        """Steps now allowed that were not."""
        return sum(1 for c in self.changes if c.change == "newly allowed")

    def summary(self) -> dict[str, Any]:
        """Counts: trajectories, steps, changes, and every recorded -> new action pair."""
        return {
            "policy": self.policy,
            "trajectories": self.trajectories,
            "steps": self.steps,
            "changed": len(self.changes),
            "newly_blocked": self.newly_blocked,
            "newly_allowed": self.newly_allowed,
            "transitions": {f"{a}->{b}": n for (a, b), n in sorted(self.transitions.items())},
            "skipped": self.skipped,
            "resumed_partitions": self.resumed,
        }

    def to_json(self) -> dict[str, Any]:
        """The summary and every change."""
        return {"summary": self.summary(), "changes": [c.to_json() for c in self.changes]}


def override_scorers(policy: Policy, overrides: Iterable[str]) -> Policy:
    """Apply ``NAME.KEY=VALUE`` overrides to the policy's scorers (VALUE is read as YAML: numbers, true, lists)."""
    data = policy.model_dump(mode="json", exclude_none=True)
    for item in overrides:
        target, sep, raw = item.partition("=")
        name, dot, key = target.partition(".")
        if not sep or not dot or not name or not key:
            raise ConfigError(f"--scorer {item!r}: expected NAME.KEY=VALUE, e.g. prm.model=./my-model")
        if name not in data["scorers"]:
            known = ", ".join(sorted(data["scorers"])) or "none"
            raise ConfigError(f"--scorer {item!r}: the policy has no scorer {name!r} (it has: {known})")
        data["scorers"][name][key] = yaml.safe_load(raw)
    return policy_from_dict(data)


def _replayable(steps: Sequence[StoredStep]) -> tuple[list[StoredStep], int]:
    """The run's steps in order, one per index (a store that holds the same id twice keeps the first run)."""
    seen: set[int] = set()
    kept = []
    for s in sorted(steps, key=lambda s: (s.index, s.created_at)):
        if s.index not in seen:
            seen.add(s.index)
            kept.append(s)
    return kept, len(steps) - len(kept)


async def _replay(overseer: Overseer, trajectory: Trajectory) -> list[Any]:
    async with overseer.trajectory(trajectory.task, id=trajectory.id, metadata=trajectory.metadata) as run:
        return [await run.ajudge(step) for step in trajectory.steps]


def select_trajectories(
    store: AuditStore, trajectory_ids: Sequence[str] | None = None, since: datetime | None = None,
    limit: int | None = None,
) -> list[str]:  # fmt: skip
    """The ids a re-audit covers, in a stable order (so that partitions are the same when a job is run again)."""
    if trajectory_ids:
        ids = list(trajectory_ids)
    else:
        listed = store.list_trajectories(limit=None)
        ids = [t.id for t in listed if since is None or (t.started_at or since) >= since]
    return ids[:limit] if limit is not None else ids


def replay_part(
    overseer: Overseer, store: AuditStore, ids: Sequence[str], concurrency: int = 8,
    on_trajectory: Callable[[], None] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Judge one partition of stored trajectories again; what changed, as JSON (an engine's unit of work).

    Each trajectory is read in a short transaction of its own; nothing is written to ``store``.
    """
    part: dict[str, Any] = {"trajectories": 0, "steps": 0, "changes": [], "transitions": Counter(), "skipped": []}
    runs: list[tuple[Trajectory, list[StoredStep]]] = []
    for ident in ids:
        found = store.get_trajectory(ident)
        if found is None:
            part["skipped"].append(f"{ident}: not in the store")
            continue
        header, stored = found
        steps, dropped = _replayable(stored)
        if dropped:
            part["skipped"].append(f"{ident}: {dropped} step(s) recorded twice under the same index; the first kept")
        if not steps:
            continue
        trajectory = Trajectory(
            id=ident, task=header.task or "", metadata=header.metadata, steps=tuple(s.step for s in steps)
        )
        runs.append((trajectory, steps))

    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(trajectory: Trajectory, stored: list[StoredStep]) -> None:
            async with gate:
                verdicts = await _replay(overseer, trajectory)
            for before, after in zip(stored, verdicts, strict=True):
                part["steps"] += 1
                part["transitions"][f"{before.action}->{after.action}"] += 1
                if before.action != after.action:
                    change = Change(
                        trajectory_id=before.trajectory_id,
                        index=before.index,
                        step_id=before.id,
                        kind=before.kind,
                        tool=before.tool,
                        before=before.action,
                        before_rule=before.rule,
                        after=after.action,
                        after_rule=after.rule,
                        after_reason=after.reason,
                    )
                    part["changes"].append(asdict(change))
            part["trajectories"] += 1
            if on_trajectory is not None:
                on_trajectory()

        await asyncio.gather(*(one(t, s) for t, s in runs))

    asyncio.run(main())
    part["transitions"] = dict(part["transitions"])
    return part


def merge_part(report: RescoreReport, part: dict[str, Any]) -> None:
    """Add one partition's findings to the report."""
    report.trajectories += part["trajectories"]
    report.steps += part["steps"]
    report.changes.extend(Change(**c) for c in part["changes"])
    for pair, n in part["transitions"].items():
        before, _, after = pair.partition("->")
        report.transitions[(before, after)] += n
    report.skipped.extend(part["skipped"])
