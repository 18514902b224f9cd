"""Tamper evidence: every step and review of a trajectory is chained by SHA-256 to the record before it.

``hash = sha256(prev_hash + canonical JSON of the record's content)``; the first record of a trajectory chains to
``sha256("overseer:" + trajectory id)``. The content is what a reviewer relies on: for a step, its verdict record
and the step itself; for a review, the review. :func:`verify` recomputes every hash and walks each chain from its
start, so an edited record (its hash no longer matches), a deleted one (the chain breaks) and a reordered one (its
index is part of what was hashed) are each found and named.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["ChainProblem", "genesis", "link", "review_content", "step_content", "walk"]


def genesis(trajectory_id: str) -> str:
    """The hash a trajectory's first record chains to."""
    return hashlib.sha256(f"overseer:{trajectory_id}".encode()).hexdigest()


def _canonical(content: dict[str, Any]) -> bytes:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def link(prev_hash: str, content: dict[str, Any]) -> str:
    """The hash of a record with this content after ``prev_hash``."""
    return hashlib.sha256(prev_hash.encode() + _canonical(content)).hexdigest()


def step_content(verdict: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
    """What a step's hash covers."""
    return {"record": "step", "verdict": verdict, "step": step}


def review_content(review: dict[str, Any]) -> dict[str, Any]:
    """What a review's hash covers."""
    return {"record": "review", **{k: v for k, v in review.items() if k != "type"}}


@dataclass(frozen=True)
class ChainProblem:
    """A record that does not fit its trajectory's chain."""

    trajectory_id: str
    record: str
    """``step <index> (<id>)`` or ``review <id>``."""
    problem: str


def walk(trajectory_id: str, records: list[tuple[str, str | None, str | None, dict[str, Any]]]) -> list[ChainProblem]:
    """Check one trajectory's records: (name, prev_hash, hash, content) each. Records without hashes are skipped."""
    problems: list[ChainProblem] = []
    by_prev: dict[str, list[tuple[str, str, str, dict[str, Any]]]] = {}
    for name, prev, stored, content in records:
        if prev is None or stored is None:
            continue
        if link(prev, content) != stored:
            problems.append(ChainProblem(trajectory_id, name, "content changed since it was recorded (hash mismatch)"))
        by_prev.setdefault(prev, []).append((name, prev, stored, content))
    current = genesis(trajectory_id)
    while current in by_prev:
        following = by_prev.pop(current)
        if len(following) > 1:
            names = ", ".join(f[0] for f in following)
            problems.append(
                ChainProblem(trajectory_id, following[1][0], f"two records claim the same predecessor ({names})")
            )
        current = following[0][2]
    for rest in by_prev.values():
        for name, _, _, _ in rest:
            problems.append(
                ChainProblem(trajectory_id, name, "its predecessor is missing: a record before it was deleted")
            )
    return problems
