"""Masking secrets and personal data before a step is stored, sent as a span, or exported.

A policy's ``redact`` block says what to mask. Each masked value becomes ``[REDACTED:<label>:<tag>]``, where the
tag is a keyed hash (HMAC-SHA256, 8 hex digits) of the value: equal values get equal tags, so a reviewer can still
see that the address a call sends to is the one an observation planted, without seeing either. The key comes from
``$OVERSEER_REDACT_KEY`` (set it to keep tags stable across processes); without it each process draws a random key,
so tags cannot be reversed by guessing values offline.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Mapping
from typing import Any

from overseer._regex import compile_linear
from overseer._text import MAX_DEPTH, clean_json
from overseer.patterns import SECRETS
from overseer.policy import RedactSpec
from overseer.steps import Step, ToolCall, ToolChange

__all__ = ["Redactor"]

_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|\Z)")
_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_PHONE = re.compile(r"(?<![\w+])\+\d(?:[ .-]?\d){7,14}\b")


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


class Redactor:
    """Masks text, JSON values and steps as a :class:`RedactSpec` says."""

    def __init__(self, spec: RedactSpec, key: bytes | None = None) -> None:
        self.spec = spec
        env = os.environ.get("OVERSEER_REDACT_KEY")
        self._key = key or (env.encode() if env else secrets.token_bytes(32))
        patterns: list[tuple[str, Any]] = []
        if spec.secrets:
            patterns.append(("private-key", _PRIVATE_KEY))
            patterns += [(p.label, p.regex) for p in SECRETS if p.label != "private-key"]
        if spec.emails:
            patterns.append(("email", _EMAIL))
        if spec.phones:
            patterns.append(("phone", _PHONE))
        patterns += [(label, compile_linear(regex)) for label, regex in spec.patterns.items()]
        self._patterns = patterns
        self._names = (
            re.compile("|".join(fnmatch.translate(g.lower()) for g in spec.arg_names)) if spec.arg_names else None
        )
        # key: value pairs inside free text (``"password": "hunter2"``, ``token=abc``): the key must start a word
        # and its parts are bounded, so a long run of word characters costs linear time, not quadratic
        keys = [r"[\w-]{0,40}".join(re.escape(part) for part in g.lower().split("*")) for g in spec.arg_names]
        self._pairs = (
            re.compile(
                r"""(?i)((?<![\w-])["']?(?:"""
                + "|".join(keys)
                + r""")["']?[ \t]{0,4}[:=][ \t]{0,4}["']?)([^\s"',;&}]{3,200})"""
            )
            if keys
            else None
        )

    def mask(self, value: str, label: str) -> str:
        """The marker that replaces ``value``."""
        tag = hmac.new(self._key, value.encode(), hashlib.sha256).hexdigest()[:8]
        return f"[REDACTED:{label}:{tag}]"

    def text(self, text: str) -> str:
        """``text`` with every secret, card number and configured pattern masked."""
        if not text:
            return text
        for label, pattern in self._patterns:
            text = pattern.sub(lambda m, label=label: self.mask(m.group(0), label), text)
        if self.spec.cards:
            text = _CARD.sub(self._card, text)
        if self._pairs is not None:
            text = self._pairs.sub(self._pair, text)
        return text

    def _pair(self, m: re.Match[str]) -> str:
        """A ``key: value`` pair with its value masked, unless it is (or is inside) a marker already."""
        inside_marker = m.string.endswith("[REDACTED:", 0, m.start())
        if inside_marker or m.group(2).startswith("[REDACTED:"):
            return m.group(0)
        return m.group(1) + self.mask(m.group(2), "secret-field")

    def _card(self, match: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return self.mask(digits, "card")
        return match.group(0)

    def sensitive_name(self, name: str) -> bool:
        """Whether an argument or key called ``name`` has its value masked whole."""
        return self._names is not None and self._names.match(name.lower()) is not None

    def value(self, value: Any, depth: int = 0) -> Any:
        """A JSON value with sensitive keys' values masked whole and every string masked by pattern."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping | list | tuple) and depth >= MAX_DEPTH:
            return f"(nested deeper than {MAX_DEPTH} levels; cut)"
        if isinstance(value, Mapping):
            return {k: self._field(str(k), v, depth) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v, depth + 1) for v in value]
        return value

    def _field(self, name: str, value: Any, depth: int) -> Any:
        if self.sensitive_name(name) and value not in (None, ""):
            return self.mask(json.dumps(clean_json(value), sort_keys=True, default=str), "argument")
        return self.value(value, depth + 1)

    def step(self, step: Step) -> Step:
        """A copy of ``step`` with its text and arguments masked (the same step when nothing was)."""
        update: dict[str, Any]
        if isinstance(step, ToolCall):
            update = {"args": self.value(step.args)}
            if update["args"] == step.args:
                return step
        elif isinstance(step, ToolChange):
            update = {"before": self.text(step.before), "after": self.text(step.after)}
            if update["before"] == step.before and update["after"] == step.after:
                return step
        else:
            update = {"content": self.text(step.content)}
            if update["content"] == step.content:
                return step
        return step.model_copy(update=update)
