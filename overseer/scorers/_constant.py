"""The constant scorer: every step gets the same score (for tests, benchmarks and dry runs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import Field

from overseer.scorers._base import BaseScorer, ScoreRequest, StepScorer
from overseer.scorers._spec import BaseScorerSpec
from overseer.steps import Score

__all__ = ["ConstantScorer", "ConstantScorerSpec"]


class ConstantScorer(BaseScorer):
    """Gives every step the same score (named ``score_name``)."""

    def __init__(self, value: float = 1.0, *, name: str = "constant", score_name: str | None = None) -> None:
        self.name = name
        self.version = f"v{value}"
        self._score_name = score_name or name
        self._value = value
        self.calls = 0
        """How many steps it has scored."""

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        """The constant score for every request."""
        self.calls += len(requests)
        score = Score(name=self._score_name, value=self._value, scorer=self.id)
        return [{self._score_name: score} for _ in requests]


class ConstantScorerSpec(BaseScorerSpec):
    """A scorer that gives every step the same score (for tests and benchmarks)."""

    type: Literal["constant"]
    """Always ``constant``."""
    value: float = Field(default=1.0, ge=0.0, le=1.0)
    """The score."""

    def produces(self, name: str) -> frozenset[str]:
        """One score, named as the policy names the scorer."""
        return frozenset({name})

    def build(self, name: str) -> StepScorer:
        """A :class:`ConstantScorer`."""
        return ConstantScorer(self.value, name=name)
