"""Audit records: the plain-JSON form of a step or trajectory span, as the store writes it and the spill keeps it."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from overseer import _semconv as sc

__all__ = ["span_to_record"]


def _json(value: Any, default: Any) -> Any:
    if not isinstance(value, str):
        return default
    try:
        return json.loads(value)
    except ValueError:
        return default


def span_to_record(span: ReadableSpan) -> dict[str, Any] | None:
    """The audit record of an overseer span, or ``None`` for any other span."""
    attrs = span.attributes or {}
    kind = attrs.get(sc.RECORD)
    ctx = span.context
    trace_id = format(ctx.trace_id, "032x") if ctx else None
    if kind == "step":
        record: dict[str, Any] = {
            "type": "step",
            "id": attrs[sc.STEP_ID],
            "trajectory_id": attrs[sc.TRAJECTORY_ID],
            "idx": attrs[sc.STEP_INDEX],
            "kind": attrs[sc.STEP_KIND],
            "tool": attrs.get(sc.TOOL_NAME),
            "call_id": attrs.get(sc.TOOL_CALL_ID),
            "action": attrs[sc.VERDICT_ACTION],
            "rule": attrs.get(sc.VERDICT_RULE),
            "reason": attrs.get(sc.VERDICT_REASON, ""),
            "policy": attrs.get(sc.POLICY, ""),
            "scorer": attrs.get(sc.SCORER, ""),
            "halt": bool(attrs.get(sc.VERDICT_HALT, False)),
            "agent": attrs.get(sc.AGENT_NAME),
            "step": _json(attrs.get(sc.STEP_JSON), {}),
            "errors": _json(attrs.get(sc.VERDICT_ERRORS), None),
            "spans": _json(attrs.get(sc.VERDICT_SPANS), None),
            "created_at_ns": span.end_time or span.start_time,
            "latency_ms": attrs.get(sc.LATENCY_MS),
            "trace_id": trace_id,
            "span_id": format(ctx.span_id, "016x") if ctx else None,
            "prev_hash": attrs.get(sc.CHAIN_PREV),
            "hash": attrs.get(sc.CHAIN_HASH),
            "scores": [
                {
                    "name": e.attributes.get(sc.EVALUATION_NAME),
                    "value": e.attributes.get(sc.EVALUATION_SCORE),
                    "label": e.attributes.get(sc.EVALUATION_LABEL),
                    "explanation": e.attributes.get(sc.EVALUATION_EXPLANATION),
                    "scorer": e.attributes.get(sc.SCORER, ""),
                }
                for e in span.events
                if e.name == sc.EVALUATION_EVENT and e.attributes
            ],
        }
        if sc.TRAJECTORY_TASK in attrs:  # the first step carries its trajectory, in case the run never ends
            record["trajectory"] = {
                "task": attrs[sc.TRAJECTORY_TASK],
                "meta": _json(attrs.get(sc.TRAJECTORY_META), {}),
                "started_at_ns": attrs.get(sc.TRAJECTORY_STARTED),
            }
        return record
    if kind == "review":
        review = _json(attrs.get(sc.REVIEW_JSON), None)
        if not isinstance(review, dict):
            return None
        return {"type": "review", **review, "prev_hash": attrs.get(sc.CHAIN_PREV), "hash": attrs.get(sc.CHAIN_HASH)}
    if kind == "trajectory":
        meta = _json(attrs.get(sc.TRAJECTORY_META), {})
        counts = _json(attrs.get(sc.TRAJECTORY_COUNTS), {})
        return {
            "type": "trajectory",
            "id": attrs[sc.TRAJECTORY_ID],
            "task": attrs.get(sc.TRAJECTORY_TASK),
            "agent": attrs.get(sc.AGENT_NAME),
            "model": attrs.get(sc.REQUEST_MODEL),
            "meta": meta,
            "status": attrs.get(sc.TRAJECTORY_STATUS, "completed"),
            "policy": attrs.get(sc.POLICY),
            "started_at_ns": span.start_time,
            "ended_at_ns": span.end_time,
            "n_steps": counts.get("steps", 0),
            "n_blocked": counts.get("block", 0),
            "n_flagged": counts.get("flag", 0),
            "n_escalated": counts.get("escalate", 0),
            "trace_id": trace_id,
        }
    return None
