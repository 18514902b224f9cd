"""One trajectory's state under oversight: its steps, the policy's memory of it, and the order of decisions.

Steps are numbered when they are submitted, so concurrent submissions (parallel tool calls) keep the order in
which they were made; each is scored concurrently with the others but decided in that order (turn-taking on the
portal's loop: step n is decided after steps 0..n-1).
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

from overseer.exceptions import LifecycleError
from overseer.policy import TrajectoryContext
from overseer.steps import Step
from overseer.verdict import Verdict

__all__ = ["TrajectoryState"]


class TrajectoryState:
    """What the pipeline knows of one trajectory while it runs (the handle is a front over it)."""

    def __init__(self, trajectory_id: str, task: str, metadata: Mapping[str, Any]) -> None:
        self.id = trajectory_id
        self.task = task
        self.metadata = dict(metadata)
        agent = metadata.get("agent")
        self.agent: str | None = agent if isinstance(agent, str) else None
        self.verdicts: list[Verdict] = []
        """Every verdict so far, in order."""
        self.counts: Counter[str] = Counter()
        """How many steps got each action."""
        self.context = TrajectoryContext(task=task)
        """The policy's memory of the trajectory."""
        self.ended = False
        self.lock = threading.Lock()
        self._steps: list[Step] = []
        self._next = 0
        self._done: set[int] = set()
        self._waiters: dict[int, asyncio.Future[None]] = {}

    @property
    def enforced(self) -> bool:
        """Whether verdicts are applied (not an observe-only run or a replay, whose verdicts are only recorded)."""
        return self.metadata.get("mode") not in ("observe", "replay")

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps submitted so far (a sanitised output as the agent read it)."""
        with self.lock:
            return tuple(self._steps)

    def register(self, step: Step) -> tuple[int, tuple[Step, ...]]:
        """Number a new step: its index, and the steps before it."""
        with self.lock:
            if self.ended:
                raise LifecycleError(f"trajectory {self.id!r} has ended")
            index = len(self._steps)
            self._steps.append(step)
            return index, tuple(self._steps[:index])

    def end(self) -> bool:
        """Mark the trajectory ended; ``False`` when it already was."""
        with self.lock:
            if self.ended:
                return False
            self.ended = True
            return True

    def read_as(self, index: int, step: Step) -> None:
        """Replace step ``index`` by what the agent read there (a sanitised output).

        Later steps are scored against it, as the agent acted on it; the audit record and the policy's memory keep
        the original.
        """
        with self.lock:
            self._steps[index] = step

    async def wait_turn(self, index: int) -> None:
        """Wait until every step before ``index`` is decided (on the portal's loop)."""
        while self._next != index:
            future = asyncio.get_running_loop().create_future()
            self._waiters[index] = future
            await future

    def finish_turn(self, index: int) -> None:
        """Step ``index`` is decided: let the next one go."""
        self._done.add(index)
        while self._next in self._done:
            self._done.discard(self._next)
            self._next += 1
        waiter = self._waiters.pop(self._next, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
