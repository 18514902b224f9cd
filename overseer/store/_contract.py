"""The audit store's contract, and what every backend shares: hash chains, reviews, checkpoints.

``AuditStore(url)`` opens the backend the URL names: ``memory://NAME`` an in-memory store (for tests and dry
runs; one per name and process), anything else the SQL store (SQLite, PostgreSQL). Backends are known by dotted
name, so this module imports none of them. Every backend passes the same conformance suite
(``tests/test_store_conformance.py``).

Writes take audit records (the dicts :func:`overseer.store.span_to_record` makes from spans); reads give typed
records: :class:`StoredStep` (the :class:`~overseer.steps.Step` itself, its :class:`~overseer.Verdict` as
``.verdict``, its scores, each ``.to_score()`` a :class:`~overseer.steps.Score`),
:class:`StoredTrajectory`, :class:`~overseer.steps.Review` and :class:`ToolPin`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from overseer.steps import Review, Score, Step
from overseer.store._chain import ChainProblem, genesis, link, review_content, step_content, walk
from overseer.store._pins import ToolPin
from overseer.verdict import Action, Verdict

__all__ = [
    "DEFAULT_STORE_URL",
    "AuditStore",
    "StoredScore",
    "StoredStep",
    "StoredTrajectory",
    "default_store_url",
]

DEFAULT_STORE_URL = "sqlite:///.overseer/audit.db"

_BACKENDS: dict[str, str] = {
    "memory": "overseer.store._memory:MemoryAuditStore",
    "sql": "overseer.store._store:SqlAuditStore",
}

ChainRecord = tuple[str, str | None, str | None, dict[str, Any]]
"""One record of a trajectory's hash chain: (name, prev_hash, hash, the content the hash covers)."""


def default_store_url() -> str:
    """``$OVERSEER_STORE``, or an SQLite file under ``.overseer/`` in the working directory."""
    return os.environ.get("OVERSEER_STORE") or DEFAULT_STORE_URL


@dataclass(frozen=True, slots=True)
class StoredScore:
    """A score as stored."""

    name: str
    value: float
    scorer: str
    label: str | None = None
    explanation: str | None = None

    def to_score(self) -> Score:
        """The score as the pipeline speaks it."""
        return Score(
            name=self.name, value=self.value, scorer=self.scorer, label=self.label, explanation=self.explanation
        )


@dataclass(frozen=True, slots=True)
class StoredStep:
    """A decided step as stored, with its scores."""

    id: str
    trajectory_id: str
    index: int
    kind: str
    tool: str | None
    call_id: str | None
    action: str
    rule: str | None
    reason: str
    policy: str
    scorer: str
    halt: bool
    agent: str | None
    step: Step
    errors: dict[str, str] | None
    created_at: datetime
    latency_ms: float | None
    scores: tuple[StoredScore, ...] = ()
    spans: tuple[tuple[int, int], ...] | None = None
    """For ``sanitize``: the character spans removed before the model read the observation."""

    @property
    def verdict(self) -> Verdict:
        """The step's verdict as recorded (the reason as stored: masked where the policy redacts)."""
        return Verdict(
            trajectory_id=self.trajectory_id,
            index=self.index,
            step_id=self.id,
            kind=self.step.kind,
            tool=self.tool,
            call_id=self.call_id,
            scores={s.name: s.value for s in self.scores},
            action=cast(Action, self.action),
            rule=self.rule,
            reason=self.reason,
            policy=self.policy,
            scorer=self.scorer,
            halt=self.halt,
            errors=dict(self.errors or {}),
            spans=self.spans,
        )

    def verdict_record(self) -> dict[str, Any]:
        """The step's verdict in the JSON Lines format of ``overseer score``."""
        return {
            "trajectory_id": self.trajectory_id,
            "index": self.index,
            "kind": self.kind,
            "tool": self.tool,
            "call_id": self.call_id,
            "scores": {s.name: s.value for s in self.scores},
            "action": self.action,
            "rule": self.rule,
            "reason": self.reason,
            "policy": self.policy,
            "scorer": self.scorer,
            "halt": self.halt,
            **({"spans": [list(s) for s in self.spans]} if self.spans is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class StoredTrajectory:
    """A trajectory as stored."""

    id: str
    task: str | None
    agent: str | None
    model: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    status: str = "running"
    policy: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    n_steps: int | None = None
    n_blocked: int | None = None
    n_flagged: int | None = None
    n_escalated: int | None = None


class AuditStore:
    """Where every decision is kept for review. ``AuditStore(url)`` opens the backend the URL names.

    Writing a record twice changes nothing; reviews never overwrite one another; every trajectory's records form
    a hash chain that :meth:`verify` walks. A backend implements the methods under "what a backend provides"
    (each raises ``NotImplementedError`` here) and inherits the rest.
    """

    url: str

    def __new__(cls, url: str | None = None, *args: Any, **kwargs: Any) -> AuditStore:
        if cls is AuditStore:
            target = url or default_store_url()
            module, _, name = _BACKENDS["memory" if target.startswith("memory:") else "sql"].partition(":")
            cls = getattr(importlib.import_module(module), name)
        return super().__new__(cls)

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- what a backend provides ---------------------------------------------------------------------------

    @property
    def dialect(self) -> str:
        """The backend: ``sqlite``, ``postgresql`` or ``memory``."""
        raise NotImplementedError

    def migrate(self) -> None:
        """Bring the backend's schema up to date (nothing to do for a backend without one)."""

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        """Write audit records in one transaction. Writing a record twice changes nothing (no duplicates)."""
        raise NotImplementedError

    def list_steps(
        self,
        *,
        actions: Sequence[str] | None = None,
        rule: str | None = None,
        agent: str | None = None,
        tool: str | None = None,
        trajectory_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = 50,
        offset: int = 0,
        newest_first: bool = True,
        unreviewed: bool = False,
    ) -> list[StoredStep]:
        """Stored steps matching every given filter (``unreviewed``: steps that no review judges yet)."""
        raise NotImplementedError

    def get_step(self, step_id: str) -> StoredStep | None:
        """One stored step by its id."""
        raise NotImplementedError

    def has_trajectory(self, trajectory_id: str) -> bool:
        """Whether the store holds a trajectory (or a step of one) with this id."""
        raise NotImplementedError

    def get_trajectory(self, trajectory_id: str) -> tuple[StoredTrajectory, list[StoredStep]] | None:
        """A trajectory and its steps in order, or ``None`` when the store has neither."""
        raise NotImplementedError

    def list_trajectories(
        self, *, agent: str | None = None, status: str | None = None, limit: int | None = 50
    ) -> list[StoredTrajectory]:
        """Stored trajectories, newest first."""
        raise NotImplementedError

    def list_reviews(self, *, step_id: str | None = None, trajectory_id: str | None = None) -> list[Review]:
        """Reviews, oldest first, of one step or one trajectory (or all)."""
        raise NotImplementedError

    def trajectory_ids(self) -> list[str]:
        """Every trajectory id the store knows of (from trajectories, steps and reviews), sorted."""
        raise NotImplementedError

    def _hashes(self, trajectory_id: str) -> tuple[dict[str, tuple[str | None, str | None]], dict[str, Any]]:
        """The stored (prev_hash, hash) of a trajectory's steps and of its reviews, by record id."""
        raise NotImplementedError

    def tool_pins(self, server: str | None = None, tool: str | None = None) -> list[ToolPin]:
        """What MCP servers said about their tools, one row per distinct version (see ``overseer mcp pins``)."""
        raise NotImplementedError

    def pin_baseline(self, server: str, tool: str) -> ToolPin | None:
        """The accepted version of a tool seen last (``None``: never seen)."""
        raise NotImplementedError

    def record_tool_pin(self, pin: ToolPin) -> None:
        """Record a version of a tool as seen now (``accepted`` wins over ``refused``)."""
        raise NotImplementedError

    def accept_tool_pin(self, server: str, tool: str, pin: str | None = None) -> ToolPin:
        """Accept a refused version of a tool (the newest, or ``pin``); raises StoreError when there is none."""
        raise NotImplementedError

    def count(self, table: str = "steps") -> int:
        """How many records a table holds (``steps``, ``scores``, ``trajectories``, ``reviews`` or ``tool_pins``)."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of what the store holds open."""
        raise NotImplementedError

    # --- what every backend shares -------------------------------------------------------------------------

    def add_review(self, review: Review) -> None:
        """Record a review, chained after the last record of its trajectory (reviews never replace one another)."""
        content = review.model_dump(mode="json")
        prev = self.chain_tail(review.trajectory_id)
        self.write([{"type": "review", **content, "prev_hash": prev, "hash": link(prev, review_content(content))}])

    def _chain_records(self, trajectory_id: str) -> list[ChainRecord]:
        """A trajectory's records with their stored hashes and the content each hash must cover."""
        found = self.get_trajectory(trajectory_id)
        steps = found[1] if found else []
        hashes, review_hashes = self._hashes(trajectory_id)
        records: list[ChainRecord] = []
        for s in steps:
            prev, stored = hashes.get(s.id, (None, None))
            content = step_content(s.verdict_record(), s.step.model_dump(mode="json"))
            records.append((f"step {s.index} ({s.id})", prev, stored, content))
        for review in self.list_reviews(trajectory_id=trajectory_id):
            prev, stored = review_hashes.get(review.id, (None, None))
            records.append((f"review {review.id}", prev, stored, review_content(review.model_dump(mode="json"))))
        return records

    def chain_tail(self, trajectory_id: str) -> str:
        """The hash of the last record of a trajectory's chain (where the next record links)."""
        by_prev = {prev: stored for _, prev, stored, _ in self._chain_records(trajectory_id) if stored and prev}
        current = genesis(trajectory_id)
        while current in by_prev:
            current = by_prev.pop(current)
        return current

    def verify(self, trajectory_id: str | None = None) -> tuple[int, list[ChainProblem]]:
        """Check the hash chains (of one trajectory, or of all): how many records were checked, and the problems."""
        ids = [trajectory_id] if trajectory_id else self.trajectory_ids()
        checked = 0
        problems: list[ChainProblem] = []
        for tid in ids:
            records = self._chain_records(tid)
            checked += sum(1 for r in records if r[2] is not None)
            problems.extend(walk(tid, records))
        return checked, problems

    def checkpoint(self) -> dict[str, Any]:
        """An anchor to keep outside the database: see :mod:`overseer.store._checkpoint`."""
        from overseer.store._checkpoint import checkpoint

        return checkpoint(self)

    def verify_checkpoint(self, cp: dict[str, Any], root: str | None = None) -> list[ChainProblem]:
        """What the store no longer holds of what checkpoint ``cp`` saw (empty: all of it, unchanged)."""
        from overseer.store._checkpoint import verify_checkpoint

        return verify_checkpoint(self, cp, root)
