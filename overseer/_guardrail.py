"""How a decision reads in the GenAI guardrail conventions, and the gate that keeps content out of exported spans.

One ``run_guardrail overseer`` span per decided step: its target (what was guarded), the verdict and the action
taken (``audit`` when nothing is enforced: observe-only runs and replays), the policy and rule, a reason with no
quoted values in it (the conventions forbid sensitive content there), and a risk category read from the scores
that drove the decision (OWASP LLM Top 10 names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event as SpanEvent
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from overseer import _semconv as sc

__all__ = [
    "ContentGate",
    "action_type",
    "capture_content",
    "public_reason",
    "risk_category",
    "target",
    "verdict_type",
]

_TARGETS: dict[str, tuple[str, str]] = {
    "tool_call": ("input", "tool_call"),  # the model's call, checked before the tool runs
    "observation": ("output", "tool_result"),  # a tool's output, checked before the model reads it
    "plan": ("output", "llm"),
    "final": ("output", "llm"),
    "message": ("input", "llm"),
    "tool_change": ("input", "tool_definition"),
}
_VERDICTS = {"allow": "allow", "flag": "warn", "sanitize": "modify", "block": "deny", "resample": "deny",
             "escalate": "escalate"}  # fmt: skip
_ACTIONS = {"allow": "allow", "flag": "warn", "sanitize": "modify", "block": "block", "resample": "retry",
            "escalate": "escalate"}  # fmt: skip
# score name -> risk category; the first score under 0.5 in this order names the risk
_RISKS = (
    ("detector", "prompt_injection"),
    ("rules.injection", "prompt_injection"),
    ("rules.secrets", "sensitive_information_disclosure"),
    ("rules.destructive", "excessive_agency"),
    ("rules.untrusted_target", "excessive_agency"),
    ("prm", "excessive_agency"),
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def target(kind: str) -> tuple[str, str]:
    """(target type, target subtype) of a step kind."""
    return _TARGETS.get(kind, ("input", kind))


def verdict_type(action: str) -> str:
    """The guardrail verdict of an overseer action."""
    return _VERDICTS.get(action, action)


def action_type(action: str, enforced: bool) -> str:
    """What was done: the action, or ``audit`` where the verdict was recorded and not applied."""
    return _ACTIONS.get(action, action) if enforced else "audit"


def risk_category(action: str, rule: str | None, scores: Mapping[str, float]) -> str | None:
    """The risk behind a decision that was not a plain allow, from the scores that were low."""
    if action == "allow":
        return None
    for name, category in _RISKS:
        if scores.get(name, 1.0) < 0.5:
            return category
    if rule and ("inject" in rule or "values-from" in rule):
        return "prompt_injection"
    if rule and "changed-tools" in rule:
        return "supply_chain"
    return None


def public_reason(reason: str) -> str:
    """The reason without the values it quotes (addresses, account numbers, arguments)."""
    return _QUOTED.sub("'…'", reason)


def capture_content() -> bool:
    """Whether the standard GenAI content switch is on (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``)."""
    return os.environ.get(sc.CONTENT_SWITCH, "").strip().lower() in ("1", "true", "yes", "on")


class ContentGate(SpanProcessor):
    """Hands spans to another processor without their content attributes (``_semconv.CONTENT_ATTRIBUTES``)."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.inner.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        attributes = span.attributes or {}
        if not any(key in attributes for key in sc.CONTENT_ATTRIBUTES):
            self.inner.on_end(span)
            return
        events = [SpanEvent(e.name, _strip(e.attributes), e.timestamp) if e.attributes else e for e in span.events]
        self.inner.on_end(
            ReadableSpan(
                name=span.name,
                context=span.context,
                parent=span.parent,
                resource=span.resource,
                attributes=_strip(attributes),
                events=events,
                links=span.links,
                kind=span.kind,
                status=span.status,
                start_time=span.start_time,
                end_time=span.end_time,
                instrumentation_scope=span.instrumentation_scope,
            )
        )

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def _strip(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if k not in sc.CONTENT_ATTRIBUTES and k != sc.EVALUATION_EXPLANATION}
