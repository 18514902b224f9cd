"""Reference fakes for tests and benchmarks: scorers set by the caller, and an audit store in memory.

:class:`MemoryAuditStore` (also ``AuditStore("memory://NAME")``) passes the store's conformance suite.

Inject these instead of patching private names::

    overseer = Overseer(policy, scorers=[ConstantScorer(0.9)])
    overseer = Overseer(policy, scorers=[FunctionScorer(lambda r: {"prm": 0.1 if r.step.kind == "tool_call" else 1})])
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from overseer.scorers import BaseScorer, ConstantScorer, ScoreRequest
from overseer.steps import Score
from overseer.store import MemoryAuditStore

__all__ = ["ConstantScorer", "FunctionScorer", "MemoryAuditStore"]

ScoreFn = Callable[[ScoreRequest], "Mapping[str, float | Score] | Awaitable[Mapping[str, float | Score]]"]


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
