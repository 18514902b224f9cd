"""Regular expressions with a linear-time guarantee (RE2), for every pattern that scans agent or attacker text.

Python's ``re`` backtracks: ``(a+)+$`` on 35 characters, or a shipped pattern with nested repetition on a 50 KB
argument, holds the CPU (and the GIL, so no deadline can fire) for seconds to forever. RE2 (``google-re2``) runs in
time linear in the text and refuses the constructs that need backtracking (look-around, back-references), so a
pattern that would be a denial of service is rejected when the policy loads instead of hanging a step.
"""

from __future__ import annotations

from typing import Any, Protocol

import re2

__all__ = ["LinearPattern", "RegexError", "compile_linear"]

RegexError = re2.error
"""What :func:`compile_linear` raises for a pattern RE2 cannot run."""


class LinearPattern(Protocol):
    """The part of a compiled pattern that overseer uses (``re.Pattern`` has the same methods)."""

    @property
    def pattern(self) -> str:
        """The pattern's source."""
        ...

    def search(self, text: str) -> Any:
        """The first match, or ``None``."""
        ...

    def finditer(self, text: str) -> Any:
        """Every non-overlapping match."""
        ...

    def findall(self, text: str) -> Any:
        """Every non-overlapping match's text."""
        ...

    def sub(self, repl: Any, text: str) -> str:
        """``text`` with every match replaced."""
        ...


def _valid(text: str) -> str:
    """``text`` with lone surrogates (which RE2, working on UTF-8, cannot take) as U+FFFD, one for one."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class _Linear:
    """An RE2 pattern that also takes text with lone surrogates (agents send such text; offsets are kept)."""

    __slots__ = ("_re",)

    def __init__(self, compiled: Any) -> None:
        self._re = compiled

    @property
    def pattern(self) -> str:
        """The pattern's source."""
        return str(self._re.pattern)

    def search(self, text: str) -> Any:
        """The first match, or ``None``."""
        try:
            return self._re.search(text)
        except UnicodeEncodeError:
            return self._re.search(_valid(text))

    def finditer(self, text: str) -> Any:
        """Every non-overlapping match."""
        try:
            return list(self._re.finditer(text))
        except UnicodeEncodeError:
            return list(self._re.finditer(_valid(text)))

    def findall(self, text: str) -> Any:
        """Every non-overlapping match's text."""
        try:
            return self._re.findall(text)
        except UnicodeEncodeError:
            return self._re.findall(_valid(text))

    def sub(self, repl: Any, text: str) -> str:
        """``text`` with every match replaced."""
        try:
            return str(self._re.sub(repl, text))
        except UnicodeEncodeError:
            return str(self._re.sub(repl, _valid(text)))


def compile_linear(pattern: str, *, ignore_case: bool = False, multiline: bool = False) -> LinearPattern:
    """``pattern`` compiled by RE2; raises :data:`RegexError` for syntax RE2 does not run (look-around, ...)."""
    flags = ("i" if ignore_case else "") + ("m" if multiline else "")
    return _Linear(re2.compile(f"(?{flags}){pattern}" if flags else pattern))
