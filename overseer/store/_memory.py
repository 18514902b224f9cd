"""An audit store in memory: the reference fake of the contract (``memory://NAME``, or ``MemoryAuditStore()``).

For tests and dry runs: it keeps everything in this process, one store per name (``AuditStore("memory://a")``
twice gives two views of the same records, as two connections to one database would), and passes the same
conformance suite as the SQL store. Nothing survives the process.
"""

from __future__ import annotations

import copy
import json
import threading
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from overseer.exceptions import StoreError
from overseer.steps import Review, step_adapter
from overseer.store._contract import AuditStore, StoredScore, StoredStep, StoredTrajectory
from overseer.store._pins import ToolPin

__all__ = ["MemoryAuditStore"]


def _from_ns(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, tz=UTC)


class _Tables:
    """The records of one named store."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.steps: dict[str, dict[str, Any]] = {}
        self.scores: dict[tuple[str, str], dict[str, Any]] = {}
        self.trajectories: dict[str, dict[str, Any]] = {}
        self.reviews: dict[str, dict[str, Any]] = {}
        self.pins: dict[tuple[str, str, str], ToolPin] = {}


class MemoryAuditStore(AuditStore):
    """The audit store contract, in this process's memory."""

    _named: ClassVar[dict[str, _Tables]] = {}
    _named_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, url: str | None = None, **_options: Any) -> None:
        self.url = url if url and url.startswith("memory:") else f"memory://{uuid.uuid4().hex}"
        name = self.url.split(":", 1)[1].lstrip("/")
        with self._named_lock:
            self._t = self._named.setdefault(name, _Tables())

    def __repr__(self) -> str:
        return f"MemoryAuditStore({self.url!r})"

    @property
    def dialect(self) -> str:
        """Always ``memory``."""
        return "memory"

    # --- writing ---------------------------------------------------------------------------------------------

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        """Keep the records; a record kept before is not kept again (a trajectory's end updates its row)."""
        t = self._t
        staged = [json.loads(json.dumps(r, default=str)) for r in records]  # what a database would keep: JSON
        with t.lock:
            for r in staged:
                kind = r.get("type")
                if kind == "step":
                    self._write_step(r)
                elif kind == "review":
                    t.reviews.setdefault(r["id"], r)
                elif kind == "trajectory":
                    old = t.trajectories.get(r["id"], {})
                    t.trajectories[r["id"]] = {
                        **old,
                        **{k: v for k, v in r.items() if k not in ("type",)},
                        "started_at_ns": old.get("started_at_ns") or r.get("started_at_ns"),
                    }

    def _write_step(self, r: dict[str, Any]) -> None:
        t = self._t
        if r["id"] in t.steps:
            return
        t.steps[r["id"]] = {**r, "created_at": _from_ns(r.get("created_at_ns")) or datetime.now(UTC)}
        for score in r.get("scores", ()):
            t.scores.setdefault((r["id"], score["name"]), score)
        info = r.get("trajectory")
        if info is not None and r["trajectory_id"] not in t.trajectories:
            meta = info.get("meta") or {}
            t.trajectories[r["trajectory_id"]] = {
                "id": r["trajectory_id"],
                "task": info.get("task"),
                "agent": r.get("agent"),
                "model": meta.get("model"),
                "meta": meta,
                "status": "running",
                "policy": r.get("policy"),
                "started_at_ns": info.get("started_at_ns"),
            }

    # --- reading ---------------------------------------------------------------------------------------------

    def _step(self, row: dict[str, Any]) -> StoredStep:
        scores = [
            StoredScore(s["name"], s["value"], s.get("scorer", ""), s.get("label"), s.get("explanation"))
            for (step_id, _), s in self._t.scores.items()
            if step_id == row["id"]
        ]
        return StoredStep(
            id=row["id"],
            trajectory_id=row["trajectory_id"],
            index=row["idx"],
            kind=row["kind"],
            tool=row.get("tool"),
            call_id=row.get("call_id"),
            action=row["action"],
            rule=row.get("rule"),
            reason=row.get("reason", ""),
            policy=row.get("policy", ""),
            scorer=row.get("scorer", ""),
            halt=bool(row.get("halt")),
            agent=row.get("agent"),
            step=step_adapter.validate_python(copy.deepcopy(row.get("step", {}))),
            errors=row.get("errors"),
            created_at=row["created_at"],
            latency_ms=row.get("latency_ms"),
            scores=tuple(sorted(scores, key=lambda s: s.name)),
            spans=tuple((int(a), int(b)) for a, b in row["spans"]) if row.get("spans") is not None else None,
        )

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
        with self._t.lock:
            reviewed = {r["step_id"] for r in self._t.reviews.values()}
            rows = [
                r
                for r in self._t.steps.values()
                if (not actions or r["action"] in actions)
                and (rule is None or r.get("rule") == rule)
                and (agent is None or r.get("agent") == agent)
                and (tool is None or r.get("tool") == tool)
                and (trajectory_id is None or r["trajectory_id"] == trajectory_id)
                and (since is None or r["created_at"] >= since)
                and (until is None or r["created_at"] < until)
                and not (unreviewed and r["id"] in reviewed)
            ]
            rows.sort(key=lambda r: (r["created_at"], r["trajectory_id"], r["idx"]), reverse=newest_first)
            rows = rows[offset:] if limit is None else rows[offset : offset + limit]
            return [self._step(r) for r in rows]

    def get_step(self, step_id: str) -> StoredStep | None:
        """One stored step by its id."""
        with self._t.lock:
            row = self._t.steps.get(step_id)
            return self._step(row) if row is not None else None

    def has_trajectory(self, trajectory_id: str) -> bool:
        """Whether the store holds a trajectory (or a step of one) with this id."""
        with self._t.lock:
            return trajectory_id in self._t.trajectories or any(
                r["trajectory_id"] == trajectory_id for r in self._t.steps.values()
            )

    @staticmethod
    def _trajectory(row: dict[str, Any]) -> StoredTrajectory:
        return StoredTrajectory(
            id=row["id"],
            task=row.get("task"),
            agent=row.get("agent"),
            model=row.get("model"),
            metadata=row.get("meta") or {},
            status=row.get("status", "running"),
            policy=row.get("policy"),
            started_at=_from_ns(row.get("started_at_ns")),
            ended_at=_from_ns(row.get("ended_at_ns")),
            n_steps=row.get("n_steps"),
            n_blocked=row.get("n_blocked"),
            n_flagged=row.get("n_flagged"),
            n_escalated=row.get("n_escalated"),
        )

    def get_trajectory(self, trajectory_id: str) -> tuple[StoredTrajectory, list[StoredStep]] | None:
        """A trajectory and its steps in order, or ``None`` when the store has neither."""
        with self._t.lock:
            row = self._t.trajectories.get(trajectory_id)
            rows = sorted(
                (r for r in self._t.steps.values() if r["trajectory_id"] == trajectory_id), key=lambda r: r["idx"]
            )
            steps = [self._step(r) for r in rows]
        if row is None and not steps:
            return None
        if row is None:
            return StoredTrajectory(id=trajectory_id, task=None, agent=steps[0].agent, model=None), steps
        return self._trajectory(row), steps

    def list_trajectories(
        self, *, agent: str | None = None, status: str | None = None, limit: int | None = 50
    ) -> list[StoredTrajectory]:
        """Stored trajectories, newest first."""
        with self._t.lock:
            found = [
                self._trajectory(r)
                for r in self._t.trajectories.values()
                if (agent is None or r.get("agent") == agent) and (status is None or r.get("status") == status)
            ]
        oldest = datetime.min.replace(tzinfo=UTC)
        found.sort(key=lambda t: t.started_at or oldest, reverse=True)
        return found if limit is None else found[:limit]

    def list_reviews(self, *, step_id: str | None = None, trajectory_id: str | None = None) -> list[Review]:
        """Reviews, oldest first, of one step or one trajectory (or all)."""
        with self._t.lock:
            rows = [
                r
                for r in self._t.reviews.values()
                if (step_id is None or r["step_id"] == step_id)
                and (trajectory_id is None or r["trajectory_id"] == trajectory_id)
            ]
        rows.sort(key=lambda r: (r.get("at") or "", r["id"]))
        fields = set(Review.model_fields)
        return [Review.model_validate({k: v for k, v in r.items() if k in fields}) for r in rows]

    def trajectory_ids(self) -> list[str]:
        """Every trajectory id the store knows of (from trajectories, steps and reviews), sorted."""
        with self._t.lock:
            return sorted(
                set(self._t.trajectories)
                | {r["trajectory_id"] for r in self._t.steps.values()}
                | {r["trajectory_id"] for r in self._t.reviews.values()}
            )

    def _hashes(self, trajectory_id: str) -> tuple[dict[str, tuple[str | None, str | None]], dict[str, Any]]:
        with self._t.lock:
            steps = {
                r["id"]: (r.get("prev_hash"), r.get("hash"))
                for r in self._t.steps.values()
                if r["trajectory_id"] == trajectory_id
            }
            reviews = {
                r["id"]: (r.get("prev_hash"), r.get("hash"))
                for r in self._t.reviews.values()
                if r["trajectory_id"] == trajectory_id
            }
        return steps, reviews

    # --- tool pins -------------------------------------------------------------------------------------------

    def tool_pins(self, server: str | None = None, tool: str | None = None) -> list[ToolPin]:
        """Every version seen, by server and tool, oldest first."""
        with self._t.lock:
            pins = [
                p
                for p in self._t.pins.values()
                if (server is None or p.server == server) and (tool is None or p.tool == tool)
            ]
        oldest = datetime.min.replace(tzinfo=UTC)
        return sorted(pins, key=lambda p: (p.server, p.tool, p.first_seen or oldest))

    def pin_baseline(self, server: str, tool: str) -> ToolPin | None:
        """The accepted version of a tool seen last (``None``: never seen)."""
        accepted = [p for p in self.tool_pins(server, tool) if p.status == "accepted"]
        oldest = datetime.min.replace(tzinfo=UTC)
        return max(accepted, key=lambda p: p.last_seen or oldest) if accepted else None

    def record_tool_pin(self, pin: ToolPin) -> None:
        """Record a version of a tool as seen now (``accepted`` wins over ``refused``)."""
        now = datetime.now(UTC)
        key = (pin.server, pin.tool, pin.pin)
        with self._t.lock:
            known = self._t.pins.get(key)
            if known is None:
                self._t.pins[key] = ToolPin(
                    pin.server, pin.tool, pin.pin, pin.status, pin.description, pin.input_schema,
                    pin.trajectory_id, now, now,
                )  # fmt: skip
            else:
                status = "accepted" if "accepted" in (known.status, pin.status) else pin.status
                self._t.pins[key] = ToolPin(
                    known.server, known.tool, known.pin, status, known.description, known.input_schema,
                    known.trajectory_id, known.first_seen, now,
                )  # fmt: skip

    def accept_tool_pin(self, server: str, tool: str, pin: str | None = None) -> ToolPin:
        """Accept a refused version of a tool (the newest, or ``pin``); raises StoreError when there is none."""
        refused = [p for p in self.tool_pins(server, tool) if p.status == "refused" and (pin is None or p.pin == pin)]
        if not refused:
            what = f"version {pin} of " if pin else ""
            raise StoreError(
                f"no refused {what}tool {tool!r} of server {server!r} in the store (see `overseer mcp pins`)"
            )
        oldest = datetime.min.replace(tzinfo=UTC)
        chosen = max(refused, key=lambda p: p.last_seen or oldest)
        self.record_tool_pin(ToolPin(server, tool, chosen.pin, "accepted"))
        return self.pin_baseline(server, tool) or chosen

    def count(self, table: str = "steps") -> int:
        """How many records a table holds (``steps``, ``scores``, ``trajectories``, ``reviews`` or ``tool_pins``)."""
        tables: dict[str, Any] = {
            "steps": self._t.steps,
            "scores": self._t.scores,
            "trajectories": self._t.trajectories,
            "reviews": self._t.reviews,
            "tool_pins": self._t.pins,
        }
        with self._t.lock:
            return len(tables[table])

    def close(self) -> None:
        """Nothing to let go of: the records stay for other views of the same name until the process ends."""
