"""Untrusted text made safe to show: terminal escape sequences and control characters replaced."""

from __future__ import annotations

import re
from typing import Any

CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
    r"|[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"  # bidi controls: text that reads in another order than it runs
)


def printable(value: Any) -> Any:
    """``value`` with escape sequences and control characters (not tab or newline) shown as U+FFFD."""
    return CONTROL.sub("\N{REPLACEMENT CHARACTER}", value) if isinstance(value, str) else value


MAX_DEPTH = 64
"""JSON nested deeper than this is recorded as text (databases, JSON encoders and readers all have limits)."""


def clean_str(text: str) -> str:
    """``text`` as valid UTF-8 without NUL: lone surrogates and NUL become U+FFFD (databases refuse both)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\x00", "\N{REPLACEMENT CHARACTER}") if "\x00" in text else text


def clean_json(value: Any, depth: int = 0) -> Any:
    """A JSON value every database and encoder takes: strings cleaned, nesting past :data:`MAX_DEPTH` as text."""
    if isinstance(value, str):
        return clean_str(value)
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            return f"(nested deeper than {MAX_DEPTH} levels; cut)"
        return {clean_str(str(k)): clean_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            return f"(nested deeper than {MAX_DEPTH} levels; cut)"
        return [clean_json(v, depth + 1) for v in value]
    return value
