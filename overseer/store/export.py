"""Stored decisions as plain records, and their export (JSON Lines, CSV, Parquet): shared by the CLI and the web page."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from overseer.exceptions import ConfigError, MissingDependencyError
from overseer.store._contract import AuditStore, StoredStep, StoredTrajectory

__all__ = ["EXPORT_COLUMNS", "FORMATS", "export_rows", "render_export", "step_json", "trajectory_json", "write_export"]

FORMATS = ("jsonl", "csv", "parquet")
EXPORT_COLUMNS = (
    "trajectory_id",
    "index",
    "step_id",
    "kind",
    "tool",
    "call_id",
    "action",
    "rule",
    "reason",
    "policy",
    "scorer",
    "halt",
    "agent",
    "created_at",
    "scores",
    "explanations",
    "reviews",
    "step",
)


def step_json(step: StoredStep) -> dict[str, Any]:
    """A stored step as one JSON object: its verdict, the step itself, errors, explanations, timing."""
    return {
        **step.verdict_record(),
        "step_id": step.id,
        "agent": step.agent,
        "created_at": step.created_at.isoformat(),
        "latency_ms": step.latency_ms,
        "errors": step.errors,
        "step": step.step.model_dump(mode="json"),
        "explanations": {s.name: s.explanation for s in step.scores if s.explanation},
    }


def trajectory_json(trajectory: StoredTrajectory) -> dict[str, Any]:
    """A stored trajectory's header as one JSON object."""
    return {
        "id": trajectory.id,
        "task": trajectory.task,
        "agent": trajectory.agent,
        "status": trajectory.status,
        "policy": trajectory.policy,
        "metadata": trajectory.metadata,
        "started_at": trajectory.started_at.isoformat() if trajectory.started_at else None,
        "ended_at": trajectory.ended_at.isoformat() if trajectory.ended_at else None,
    }


def export_rows(
    store: AuditStore, *, actions: Sequence[str] | None = None, since: datetime | None = None
) -> list[dict[str, Any]]:
    """Every matching decision, oldest first, with its reviews."""
    steps = store.list_steps(actions=actions or None, since=since, limit=None, newest_first=False)
    reviews: dict[str, list[dict[str, Any]]] = {}
    for r in store.list_reviews():
        reviews.setdefault(r.step_id, []).append(r.model_dump(mode="json"))
    return [{**step_json(s), "reviews": reviews.get(s.id, [])} for s in steps]


def _flat(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            k: (json.dumps(row.get(k), ensure_ascii=False) if isinstance(row.get(k), dict | list) else row.get(k))
            for k in EXPORT_COLUMNS
        }
        for row in rows
    ]


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text that starts like a formula gets a leading apostrophe (OWASP)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def render_export(rows: Sequence[dict[str, Any]], fmt: str) -> bytes:
    """The rows in ``fmt`` (``jsonl``, ``csv`` or ``parquet``), as bytes."""
    if fmt == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    if fmt == "csv":
        text = io.StringIO(newline="")
        writer = csv.DictWriter(text, fieldnames=EXPORT_COLUMNS)
        writer.writeheader()
        writer.writerows({k: _cell(v) for k, v in row.items()} for row in _flat(rows))
        return text.getvalue().encode()
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise MissingDependencyError("Parquet export", "parquet") from None
        sink = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(_flat(rows)), sink)
        return sink.getvalue()
    raise ConfigError(f"unknown export format {fmt!r}; one of {', '.join(FORMATS)}")


def write_export(rows: Sequence[dict[str, Any]], fmt: str, out: Path) -> None:
    """Write the rows to ``out`` in ``fmt``."""
    out.write_bytes(render_export(rows, fmt))
