"""The oversight pipeline: a step goes in, the scorers judge it, the policy decides, a verdict comes out.

Every decision is recorded (telemetry, and through it the audit store).

All scoring runs on one event loop that the :class:`Overseer` owns, on a thread of its own. That is what makes
the sync entry points honest (``judge`` works inside a running event loop; it never calls ``asyncio.run``), lets
one instance serve any number of threads and loops, and gives scorers one loop to batch on.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import itertools
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

from opentelemetry.trace import Span

from overseer._text import clean_json, clean_str
from overseer.policy import Decision, Policy, PolicyEngine, TrajectoryContext, load_policy, sanitize
from overseer.redact import Redactor
from overseer.scorers import CompositeScorer, ScoreRequest, StepScorer, build_scorers
from overseer.steps import Observation, Review, Step, ToolCall, ToolChange, Verdict
from overseer.store import AuditStore, genesis, link, review_content, step_content
from overseer.telemetry import Telemetry

__all__ = ["Overseer", "TrajectoryHandle"]

T = TypeVar("T")
log = logging.getLogger("overseer")


class _Portal:
    """An event loop running on a daemon thread; coroutines from any thread or loop run there."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            with self._lock:
                if self._loop is None:
                    loop = asyncio.new_event_loop()
                    ready = threading.Event()

                    def run() -> None:
                        asyncio.set_event_loop(loop)
                        loop.call_soon(ready.set)
                        loop.run_forever()

                    self._thread = threading.Thread(target=run, name="overseer-loop", daemon=True)
                    self._thread.start()
                    ready.wait()
                    self._loop = loop
        return self._loop

    def on_loop(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the portal and wait for it (from any thread but the portal's own)."""
        if self.on_loop():
            coro.close()
            raise RuntimeError("a sync overseer call was made from overseer's own loop; await the async twin instead")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def acall(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await a coroutine on the portal from any event loop."""
        if self.on_loop():
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or self.on_loop():
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()
        self._loop = None
        self._thread = None


def _recordable(step: Step) -> dict[str, Any]:
    """The step as JSON that every store takes: valid UTF-8, no NUL, nesting cut.

    What the agent sent may be none of these; recording it must never fail, nor fail the agent.
    """
    try:
        dumped = step.model_dump(mode="json")
    except (RecursionError, ValueError) as err:  # nesting beyond what the serializer takes
        dumped = {"kind": step.kind, "id": step.id, "unrecordable": f"{type(err).__name__}: {err}"[:500]}
        if isinstance(step, ToolCall):
            dumped.update(tool=step.tool, call_id=step.call_id, args={})
    return dict(clean_json(dumped))


class TrajectoryHandle:
    """One trajectory under oversight. Made by :meth:`Overseer.trajectory`; judge its steps in order.

    Steps are numbered when they are submitted, so concurrent submissions (parallel tool calls) keep the order
    in which they were made; each is scored concurrently with the others but decided in that order.
    """

    def __init__(self, overseer: Overseer, trajectory_id: str, task: str, metadata: Mapping[str, Any]) -> None:
        self.overseer = overseer
        self.id = trajectory_id
        self.task = task
        self.metadata = dict(metadata)
        self.agent: str | None = metadata.get("agent") if isinstance(metadata.get("agent"), str) else None
        self.verdicts: list[Verdict] = []
        """Every verdict so far, in order."""
        self.ended = False
        self._steps: list[Step] = []
        self._lock = threading.Lock()
        self._ctx = TrajectoryContext(task=task)
        self._masked_steps: dict[str, Step] = {}
        self._next = 0
        self._done: set[int] = set()
        self._waiters: dict[int, asyncio.Future[None]] = {}
        self._span: Span | None = None
        self._counts: Counter[str] = Counter()
        self._running: dict[str, tuple[int, str, str]] = {}
        """call id -> (when its verdict let it run, tool, arguments as recorded): tools that ran, for their spans."""
        self._chain = genesis(trajectory_id)

    def _masked(self, step: Step) -> Step:
        """``step`` as recorded: masked by the policy's redactor (each step masked once)."""
        redactor = self.overseer.redactor
        if redactor is None:
            return step
        masked = self._masked_steps.get(step.id)
        if masked is None:
            masked = self._masked_steps[step.id] = redactor.step(step)
        return masked

    def _recorded_header(self) -> tuple[str, dict[str, Any]]:
        """The task and metadata as recorded (masked where the policy says so)."""
        redactor = self.overseer.redactor
        if redactor is None:
            return clean_str(self.task), clean_json(self.metadata)
        return clean_str(redactor.text(self.task)), clean_json(redactor.value(self.metadata))

    def _link(self, content: dict[str, Any]) -> tuple[str, str]:
        """Chain a record to the previous one of this trajectory: (prev_hash, hash)."""
        with self._lock:
            prev = self._chain
            self._chain = link(prev, content)
            return prev, self._chain

    def __repr__(self) -> str:
        return f"TrajectoryHandle({self.id!r}, steps={len(self._steps)})"

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps submitted so far."""
        return tuple(self._steps)

    @property
    def halted(self) -> bool:
        """Whether the policy's trajectory-level stop has fired."""
        return self._ctx.halted

    def _as_read(self, index: int, step: Step) -> None:
        """Replace step ``index`` by what the agent read there (a sanitised output).

        Later steps are scored against it, as the agent acted on it; the audit record and the policy's memory keep
        the original.
        """
        with self._lock:
            self._steps[index] = step

    def _register(self, step: Step) -> tuple[int, tuple[Step, ...]]:
        with self._lock:
            if self.ended:
                raise RuntimeError(f"trajectory {self.id!r} has ended")
            index = len(self._steps)
            self._steps.append(step)
            return index, tuple(self._steps[:index])

    async def ajudge(self, step: Step, *, resampled: int | None = None) -> Verdict:
        """Score and decide one step, record the decision, and return the verdict.

        Pass ``resampled=N`` when the step is the best of N candidates already drawn for a ``resample``
        decision: if it still does not pass, the rule's ``fallback`` is recorded and returned.
        """
        index, history = self._register(step)
        return await self.overseer._portal.acall(self.overseer._judge(self, index, history, step, resampled))

    def judge(self, step: Step, *, resampled: int | None = None) -> Verdict:
        """The sync twin of :meth:`ajudge`; safe to call while an event loop runs in this thread."""
        index, history = self._register(step)
        return self.overseer._portal.call(self.overseer._judge(self, index, history, step, resampled))

    def submit(self, step: Step) -> concurrent.futures.Future[Verdict]:
        """Judge a step without waiting for the verdict (observe-only use); the future holds it."""
        index, history = self._register(step)
        return asyncio.run_coroutine_threadsafe(
            self.overseer._judge(self, index, history, step), self.overseer._portal.loop
        )

    async def aevaluate(self, steps: Sequence[Step]) -> list[Verdict]:
        """Judge candidate steps (one model turn: a plan and its calls, say) as if they came next, in order.

        Nothing is added to the trajectory or recorded: this is how resampling compares candidates. Commit the
        chosen candidate with :meth:`ajudge`.
        """
        with self._lock:
            history = tuple(self._steps)
        return await self.overseer._portal.acall(self.overseer._evaluate(self, history, tuple(steps)))

    def evaluate(self, steps: Sequence[Step]) -> list[Verdict]:
        """The sync twin of :meth:`aevaluate`."""
        with self._lock:
            history = tuple(self._steps)
        return self.overseer._portal.call(self.overseer._evaluate(self, history, tuple(steps)))

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
        recorded = review
        redactor = self.overseer.redactor
        if redactor is not None:
            recorded = review.model_copy(
                update={
                    "comment": redactor.text(review.comment) if review.comment else review.comment,
                    "edited": redactor.value(review.edited) if review.edited else review.edited,
                }
            )
        chain = self._link(review_content(clean_json(recorded.model_dump(mode="json"))))
        self.overseer.telemetry.record_review(self._span, recorded, chain)
        return review

    async def aend(self, status: str = "completed") -> None:
        """End the trajectory: record its outcome and let the scorers free what they keep for it."""
        with self._lock:
            if self.ended:
                return
            self.ended = True
        await self.overseer._portal.acall(self.overseer._end(self, status))

    def end(self, status: str = "completed") -> None:
        """The sync twin of :meth:`aend`."""
        with self._lock:
            if self.ended:
                return
            self.ended = True
        self.overseer._portal.call(self.overseer._end(self, status))

    # turn-taking on the portal loop: step n is decided after steps 0..n-1
    async def _wait_turn(self, index: int) -> None:
        while self._next != index:
            future = asyncio.get_running_loop().create_future()
            self._waiters[index] = future
            await future

    def _finish_turn(self, index: int) -> None:
        self._done.add(index)
        while self._next in self._done:
            self._done.discard(self._next)
            self._next += 1
        waiter = self._waiters.pop(self._next, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

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
        self.engine = PolicyEngine(self.policy)
        self.redactor: Redactor | None = Redactor(self.policy.redact) if self.policy.redact is not None else None
        """Masks secrets and personal data in what is recorded (the policy's ``redact`` block), or ``None``."""
        self.scorer = CompositeScorer(
            list(scorers) if scorers is not None else build_scorers(self.policy.scorers),
            timeout_s=self.policy.scorer_timeout_s,
        )
        if telemetry is not None and store is not None:
            raise ValueError("give either store or telemetry, not both")
        self.telemetry = telemetry or Telemetry(store=store)
        self._portal = _Portal()
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
            raise RuntimeError("this Overseer is closed")
        if id is not None and (existing := self._trajectories.get(id)) is not None and not existing.ended:
            return existing
        trajectory_id = id or f"traj-{time.time_ns():x}-{next(self._ids)}"
        handle = TrajectoryHandle(self, trajectory_id, task, metadata or {})
        handle._span = self.telemetry.start_trajectory(trajectory_id, task, handle.metadata, self.policy.id)
        self._trajectories[trajectory_id] = handle
        return handle

    def get(self, trajectory_id: str) -> TrajectoryHandle | None:
        """The open trajectory with this id, if any."""
        return self._trajectories.get(trajectory_id)

    @property
    def open_trajectories(self) -> list[TrajectoryHandle]:
        """Trajectories started and not yet ended."""
        return [h for h in self._trajectories.values() if not h.ended]

    # --- the work, on the portal loop ------------------------------------------------------------------------

    def _verdict(self, handle: TrajectoryHandle, index: int, step: Step, decision: Any, outcome: Any) -> Verdict:
        tool = step.tool if isinstance(step, (ToolCall, Observation, ToolChange)) else None
        call_id = step.call_id if isinstance(step, (ToolCall, Observation)) else None
        resample = decision.resample if decision.action == "resample" else None
        cleaned = None
        if decision.action == "sanitize" and isinstance(step, Observation):
            cleaned = sanitize(step.content, decision.spans or ())
        return Verdict(
            trajectory_id=handle.id,
            index=index,
            step_id=step.id,
            kind=step.kind,
            tool=tool,
            call_id=call_id,
            scores={name: s.value for name, s in outcome.scores.items()},
            action=decision.action,
            rule=decision.rule,
            reason=decision.reason,
            policy=self.policy.id,
            scorer=self.scorer.id,
            halt=decision.halt,
            candidates=resample.candidates if resample else None,
            fallback=resample.fallback if resample else None,
            errors=dict(outcome.errors),
            spans=(decision.spans or ()) if cleaned is not None else None,
            sanitized=cleaned,
        )

    async def _judge(
        self,
        handle: TrajectoryHandle,
        index: int,
        history: tuple[Step, ...],
        step: Step,
        resampled: int | None = None,
    ) -> Verdict:
        started = time.time_ns()
        try:
            request = self._request(handle, history, step)
            outcome = (await self.scorer.score_detailed([request]))[0]
            await handle._wait_turn(index)
            try:
                decision = self.engine.decide(step, outcome.scores, handle._ctx, outcome.errors, resampled=resampled)
            except Exception as err:  # a policy that cannot be evaluated on this step fails closed, never the agent
                log.exception("policy %s could not be evaluated on step %d of %s", self.policy.id, index, handle.id)
                decision = Decision(
                    self.policy.on_scorer_error, None, f"the policy could not be evaluated: {type(err).__name__}"
                )
            try:
                self.engine.commit(step, outcome.scores, decision, handle._ctx)
            except Exception:
                log.exception("step %d of %s could not be kept in the policy's memory", index, handle.id)
            verdict = self._verdict(handle, index, step, decision, outcome)
            handle.verdicts.append(verdict)
            if verdict.sanitized is not None and isinstance(step, Observation):
                handle._as_read(index, step.model_copy(update={"content": verdict.sanitized}))
            handle._counts[verdict.action] += 1
            recorded, recorded_verdict = step, verdict
            if self.redactor is not None:  # what is stored and sent is masked; the caller gets the real verdict
                recorded = handle._masked(step)
                recorded_verdict = verdict.model_copy(update={"reason": self.redactor.text(verdict.reason)})
            step_json = _recordable(recorded)  # serialised once: for the chain and for the span
            recorded_verdict = recorded_verdict.model_copy(
                update={
                    "reason": clean_str(recorded_verdict.reason),
                    "tool": clean_str(recorded_verdict.tool) if recorded_verdict.tool else recorded_verdict.tool,
                    "call_id": clean_str(recorded_verdict.call_id) if recorded_verdict.call_id else None,
                }
            )
            chain = handle._link(step_content(recorded_verdict.to_record(), step_json))
            assert handle._span is not None
            enforced = handle.metadata.get("mode") not in ("observe", "replay")
            self.telemetry.record_step(
                handle._span,
                step=recorded,
                verdict=recorded_verdict,
                scores=outcome.scores,
                started_ns=started,
                agent=handle.agent,
                trajectory=handle._recorded_header() if index == 0 else None,
                chain=chain,
                step_json=json.dumps(step_json, ensure_ascii=False),
                args_json=json.dumps(step_json["args"], sort_keys=True, ensure_ascii=False)
                if isinstance(recorded, ToolCall)
                else None,
                enforced=enforced,
            )
            self._record_tool_run(handle, recorded, verdict, started, enforced, step_json)
            return verdict
        finally:
            handle._finish_turn(index)

    def _record_tool_run(
        self, handle: TrajectoryHandle, step: Step, verdict: Verdict, started: int, enforced: bool,
        recorded: dict[str, Any],
    ) -> None:  # fmt: skip
        """A call let through is remembered; its result closes the ``execute_tool`` span of the tool's run."""
        if isinstance(step, ToolCall) and step.call_id and (not enforced or verdict.action in ("allow", "flag")):
            args = json.dumps(recorded["args"], sort_keys=True, ensure_ascii=False)
            handle._running[step.call_id] = (time.time_ns(), step.tool, args)
        elif isinstance(step, Observation) and step.call_id and step.call_id in handle._running:
            ran, tool, args = handle._running.pop(step.call_id)
            assert handle._span is not None
            self.telemetry.record_tool_run(
                handle._span, tool=tool, call_id=step.call_id, args_json=args, result=step.content,
                is_error=step.is_error, started_ns=ran, ended_ns=started, agent=handle.agent,
            )  # fmt: skip

    def _request(self, handle: TrajectoryHandle, history: tuple[Step, ...], step: Step) -> ScoreRequest:
        """What the scorers see: the steps as they are, or masked where the policy says ``scorers_see: redacted``."""
        if self.redactor is not None and self.redactor.spec.scorers_see == "redacted":
            task, metadata = handle._recorded_header()
            return ScoreRequest(
                trajectory_id=handle.id,
                task=task,
                history=tuple(handle._masked(s) for s in history),
                step=handle._masked(step),
                metadata=metadata,
            )
        return ScoreRequest(
            trajectory_id=handle.id, task=handle.task, history=history, step=step, metadata=handle.metadata
        )

    async def _evaluate(
        self, handle: TrajectoryHandle, history: tuple[Step, ...], steps: tuple[Step, ...]
    ) -> list[Verdict]:
        requests = [self._request(handle, history + steps[:i], step) for i, step in enumerate(steps)]
        outcomes = await self.scorer.score_detailed(requests)  # one batch: each request carries its own history
        ctx = handle._ctx.fork()
        verdicts = []
        for i, (step, outcome) in enumerate(zip(steps, outcomes, strict=True)):
            decision = self.engine.decide(step, outcome.scores, ctx, outcome.errors)
            self.engine.commit(step, outcome.scores, decision, ctx)
            verdicts.append(self._verdict(handle, len(history) + i, step, decision, outcome))
        return verdicts

    async def _end(self, handle: TrajectoryHandle, status: str) -> None:
        with handle._lock:
            submitted = len(handle._steps)
        await handle._wait_turn(submitted)  # steps submitted without waiting are decided first
        if handle.halted and status == "completed":
            status = "halted"
        await self.scorer.end_trajectory(handle.id)
        if handle._span is not None:
            counts = {"steps": len(handle._steps), **handle._counts}
            task, metadata = handle._recorded_header()
            self.telemetry.end_trajectory(handle._span, task=task, metadata=metadata, status=status, counts=counts)
        self._trajectories.pop(handle.id, None)

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
