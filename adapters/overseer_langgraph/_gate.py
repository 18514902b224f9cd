"""The oversight logic every LangGraph hook shares, written once for sync and async.

Each hook's logic is a generator that yields *effects* (call the model, judge a step, run the tool) and gets
their results back; :func:`drive` runs the effects synchronously and :func:`adrive` awaits them. Human review
uses LangGraph's ``interrupt()``, which works the same in both.

LangGraph re-runs an interrupted node from its start when the run resumes, so everything decided before an
interrupt is cached (the model's turn, each call's verdict, a tool's result): a resumed node neither calls the
model again, nor judges or records a step twice, nor runs a tool twice.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import interrupt

from overseer import ConfigError, Overseer, Policy, Step, ToolCall, TrajectoryHandle, Verdict
from overseer.policy import PASSING, candidates_wanted, choose_candidate
from overseer.store import default_store_url
from overseer_langgraph._convert import observation_step, step_id, turn_steps

STATE_KEY = "overseer_trajectory_id"
"""The agent-state key that carries a run's trajectory id."""


def as_overseer(overseer: Overseer | Policy | str | Path, store: str | None) -> Overseer:
    """The Overseer an adapter was given, or one built from a policy (recording to ``store`` or the default)."""
    if isinstance(overseer, Overseer):
        return overseer
    return Overseer(overseer, store=store or default_store_url())


# --- effects -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallModel:
    """Ask the model for a turn (``call`` and ``acall`` return the model's response)."""

    call: Callable[[], Any] | None
    acall: Callable[[], Awaitable[Any]] | None = None


@dataclass(frozen=True)
class RunTool:
    """Run the tool (``call`` / ``acall`` with the request to run)."""

    call: Callable[[Any], Any] | None
    acall: Callable[[Any], Awaitable[Any]] | None
    request: Any


@dataclass(frozen=True)
class Judge:
    """Judge and record one step."""

    handle: TrajectoryHandle
    step: Step
    resampled: int | None = None


@dataclass(frozen=True)
class Evaluate:
    """Judge a candidate turn without recording it."""

    handle: TrajectoryHandle
    steps: list[Step]


Effect = CallModel | RunTool | Judge | Evaluate
Logic = Generator[Effect, Any, Any]


def _run(effect: Effect) -> Any:
    if isinstance(effect, CallModel):
        assert effect.call is not None, "a sync hook needs a sync model call"
        return effect.call()
    if isinstance(effect, RunTool):
        assert effect.call is not None, "a sync hook needs a sync tool call"
        return effect.call(effect.request)
    if isinstance(effect, Judge):
        return effect.handle.judge(effect.step, resampled=effect.resampled)
    return effect.handle.evaluate(effect.steps)


async def _arun(effect: Effect) -> Any:
    if isinstance(effect, (CallModel, RunTool)) and effect.acall is None:
        return _run(effect)
    if isinstance(effect, CallModel):
        assert effect.acall is not None
        return await effect.acall()
    if isinstance(effect, RunTool):
        assert effect.acall is not None
        return await effect.acall(effect.request)
    if isinstance(effect, Judge):
        return await effect.handle.ajudge(effect.step, resampled=effect.resampled)
    return await effect.handle.aevaluate(effect.steps)


def drive(logic: Logic) -> Any:
    """Run a hook's logic, performing its effects synchronously."""
    value: Any = None
    while True:
        try:
            effect = logic.send(value)
        except StopIteration as stop:
            return stop.value
        value = _run(effect)


async def adrive(logic: Logic) -> Any:
    """Run a hook's logic, awaiting its effects."""
    value: Any = None
    while True:
        try:
            effect = logic.send(value)
        except StopIteration as stop:
            return stop.value
        value = await _arun(effect)


# --- the logic -------------------------------------------------------------------------------------------------


@dataclass
class _Turn:
    response: Any
    message: AIMessage
    steps: list[Step]
    verdicts: list[Verdict]
    candidates: int = 1


@dataclass
class Decision:
    """A human's answer to an escalation, read from the value the run was resumed with."""

    label: str
    reviewer: str = "human"
    comment: str | None = None
    args: dict[str, Any] | None = None
    content: str | None = None

    @classmethod
    def parse(cls, value: Any) -> Decision:
        """Accept ``"approve"`` / ``"reject"`` or ``{"decision": ..., "args"|"content": ..., "reviewer": ...}``."""
        if isinstance(value, str):
            value = {"decision": value}
        if not isinstance(value, dict):
            raise ConfigError(f"resume an overseer escalation with approve / edit / reject, not {value!r}")
        label = str(value.get("decision") or value.get("type") or "").lower()
        if label not in ("approve", "edit", "reject"):
            raise ConfigError(f"unknown escalation decision {label!r}: use approve, edit or reject")
        return cls(
            label=label,
            reviewer=str(value.get("reviewer") or "human"),
            comment=value.get("comment") or value.get("message"),
            args=value.get("args"),
            content=value.get("content"),
        )


def _last_ai(response: Any) -> AIMessage:
    messages = getattr(response, "result", None)
    if messages is None:
        messages = [response]
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    raise TypeError(f"the model returned no AIMessage: {response!r}")


@dataclass
class Gate:
    """Judges model turns and tool calls for one :class:`Overseer`, and enforces the verdicts."""

    overseer: Overseer
    agent: str | None = None
    _turns: dict[tuple[str, int], _Turn] = field(default_factory=dict)
    _calls: dict[tuple[str, str], Verdict] = field(default_factory=dict)
    _results: dict[tuple[str, str], Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, trajectory_id: str, task: str, metadata: dict[str, Any] | None = None) -> TrajectoryHandle:
        """The open trajectory with this id, or a new one."""
        meta = {"framework": "langgraph", **({"agent": self.agent} if self.agent else {}), **(metadata or {})}
        return self.overseer.trajectory(task, id=trajectory_id, metadata=meta)

    def stop_message(self, handle: TrajectoryHandle, reason: str = "") -> str:
        """What the run's last message says when the policy's stop fires."""
        stop = self.overseer.policy.stop
        text = stop.message if stop is not None else "The run was stopped by the oversight policy."
        return f"{text} ({reason})" if reason else text

    # --- a model turn ---------------------------------------------------------------------------------------

    def model_turn(self, handle: TrajectoryHandle, turn: int, call: CallModel, node: str | None = None) -> Logic:
        """Call the model (again, for ``resample``), judge the turn's steps, and return the response to use."""
        key = (handle.id, turn)
        if handle.halted:
            return AIMessage(content=self.stop_message(handle))
        cached = self._turns.get(key)
        if cached is None:
            cached = yield from self._decide_turn(handle, turn, call, node)
            with self._lock:
                self._turns[key] = cached
                for step, verdict in zip(cached.steps, cached.verdicts, strict=True):
                    if isinstance(step, ToolCall) and step.call_id:
                        self._calls[(handle.id, step.call_id)] = verdict
        result = self._enforce_turn(handle, cached)  # may raise GraphInterrupt: the cache stays for the resume
        self._turns.pop(key, None)
        return result

    def _decide_turn(self, handle: TrajectoryHandle, turn: int, call: CallModel, node: str | None) -> Logic:
        response = yield call
        message = _last_ai(response)
        steps = turn_steps(message, trajectory_id=handle.id, turn=turn, node=node)
        if not any(rule.action == "resample" for rule in self.overseer.policy.rules):
            verdicts = []
            for step in steps:  # nothing can ask for another candidate: judge the turn once
                verdicts.append((yield Judge(handle, step)))
            return _Turn(response, message, steps, verdicts)
        candidates = [_Turn(response, message, steps, (yield Evaluate(handle, steps)))]
        trigger = next((v for v in candidates[0].verdicts if v.action == "resample"), None)
        if trigger is None:
            chosen = candidates[0]
            verdicts = []
            for step in chosen.steps:
                verdicts.append((yield Judge(handle, step)))
            return _Turn(chosen.response, chosen.message, chosen.steps, verdicts)
        for _ in range(candidates_wanted(trigger) - 1):
            response = yield call
            message = _last_ai(response)
            steps = turn_steps(message, trajectory_id=handle.id, turn=turn, node=node)
            candidates.append(_Turn(response, message, steps, (yield Evaluate(handle, steps))))
        choice = choose_candidate(self.overseer.policy, trigger, [c.verdicts for c in candidates])
        chosen, passed = candidates[choice.index], choice.passed
        note = {"resample": {"candidates": len(candidates), "chosen": choice.index}}
        verdicts = []
        for step in chosen.steps:
            annotated = step.model_copy(update={"metadata": {**step.metadata, **note}})
            verdicts.append((yield Judge(handle, annotated, None if passed else len(candidates))))
        return _Turn(chosen.response, chosen.message, chosen.steps, verdicts, len(candidates))

    def _enforce_turn(self, handle: TrajectoryHandle, turn: _Turn) -> Any:
        halting = next((v for v in turn.verdicts if v.halt), None)
        if halting is not None:
            return AIMessage(content=self.stop_message(handle, f"{halting.rule}: {halting.reason}"))
        text = next(
            ((s, v) for s, v in zip(turn.steps, turn.verdicts, strict=True) if s.kind in ("plan", "final")), None
        )
        message = turn.message
        if text is not None:
            step, verdict = text
            if verdict.action == "escalate":
                decision = self._ask(handle, step, verdict)
                if decision.label == "reject":
                    return AIMessage(
                        content=f"A reviewer rejected this {step.kind}: {decision.comment or 'no reason given'}"
                    )
                if decision.label == "edit" and decision.content is not None:
                    message = message.model_copy(update={"content": decision.content})
            elif verdict.action not in PASSING:
                what = "answer withheld" if step.kind == "final" else "plan blocked"
                return AIMessage(content=f"[{what} by the oversight policy ({verdict.rule}): {verdict.reason}]")
        return turn.response if message is turn.message else message

    # --- a tool call ----------------------------------------------------------------------------------------

    def tool_call(self, handle: TrajectoryHandle, call: dict[str, Any], run: RunTool) -> Logic:
        """The last gate before a tool runs: judge (or reuse the verdict of) the call, enforce it, judge the result."""
        call_id = call.get("id") or uuid.uuid4().hex
        key = (handle.id, call_id)
        step = ToolCall(
            id=step_id(handle.id, "call", call_id),
            tool=call["name"],
            args=dict(call.get("args") or {}),
            call_id=call_id,
        )
        verdict = self._calls.get(key)
        if verdict is None:
            verdict = yield Judge(handle, step)
            self._calls[key] = verdict
        action = verdict.action
        if action == "resample":  # only a model hook can resample; here the rule's fallback applies
            action = verdict.fallback or "block"
        refusal: str | None = None
        if handle.halted and action not in PASSING:
            refusal = self.stop_message(handle, f"{verdict.rule}: {verdict.reason}")
        elif action == "block":
            refusal = (
                f"Blocked by the oversight policy ({verdict.rule}): {verdict.reason}. "
                "The tool did not run; do not retry this call."
            )
        elif action == "escalate":
            decision = self._ask(handle, step, verdict)
            if decision.label == "reject":
                refusal = (
                    f"A reviewer rejected this call: {decision.comment or 'no reason given'}. The tool did not run."
                )
            elif decision.label == "edit" and decision.args is not None:
                run = RunTool(run.call, run.acall, run.request.override(tool_call={**call, "args": decision.args}))
        if refusal is not None:
            self._calls.pop(key, None)
            return ToolMessage(content=refusal, tool_call_id=call_id, name=call["name"], status="error")
        result = self._results.get(key)
        if result is None:
            result = yield run
            self._results[key] = result
        if isinstance(result, ToolMessage):
            observation = observation_step(result, trajectory_id=handle.id, tool=call["name"])
            seen = self._calls.get((handle.id, f"{call_id}/result"))
            if seen is None:
                seen = yield Judge(handle, observation)
                self._calls[(handle.id, f"{call_id}/result")] = seen
            if seen.action == "sanitize" and seen.sanitized is not None:  # the agent reads the cleaned text
                result = result.model_copy(update={"content": seen.sanitized})
            withheld = seen.action not in PASSING and seen.action != "sanitize"
            if seen.action == "escalate":  # may raise GraphInterrupt: the caches stay for the resume
                withheld = self._ask(handle, observation, seen).label == "reject"
            if withheld:
                result = ToolMessage(
                    content=f"[tool output withheld by the oversight policy ({seen.rule}): {seen.reason}]",
                    tool_call_id=call_id,
                    name=call["name"],
                    status="error",
                )
        for stale in (key, (handle.id, f"{call_id}/result")):
            self._calls.pop(stale, None)
        self._results.pop(key, None)
        return result

    # --- escalation -----------------------------------------------------------------------------------------

    def _ask(self, handle: TrajectoryHandle, step: Step, verdict: Verdict) -> Decision:
        """Pause the run for a human (LangGraph ``interrupt``); record the answer as a review, once."""
        answer = interrupt(
            {
                "type": "overseer.escalation",
                "trajectory_id": handle.id,
                "index": verdict.index,
                "step": step.model_dump(mode="json"),
                "verdict": verdict.to_record(),
                "question": "approve, edit or reject this step?",
            }
        )
        decision = Decision.parse(answer)
        edited: dict[str, Any] | None = None
        if decision.label == "edit":
            edited = {"args": decision.args} if decision.args is not None else {"content": decision.content}
        review_id = uuid.uuid5(uuid.NAMESPACE_URL, f"overseer:{verdict.step_id}:escalation").hex
        handle.review(
            verdict, decision.label, reviewer=decision.reviewer, comment=decision.comment, edited=edited, id=review_id
        )
        return decision
