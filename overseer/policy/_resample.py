"""Resampling's choice among candidates: a policy decision, so it lives here and not in the adapters.

An adapter that meets a ``resample`` verdict asks its model again for :func:`candidates_wanted` candidates in all,
has each judged with :meth:`~overseer.TrajectoryHandle.evaluate`, and commits the one :func:`choose_candidate`
picks. The adapter only knows how to ask its model again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from overseer.exceptions import ConfigError
from overseer.policy._policy import Policy
from overseer.verdict import Verdict

__all__ = ["PASSING", "Choice", "candidates_wanted", "choose_candidate"]

PASSING = frozenset({"allow", "flag"})
"""The actions under which a step goes ahead as proposed."""


@dataclass(frozen=True, slots=True)
class Choice:
    """The candidate to keep: its position among the candidates, and whether it passes the policy."""

    index: int
    passed: bool


def candidates_wanted(trigger: Verdict) -> int:
    """How many candidates to draw in all for a ``resample`` verdict (the first one included)."""
    return trigger.candidates or 2


def _rank(verdicts: Sequence[Verdict], score: str | None, kind: str) -> tuple[bool, float, float]:
    """Passing first; then the named score (or the lowest score of the steps of the resampled kind); then all."""
    passes = all(v.action in PASSING for v in verdicts)
    if score:
        focus = [v.scores[score] for v in verdicts if score in v.scores]
    else:
        focus = [x for v in verdicts if v.kind == kind for x in v.scores.values()]
    overall = [x for v in verdicts for x in v.scores.values()]
    return passes, min(focus, default=1.0), min(overall, default=1.0)


def choose_candidate(policy: Policy, trigger: Verdict, candidates: Sequence[Sequence[Verdict]]) -> Choice:
    """The best of ``candidates`` (each one model turn's verdicts, the first being the turn that was resampled).

    A candidate whose steps all pass beats one that does not; then the score the rule names in ``resample.score``
    (by default the lowest score of the steps of the kind that triggered), then the lowest of all its scores. Ties
    keep the earlier candidate.
    """
    if not candidates:
        raise ConfigError("choose_candidate needs at least one candidate")
    rule = next((r for r in policy.rules if r.name == trigger.rule), None)
    score = rule.resample.score if rule is not None and rule.resample is not None else None
    ranks = [_rank(c, score, trigger.kind) for c in candidates]
    best = max(range(len(candidates)), key=lambda i: ranks[i])
    return Choice(best, ranks[best][0])
