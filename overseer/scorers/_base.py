"""The scorer contract: a scorer sees the task, the history and the step, and returns named scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from overseer.steps import Score, Step

__all__ = ["BaseScorer", "ScoreRequest", "StepScorer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoreRequest:
    """One step to score, with everything a scorer may look at."""

    trajectory_id: str
    """The trajectory the step belongs to."""
    task: str
    """What the user asked for."""
    history: tuple[Step, ...]
    """The steps before this one, in order."""
    step: Step
    """The step under judgement."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """The trajectory's metadata."""

    @property
    def index(self) -> int:
        """The step's 0-based position in its trajectory."""
        return len(self.history)


@runtime_checkable
class StepScorer(Protocol):
    """Scores steps. Implementations may batch: ``score`` receives one request per concurrent step.

    Scores are probabilities that a step is good (1.0 good, 0.0 bad). A scorer returns, per request, a
    mapping from score name to :class:`~overseer.Score`; it may leave out names that do not apply to a step.
    """

    @property
    def name(self) -> str:
        """A short name, used in the ``scorer`` provenance field."""
        ...

    @property
    def version(self) -> str:
        """What identifies the scorer's behaviour: a version, or a hash of its model or configuration."""
        ...

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        """Score each request; the result has one mapping per request, in order."""
        ...

    async def end_trajectory(self, trajectory_id: str) -> None:
        """Free whatever the scorer keeps for a trajectory (a model's key/value cache, say)."""
        ...

    async def aclose(self) -> None:
        """Release the scorer's resources."""
        ...


class BaseScorer:
    """A base with no-op lifecycle hooks; subclasses implement ``score`` or the simpler ``score_one``."""

    name: str = "scorer"
    version: str = "0"

    @property
    def id(self) -> str:
        """``name@version``, as recorded with each score."""
        return f"{self.name}@{self.version}"

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        """Score each request with :meth:`score_one`."""
        return [await self.score_one(r) for r in requests]

    async def score_one(self, request: ScoreRequest) -> Mapping[str, Score]:
        """Score one request."""
        raise NotImplementedError(f"{type(self).__name__} implements neither score nor score_one")

    async def end_trajectory(self, trajectory_id: str) -> None:
        """Nothing to free by default."""

    async def aclose(self) -> None:
        """Nothing to release by default."""
