"""Reference fakes for tests and benchmarks: scorers whose behaviour is set by the caller.

Inject these instead of patching private names::

    overseer = Overseer(policy, scorers=[ConstantScorer(0.9)])
    overseer = Overseer(policy, scorers=[FunctionScorer(lambda r: {"prm": 0.1 if r.step.kind == "tool_call" else 1})])
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from overseer.scorers._base import BaseScorer, ScoreRequest
from overseer.steps import Score

__all__ = ["ConstantScorer", "FunctionScorer"]

ScoreFn = Callable[[ScoreRequest], "Mapping[str, float | Score] | Awaitable[Mapping[str, float | Score]]"]


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


class FunctionScorer(BaseScorer):
    """Scores each step with a function (sync or async) that returns ``{name: value or Score}``.

    The function may raise or sleep, to stand in for a failing or slow scorer. ``batches`` records the
    size of every batch the scorer received.
    """

    def __init__(self, fn: ScoreFn, *, name: str = "function", version: str = "0", delay_s: float = 0.0) -> None:
        self.name = name
        self.version = version
        self._fn = fn
        self._delay_s = delay_s
        self.batches: list[int] = []
        self.ended: list[str] = []
        """Trajectories whose end the scorer was told of."""

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        """Apply the function to each request."""
        self.batches.append(len(requests))
        if self._delay_s:
            await asyncio.sleep(self._delay_s)
        out: list[Mapping[str, Score]] = []
        for request in requests:
            result: Any = self._fn(request)
            if inspect.isawaitable(result):
                result = await result
            out.append(
                {
                    k: v if isinstance(v, Score) else Score(name=k, value=float(v), scorer=self.id)
                    for k, v in result.items()
                }
            )
        return out

    async def end_trajectory(self, trajectory_id: str) -> None:
        """Remember the trajectory's end."""
        self.ended.append(trajectory_id)
