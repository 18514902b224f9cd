"""What the review page shows of a step: its evidence, the labels that make sense for it, and how compact it is.

Plain data for the templates (autoescaped there): text cut into parts, never HTML built here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from overseer.steps import REVIEW_LABELS, Observation
from overseer.store import StoredStep

__all__ = ["LABELS_BY_ACTION", "highlight", "reason_parts", "results_by_call", "step_view"]

LABELS_BY_ACTION: dict[str, tuple[str, ...]] = {
    "escalate": ("approve", "reject", "correct-block", "wrong-block"),
    "block": ("correct-block", "wrong-block", "good", "bad"),
    "resample": ("correct-block", "wrong-block", "good", "bad"),
    "sanitize": ("correct-block", "wrong-block", "good", "bad"),
    "flag": ("correct-block", "wrong-block", "good", "bad"),
    "allow": ("missed", "good", "bad"),
}
"""The labels offered on a step by what the policy did: ``approve`` / ``reject`` answer an escalation only, so on a
blocked step nobody has to guess whether "approve" means the block or the action."""

_STEP_REF = re.compile(r"\bstep (\d+)\b")


def reason_parts(reason: str) -> list[tuple[str, int | None]]:
    """The reason cut into text and ``step N`` references (links to that step on the page)."""
    parts: list[tuple[str, int | None]] = []
    last = 0
    for match in _STEP_REF.finditer(reason):
        if match.start() > last:
            parts.append((reason[last : match.start()], None))
        parts.append((match.group(0), int(match.group(1))))
        last = match.end()
    if last < len(reason):
        parts.append((reason[last:], None))
    return parts


def highlight(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[str, bool]]:
    """``text`` cut into parts, each marked when it lies inside one of ``spans`` ([start, end) characters)."""
    parts: list[tuple[str, bool]] = []
    last = 0
    for start, end in sorted((max(0, a), min(len(text), b)) for a, b in spans):
        if end <= last:
            continue
        start = max(start, last)
        if start > last:
            parts.append((text[last:start], False))
        parts.append((text[start:end], True))
        last = end
    if last < len(text):
        parts.append((text[last:], False))
    return parts


def results_by_call(steps: Sequence[StoredStep]) -> dict[str, StoredStep]:
    """Each tool call's result (the observation with its call id), to show beside the call."""
    return {s.call_id: s for s in steps if s.kind == "observation" and s.call_id}


def step_view(step: StoredStep, reviewed: bool, result: StoredStep | None = None) -> dict[str, Any]:
    """How the page shows one step: compact when it was simply allowed and nobody judged it yet.

    A tool call carries its result (``result``: the observation of the same call id), shown beside it.
    """
    observation = step.step if isinstance(step.step, Observation) else None
    content = observation.content if observation is not None else step.step.text()  # spans index the raw output
    spans = step.spans or () if observation is not None else ()
    labels = LABELS_BY_ACTION.get(step.action, ("good", "bad"))
    return {
        "compact": step.action == "allow" and not step.halt and not reviewed,
        "content": highlight(content, spans),
        "removed": len(spans),
        "reason": reason_parts(step.reason),
        "labels": [(label, REVIEW_LABELS[label]) for label in labels],
        "result": None
        if result is None or step.kind != "tool_call"
        else {"index": result.index, "action": result.action, "text": _clip(result.step.text(), 1200)},
    }


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
