"""A rule's conditions in words, for people reading decisions (the CLI's policy table, the review page)."""

from __future__ import annotations

from overseer.policy._model import Rule

__all__ = ["describe_when"]


def describe_when(rule: Rule) -> str:
    """The rule's conditions in one line of words (what ``overseer policy check`` and the review page show)."""
    when = rule.when
    parts: list[str] = []
    if when.kind is not None:
        parts.append(f"kind {when.kind if isinstance(when.kind, str) else ' | '.join(when.kind)}")
    if when.tool is not None:
        parts.append(f"tool {when.tool if isinstance(when.tool, str) else ' | '.join(when.tool)}")
    for name, bound in (when.score or {}).items():
        if bound.below is not None:
            parts.append(f"{name} < {bound.below}")
        if bound.above is not None:
            parts.append(f"{name} > {bound.above}")
    if when.content:
        parts.append(f"text ~ /{when.content}/")
    for key, regex in (when.args or {}).items():
        parts.append(f"arg {key} ~ /{regex}/")
    if when.args_from is not None:
        parts.append("args carry a value first seen in an earlier matching step")
    if when.after is not None:
        parts.append("after an earlier matching step")
    if when.not_after is not None:
        parts.append("before any earlier matching step")
    if when.repeated is not None:
        parts.append(f"same call made {when.repeated}+ times before")
    return ", ".join(parts) or "every step"
