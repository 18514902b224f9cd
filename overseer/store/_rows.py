"""Audit records (the dicts spans become) as the rows of the SQL store's tables."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

__all__ = ["rows"]

Rows = list[dict[str, Any]]


def _from_ns(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, tz=UTC)


def _step_row(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": r["id"],
        "trajectory_id": r["trajectory_id"],
        "idx": r["idx"],
        "kind": r["kind"],
        "tool": r.get("tool"),
        "call_id": r.get("call_id"),
        "action": r["action"],
        "rule": r.get("rule"),
        "reason": r.get("reason", ""),
        "policy": r.get("policy", ""),
        "scorer": r.get("scorer", ""),
        "halt": bool(r.get("halt")),
        "agent": r.get("agent"),
        "step": r.get("step", {}),
        "errors": r.get("errors"),
        "spans": r.get("spans"),
        "created_at": _from_ns(r.get("created_at_ns")) or datetime.now(UTC),
        "latency_ms": r.get("latency_ms"),
        "trace_id": r.get("trace_id"),
        "span_id": r.get("span_id"),
        "prev_hash": r.get("prev_hash"),
        "hash": r.get("hash"),
    }


def _started_row(r: dict[str, Any]) -> dict[str, Any]:
    """A trajectory's row from its first step (which carries the task and metadata)."""
    info = r["trajectory"]
    meta = info.get("meta") or {}
    return {
        "id": r["trajectory_id"],
        "task": info.get("task"),
        "agent": r.get("agent"),
        "model": meta.get("model"),
        "meta": meta,
        "status": "running",
        "policy": r.get("policy"),
        "started_at": _from_ns(info.get("started_at_ns")),
        "trace_id": r.get("trace_id"),
    }


def _review_row(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": r["id"],
        "step_id": r["step_id"],
        "trajectory_id": r["trajectory_id"],
        "idx": r["index"],
        "reviewer": r["reviewer"],
        "reviewer_kind": r.get("reviewer_kind", "human"),
        "label": r["label"],
        "comment": r.get("comment"),
        "edited": r.get("edited"),
        "created_at": datetime.fromisoformat(r["at"]) if isinstance(r.get("at"), str) else datetime.now(UTC),
        "prev_hash": r.get("prev_hash"),
        "hash": r.get("hash"),
    }


def _ended_row(r: dict[str, Any]) -> dict[str, Any]:
    """A trajectory's row at its end (outcome and counts)."""
    return {
        "id": r["id"],
        "task": r.get("task"),
        "agent": r.get("agent"),
        "model": r.get("model"),
        "meta": r.get("meta"),
        "status": r.get("status", "completed"),
        "policy": r.get("policy"),
        "started_at": _from_ns(r.get("started_at_ns")),
        "ended_at": _from_ns(r.get("ended_at_ns")),
        "n_steps": r.get("n_steps"),
        "n_blocked": r.get("n_blocked"),
        "n_flagged": r.get("n_flagged"),
        "n_escalated": r.get("n_escalated"),
        "trace_id": r.get("trace_id"),
    }


def rows(records: Sequence[dict[str, Any]]) -> tuple[Rows, Rows, Rows, Rows, Rows]:
    """(steps, scores, trajectories started, reviews, trajectories ended) rows of a batch of records."""
    steps: Rows = []
    scores: Rows = []
    started: Rows = []
    reviews: Rows = []
    ended: Rows = []
    for r in records:
        kind = r.get("type")
        if kind == "step":
            steps.append(_step_row(r))
            scores.extend({"step_id": r["id"], **s} for s in r.get("scores", ()))
            if "trajectory" in r:
                started.append(_started_row(r))
        elif kind == "review":
            reviews.append(_review_row(r))
        elif kind == "trajectory":
            ended.append(_ended_row(r))
    return steps, scores, started, reviews, ended
