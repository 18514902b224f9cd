"""Untrusted text made safe to show: terminal escape sequences and control characters replaced."""

from __future__ import annotations

import re
from typing import Any

CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(value: Any) -> Any:
    """``value`` with escape sequences and control characters (not tab or newline) shown as U+FFFD."""
    return CONTROL.sub("\N{REPLACEMENT CHARACTER}", value) if isinstance(value, str) else value
