"""The oversight pipeline's front: :class:`Overseer` and the :class:`TrajectoryHandle` of each trajectory.

The Overseer holds one policy, its scorers and the audit trail; an adapter submits one trajectory's steps through
its handle. A step goes in, the :class:`~overseer._judge.Judge` scores and decides it on the portal's loop, the
:class:`~overseer._recorder.Recorder` records the decision, and the verdict comes out.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import itertools
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from overseer._judge import Judge
from overseer._portal import Portal
from overseer._recorder import Recorder
from overseer._trajectory import TrajectoryState
from overseer.exceptions import ConfigError, LifecycleError
from overseer.policy import Policy, load_policy
from overseer.redact import Redactor
from overseer.scorers import CompositeScorer, StepScorer, build_scorers
from overseer.steps import Review, Step
from overseer.store import AuditStore
from overseer.telemetry import Telemetry
from overseer.verdict import Verdict

__all__ = ["Overseer", "TrajectoryHandle"]

log = logging.getLogger("overseer")


class TrajectoryHandle:
    """One trajectory under oversight. Made by :meth:`Overseer.trajectory`; judge its steps in order.

    Steps are numbered when they are submitted, so concurrent submissions (parallel tool calls) keep the order
    in which they were made; each is scored concurrently with the others but decided in that order.
    """

    def __init__(
        self, overseer: Overseer, state: TrajectoryState, recorder: Recorder, judge: Judge, portal: Portal
    ) -> None:
        self.overseer = overseer
        self._state = state
        self._recorder = recorder
        self._judge = judge
        self._portal = portal

    @property
    def id(self) -> str:
        """The trajectory's id."""
        return self._state.id

    @property
    def task(self) -> str:
        """The user's task."""
        return self._state.task

    @property
    def metadata(self) -> dict[str, Any]:
        """What the caller said about the run (agent, model, mode, ...)."""
        return self._state.metadata

    @property
    def agent(self) -> str | None:
        """The agent's name, when the metadata gives one."""
        return self._state.agent

    @property
    def verdicts(self) -> list[Verdict]:
        """Every verdict so far, in order."""
        return self._state.verdicts

    @property
    def ended(self) -> bool:
        """Whether the trajectory has ended."""
        return self._state.ended

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps submitted so far."""
        return self._state.steps

    @property
    def halted(self) -> bool:
        """Whether the policy's trajectory-level stop has fired."""
        return self._state.context.halted

    def __repr__(self) -> str:
        return f"TrajectoryHandle({self.id!r}, steps={len(self.steps)})"

    async def ajudge(self, step: Step, *, resampled: int | None = None) -> Verdict:
        """Score and decide one step, record the decision, and return the verdict.

        Pass ``resampled=N`` when the step is the best of N candidates already drawn for a ``resample``
        decision: if it still does not pass, the rule's ``fallback`` is recorded and returned.
        """
        index, history = self._state.register(step)
        return await self._portal.acall(self._judge.judge(self._state, self._recorder, index, history, step, resampled))

    def judge(self, step: Step, *, resampled: int | None = None) -> Verdict:
        """The sync twin of :meth:`ajudge`; safe to call while an event loop runs in this thread."""
        index, history = self._state.register(step)
        return self._portal.call(self._judge.judge(self._state, self._recorder, index, history, step, resampled))

    def submit(self, step: Step) -> concurrent.futures.Future[Verdict]:
        """Judge a step without waiting for the verdict (observe-only use); the future holds it."""
        index, history = self._state.register(step)
        return self._portal.submit(self._judge.judge(self._state, self._recorder, index, history, step))

    async def aevaluate(self, steps: Sequence[Step]) -> list[Verdict]:
        """Judge candidate steps (one model turn: a plan and its calls, say) as if they came next, in order.

        Nothing is added to the trajectory or recorded: this is how resampling compares candidates. Commit the
        chosen candidate with :meth:`ajudge`.
        """
        return await self._portal.acall(
            self._judge.evaluate(self._state, self._recorder, self._state.steps, tuple(steps))
        )

    def evaluate(self, steps: Sequence[Step]) -> list[Verdict]:
        """The sync twin of :meth:`aevaluate`."""
        return self._portal.call(self._judge.evaluate(self._state, self._recorder, self._state.steps, tuple(steps)))

    def review(
        self,
        verdict: Verdict,
        label: str,
        *,
        reviewer: str,
        reviewer_kind: Literal["human", "automated"] = "human",
        comment: str | None = None,
        edited: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> Review:
        """Record a judgement of one of this trajectory's steps (a human's answer to an escalation, say).

        Give ``id`` to make recording idempotent: the store keeps one review per id.
        """
        review = Review(
            trajectory_id=self.id,
            step_id=verdict.step_id,
            index=verdict.index,
            reviewer=reviewer,
            reviewer_kind=reviewer_kind,
            label=label,
            comment=comment,
            edited=dict(edited) if edited is not None else None,
        )
        if id is not None:
            review = review.model_copy(update={"id": id})
        self._recorder.review(review)
        return review

    async def aend(self, status: str = "completed") -> None:
        """End the trajectory: record its outcome and let the scorers free what they keep for it."""
        if self._state.end():
            await self._portal.acall(self._judge.end(self._state, self._recorder, status))
            self.overseer._forget(self.id)

    def end(self, status: str = "completed") -> None:
        """The sync twin of :meth:`aend`."""
        if self._state.end():
            self._portal.call(self._judge.end(self._state, self._recorder, status))
            self.overseer._forget(self.id)

    def __enter__(self) -> TrajectoryHandle:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.end("completed" if exc is None else "error")

    async def __aenter__(self) -> TrajectoryHandle:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aend("completed" if exc is None else "error")


class Overseer:
    """Judges the steps of any number of concurrent trajectories under one policy.

    Args:
        policy: a :class:`Policy`, a policy file, a dict, or a shipped policy's name (``"default"``).
        scorers: the scorers to run; by default those the policy's ``scorers`` section names.
        store: an audit store (or its URL) to record every decision in; ``None`` records to no store.
        telemetry: a :class:`Telemetry` of your own (then leave ``store`` out).

    Example::

        overseer = Overseer("default", store="sqlite:///audit.db")
        with overseer.trajectory(task="Pay the bill") as run:
            verdict = run.judge(ToolCall(tool="send_money", args={"recipient": "UK12..."}))
            if verdict.action == "block": ...
        overseer.close()
    """

    def __init__(
        self,
        policy: Policy | str | Path | Mapping[str, Any] = "default",
        *,
        scorers: Sequence[StepScorer] | None = None,
        store: AuditStore | str | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.policy = load_policy(policy)
        self.redactor: Redactor | None = Redactor(self.policy.redact) if self.policy.redact is not None else None
        """Masks secrets and personal data in what is recorded (the policy's ``redact`` block), or ``None``."""
        self.scorer = CompositeScorer(
            list(scorers) if scorers is not None else build_scorers(self.policy.scorers),
            timeout_s=self.policy.scorer_timeout_s,
            queue_s=self.policy.scorer_queue_s,
        )
        if telemetry is not None and store is not None:
            raise ConfigError("give either store or telemetry, not both")
        self.telemetry = telemetry or Telemetry(store=store)
        self._judge = Judge(self.policy, self.scorer)
        self.engine = self._judge.engine
        """The policy engine (what decides each step from its scores)."""
        self._portal = Portal()
        self._trajectories: dict[str, TrajectoryHandle] = {}
        self._ids = itertools.count(1)
        self._closed = False
        atexit.register(self._at_exit)  # an Overseer nobody closed still flushes its audit trail

    def _at_exit(self) -> None:
        if not self._closed:
            try:
                self.close()
            except Exception:  # the interpreter is going away; the spill keeps what the store could not take
                log.exception("closing the overseer at exit failed")

    def __repr__(self) -> str:
        return f"Overseer(policy={self.policy.id!r}, scorer={self.scorer.id!r})"

    # --- trajectories ----------------------------------------------------------------------------------------

    def trajectory(
        self, task: str, *, id: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> TrajectoryHandle:
        """Start overseeing a trajectory (or return the open one with this ``id``)."""
        if self._closed:
            raise LifecycleError("this Overseer is closed")
        if id is not None and (existing := self._trajectories.get(id)) is not None and not existing.ended:
            return existing
        trajectory_id = id or f"traj-{time.time_ns():x}-{next(self._ids)}"
        state = TrajectoryState(trajectory_id, task, metadata or {})
        recorder = Recorder(
            self.telemetry,
            self.redactor,
            trajectory_id=trajectory_id,
            task=task,
            metadata=state.metadata,
            policy=self.policy.id,
        )
        handle = TrajectoryHandle(self, state, recorder, self._judge, self._portal)
        self._trajectories[trajectory_id] = handle
        return handle

    def _forget(self, trajectory_id: str) -> None:
        """An ended trajectory is no longer open."""
        self._trajectories.pop(trajectory_id, None)

    def get(self, trajectory_id: str) -> TrajectoryHandle | None:
        """The open trajectory with this id, if any."""
        return self._trajectories.get(trajectory_id)

    @property
    def open_trajectories(self) -> list[TrajectoryHandle]:
        """Trajectories started and not yet ended."""
        return [h for h in self._trajectories.values() if not h.ended]

    # --- lifecycle --------------------------------------------------------------------------------------------

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until every decision so far is in the audit store (or its spill)."""
        return self.telemetry.flush(timeout_s)

    async def aclose(self) -> None:
        """End open trajectories (as ``abandoned``), close the scorers, and flush the audit trail."""
        if self._closed:
            return
        atexit.unregister(self._at_exit)
        for handle in self.open_trajectories:
            await handle.aend("abandoned")
        await self._portal.acall(self.scorer.aclose())
        self._closed = True
        await asyncio.get_running_loop().run_in_executor(None, self._shutdown)

    def close(self) -> None:
        """The sync twin of :meth:`aclose`."""
        if self._closed:
            return
        atexit.unregister(self._at_exit)
        for handle in self.open_trajectories:
            handle.end("abandoned")
        self._portal.call(self.scorer.aclose())
        self._closed = True
        self._shutdown()

    def _shutdown(self) -> None:
        self.telemetry.shutdown()
        self._portal.close()

    def __enter__(self) -> Overseer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Overseer:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
