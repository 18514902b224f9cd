"""Run several scorers concurrently on the same steps, under a deadline that holds, and keep their failures apart.

Each scorer runs on an event loop of its own, on a thread of its own. A scorer is third-party code: an ``async
def`` that calls ``time.sleep``, spins in Python or waits on a lock blocks only its own loop, and the caller's
deadline (``asyncio.timeout`` on the caller's loop) still fires: the step then gets ``on_scorer_error``. The stuck
scorer is abandoned, not killed (Python cannot kill a thread); while it stays stuck, every later step it should
score misses its deadline too, so oversight stays closed. C code that holds the GIL for seconds is the one thing a
thread cannot escape; the shipped scorers' patterns run in RE2 (linear time) for that reason.

A model is one thread that many trajectories share: a step can queue behind other steps' work. A scorer that says
when its model last showed life (``progress()``, the start or end of a job: the shipped detector and PRM) gets the
deadline counted from that sign of life, not from when the step arrived: while jobs keep starting and ending, a
queued step waits its turn, up to ``queue_s`` in all; a job that runs past the deadline stops the queue, and every
step waiting in it fails at the same deadline. Without this, 32 replayed trajectories whose tool outputs were 10,000
characters long lost 9 observations to the deadline on a quiet 2-core machine (``overseer score``, 16 at a time):
verdicts that depended on the load, not on the steps.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from overseer.exceptions import ConfigError, ScorerError, ScorerTimeoutError
from overseer.scorers._base import BaseScorer, ScoreRequest, StepScorer
from overseer.steps import Score

__all__ = ["CompositeScorer", "ScoreOutcome"]

T = TypeVar("T")


class _Lane:
    """An event loop on a daemon thread of its own, where one scorer's coroutines run."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=f"overseer-scorer-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:  # the lane cleans up after itself, also when it was abandoned while stuck
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.close()

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the lane and await it from the caller's loop (cancelled there when the caller gives up)."""
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    def close(self) -> None:
        """Stop the lane; a lane stuck in a scorer stops (and closes its loop) when the scorer lets go."""
        with contextlib.suppress(RuntimeError):  # already closed
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=1.0)


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

    def __init__(
        self, scorers: Sequence[StepScorer], *, timeout_s: float | None = None, queue_s: float | None = None
    ) -> None:
        names = [s.name for s in scorers]
        if len(set(names)) != len(names):
            raise ConfigError(f"scorer names must be unique, got {names}")
        self.scorers = tuple(scorers)
        self.timeout_s = timeout_s
        self.queue_s = queue_s
        self._lanes: dict[str, _Lane] = {}
        self._lanes_lock = threading.Lock()
        self.name = "+".join(names) or "none"
        self.version = "+".join(s.version for s in scorers) or "0"

    @property
    def id(self) -> str:
        """The children as ``name@version`` joined by ``+``."""
        return "+".join(f"{s.name}@{s.version}" for s in self.scorers) or "none"

    def _lane(self, scorer: StepScorer) -> _Lane:
        lane = self._lanes.get(scorer.name)
        if lane is None:
            with self._lanes_lock:
                lane = self._lanes.get(scorer.name)
                if lane is None:
                    lane = self._lanes[scorer.name] = _Lane(scorer.name)
        return lane

    async def _within_deadline(self, scorer: StepScorer, coro: Coroutine[Any, Any, T]) -> T:
        """``coro`` on the scorer's lane, given up (``TimeoutError``) at the deadline.

        The deadline is ``timeout_s`` after the step arrived, or after the scorer's model last started or ended a
        job if it says (``progress()``), and never later than ``queue_s`` after the step arrived.
        """
        progress = getattr(scorer, "progress", None)
        if self.timeout_s is None or not callable(progress):
            async with asyncio.timeout(self.timeout_s):
                return await self._lane(scorer).run(coro)
        loop = asyncio.get_running_loop()
        timeout = self.timeout_s
        arrived = time.monotonic()  # progress()'s clock; the loop's may have another origin (uvloop)
        cap = arrived + self.queue_s if self.queue_s is not None else float("inf")
        async with asyncio.timeout(timeout) as deadline:
            check: asyncio.TimerHandle | None = None

            def look() -> None:  # four times per deadline: move it to the model's last sign of life
                nonlocal check
                try:
                    alive = progress()
                except Exception:  # a scorer's own report: if it fails, the step keeps its deadline
                    alive = None
                if isinstance(alive, (int, float)):
                    ends = min(cap, max(arrived, alive) + timeout)
                    deadline.reschedule(loop.time() + ends - time.monotonic())
                check = loop.call_later(timeout / 4, look)

            check = loop.call_later(timeout / 4, look)
            try:
                return await self._lane(scorer).run(coro)
            finally:
                check.cancel()

    async def _run_one(self, scorer: StepScorer, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        try:
            result = await self._within_deadline(scorer, _call(scorer.score, requests))
        except TimeoutError:
            raise ScorerTimeoutError(scorer.name, f"no answer within {self.timeout_s} s") from None
        except ScorerError:
            raise
        except Exception as err:  # a scorer is third-party code: any failure is reported, never raised through
            raise ScorerError(scorer.name, f"{type(err).__name__}: {err}") from err
        if not isinstance(result, Sequence) or len(result) != len(requests):
            got = len(result) if isinstance(result, Sequence) else type(result).__name__
            raise ScorerError(scorer.name, f"returned {got} results for {len(requests)} steps")
        for item in result:
            if not isinstance(item, Mapping) or not all(isinstance(v, Score) for v in item.values()):
                raise ScorerError(
                    scorer.name, f"returned {type(item).__name__} where a mapping of name to Score belongs"
                )
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

    async def _bounded(self, scorer: StepScorer, coro: Coroutine[Any, Any, None]) -> None:
        async with asyncio.timeout(self.timeout_s):
            await self._lane(scorer).run(coro)

    async def end_trajectory(self, trajectory_id: str) -> None:
        """Tell every child that the trajectory ended (each on its lane, under the deadline)."""
        await asyncio.gather(
            *(self._bounded(s, _call(s.end_trajectory, trajectory_id)) for s in self.scorers), return_exceptions=True
        )

    async def aclose(self) -> None:
        """Close every child, then stop the lanes."""
        await asyncio.gather(*(self._bounded(s, _call(s.aclose)) for s in self.scorers), return_exceptions=True)
        with self._lanes_lock:
            lanes, self._lanes = list(self._lanes.values()), {}
        for lane in lanes:
            lane.close()


async def _call(function: Any, *args: Any) -> Any:
    """Call ``function`` on the lane's loop: a scorer that is not async (or misbehaves) fails there, not here."""
    return await function(*args)
