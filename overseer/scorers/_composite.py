"""Run several scorers concurrently on the same steps, with a timeout, and keep their failures apart."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from overseer.exceptions import ScorerError, ScorerTimeoutError
from overseer.scorers._base import BaseScorer, ScoreRequest, StepScorer
from overseer.steps import Score

__all__ = ["CompositeScorer", "ScoreOutcome"]


@dataclass(slots=True)
class ScoreOutcome:
    """What the scorers made of one step: the scores that came back and the scorers that failed."""

    scores: dict[str, Score] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


class CompositeScorer(BaseScorer):
    """Runs its scorers concurrently; a scorer that raises or exceeds ``timeout_s`` is reported by name.

    As a :class:`StepScorer` it raises :class:`ScorerError` when any child fails; the pipeline uses
    :meth:`score_detailed` instead, so that the policy's ``on_scorer_error`` decides what a failure means.
    """

    def __init__(self, scorers: Sequence[StepScorer], *, timeout_s: float | None = None) -> None:
        names = [s.name for s in scorers]
        if len(set(names)) != len(names):
            raise ValueError(f"scorer names must be unique, got {names}")
        self.scorers = tuple(scorers)
        self.timeout_s = timeout_s
        self.name = "+".join(names) or "none"
        self.version = "+".join(s.version for s in scorers) or "0"

    @property
    def id(self) -> str:
        """The children as ``name@version`` joined by ``+``."""
        return "+".join(f"{s.name}@{s.version}" for s in self.scorers) or "none"

    async def _run_one(self, scorer: StepScorer, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await scorer.score(requests)
        except TimeoutError:
            raise ScorerTimeoutError(scorer.name, f"no answer within {self.timeout_s} s") from None
        except ScorerError:
            raise
        except Exception as err:  # a scorer is third-party code: any failure is reported, never raised through
            raise ScorerError(scorer.name, f"{type(err).__name__}: {err}") from err
        if len(result) != len(requests):
            raise ScorerError(scorer.name, f"returned {len(result)} results for {len(requests)} steps")
        return result

    async def score_detailed(self, requests: Sequence[ScoreRequest]) -> list[ScoreOutcome]:
        """Score every request with every scorer; failures land in each outcome's ``errors``."""
        outcomes = [ScoreOutcome() for _ in requests]
        if len(self.scorers) == 1:  # the common case skips the task machinery
            results: list[Sequence[Mapping[str, Score]] | BaseException] = []
            try:
                results.append(await self._run_one(self.scorers[0], requests))
            except ScorerError as err:
                results.append(err)
        else:
            results = await asyncio.gather(*(self._run_one(s, requests) for s in self.scorers), return_exceptions=True)
        for scorer, result in zip(self.scorers, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, ScorerError):
                    raise result  # cancellation and the like are not scorer failures
                for outcome in outcomes:
                    outcome.errors[scorer.name] = str(result)
                continue
            for outcome, scores in zip(outcomes, result, strict=True):
                for key, value in scores.items():
                    if key in outcome.scores:
                        outcome.errors[scorer.name] = f"score name {key!r} is produced by two scorers"
                    else:
                        outcome.scores[key] = value
        return outcomes

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        """Score every request with every scorer; raises if any scorer fails."""
        outcomes = await self.score_detailed(requests)
        for outcome in outcomes:
            if outcome.errors:
                name, message = next(iter(outcome.errors.items()))
                raise ScorerError(name, message)
        return [o.scores for o in outcomes]

    async def end_trajectory(self, trajectory_id: str) -> None:
        """Tell every child that the trajectory ended."""
        await asyncio.gather(*(s.end_trajectory(trajectory_id) for s in self.scorers), return_exceptions=True)

    async def aclose(self) -> None:
        """Close every child."""
        await asyncio.gather(*(s.aclose() for s in self.scorers), return_exceptions=True)
