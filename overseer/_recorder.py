"""The recorded copy of a trajectory: what is stored and sent, apart from what is judged.

A :class:`Recorder` owns one trajectory's record: each step masked once by the policy's redactor, cleaned into JSON
that every store takes, chained to the record before it (SHA-256), and emitted as a span (through which the audit
store gets it). Judging hands it the real step and the real verdict; the caller of ``judge`` gets those back
unmasked, while everything recorded is masked.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from overseer._text import clean_json, clean_str
from overseer.redact import Redactor
from overseer.scorers import ScoreRequest
from overseer.steps import Observation, Review, Score, Step, ToolCall
from overseer.store import genesis, link, review_content, step_content
from overseer.telemetry import Telemetry
from overseer.verdict import Verdict

__all__ = ["Recorder", "recordable"]


def recordable(step: Step) -> dict[str, Any]:
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


class Recorder:
    """Records one trajectory: its header, its decided steps, the tools that ran, its reviews and its end."""

    def __init__(
        self,
        telemetry: Telemetry,
        redactor: Redactor | None,
        *,
        trajectory_id: str,
        task: str,
        metadata: Mapping[str, Any],
        policy: str,
    ) -> None:
        self.telemetry = telemetry
        self.redactor = redactor
        self.trajectory_id = trajectory_id
        self._task = task
        self._metadata = dict(metadata)
        agent = metadata.get("agent")
        self._agent = agent if isinstance(agent, str) else None
        self._lock = threading.Lock()
        self._masked: dict[str, Step] = {}
        self._chain = genesis(trajectory_id)
        self._running: dict[str, tuple[int, str, str]] = {}
        """call id -> (when its verdict let it run, tool, arguments as recorded): tools that ran, for their spans."""
        self.span = telemetry.start_trajectory(trajectory_id, task, self._metadata, policy)

    # --- the masked view ---------------------------------------------------------------------------------------

    def masked(self, step: Step) -> Step:
        """``step`` as recorded: masked by the policy's redactor (each step masked once)."""
        if self.redactor is None:
            return step
        with self._lock:
            found = self._masked.get(step.id)
        if found is None:
            found = self.redactor.step(step)
            with self._lock:
                self._masked[step.id] = found
        return found

    def header(self) -> tuple[str, dict[str, Any]]:
        """The task and metadata as recorded (masked where the policy says so)."""
        if self.redactor is None:
            return clean_str(self._task), clean_json(self._metadata)
        return clean_str(self.redactor.text(self._task)), clean_json(self.redactor.value(self._metadata))

    def request(self, history: tuple[Step, ...], step: Step) -> ScoreRequest:
        """What the scorers see: the steps as they are, or masked where the policy says ``scorers_see: redacted``."""
        if self.redactor is not None and self.redactor.spec.scorers_see == "redacted":
            task, metadata = self.header()
            return ScoreRequest(
                trajectory_id=self.trajectory_id,
                task=task,
                history=tuple(self.masked(s) for s in history),
                step=self.masked(step),
                metadata=metadata,
            )
        return ScoreRequest(
            trajectory_id=self.trajectory_id, task=self._task, history=history, step=step, metadata=self._metadata
        )

    def _link(self, content: dict[str, Any]) -> tuple[str, str]:
        """Chain a record to the previous one of this trajectory: (prev_hash, hash)."""
        with self._lock:
            prev = self._chain
            self._chain = link(prev, content)
            return prev, self._chain

    # --- records -----------------------------------------------------------------------------------------------

    def step(
        self, index: int, step: Step, verdict: Verdict, scores: Mapping[str, Score], started_ns: int, enforced: bool
    ) -> None:
        """Record a decided step: masked, cleaned, chained and sent as its ``run_guardrail`` span."""
        recorded, recorded_verdict = step, verdict
        if self.redactor is not None:  # what is stored and sent is masked; the caller gets the real verdict
            recorded = self.masked(step)
            recorded_verdict = verdict.model_copy(update={"reason": self.redactor.text(verdict.reason)})
        step_json = recordable(recorded)  # serialised once: for the chain and for the span
        recorded_verdict = recorded_verdict.model_copy(
            update={
                "reason": clean_str(recorded_verdict.reason),
                "tool": clean_str(recorded_verdict.tool) if recorded_verdict.tool else recorded_verdict.tool,
                "call_id": clean_str(recorded_verdict.call_id) if recorded_verdict.call_id else None,
            }
        )
        chain = self._link(step_content(recorded_verdict.to_record(), step_json))
        self.telemetry.record_step(
            self.span,
            step=recorded,
            verdict=recorded_verdict,
            scores=scores,
            started_ns=started_ns,
            agent=self._agent,
            trajectory=self.header() if index == 0 else None,
            chain=chain,
            step_json=json.dumps(step_json, ensure_ascii=False),
            args_json=json.dumps(step_json["args"], sort_keys=True, ensure_ascii=False)
            if isinstance(recorded, ToolCall)
            else None,
            enforced=enforced,
        )
        self._tool_run(recorded, verdict, started_ns, enforced, step_json)

    def _tool_run(self, step: Step, verdict: Verdict, started: int, enforced: bool, recorded: dict[str, Any]) -> None:
        """A call let through is remembered; its result closes the ``execute_tool`` span of the tool's run."""
        if isinstance(step, ToolCall) and step.call_id and (not enforced or verdict.action in ("allow", "flag")):
            args = json.dumps(recorded["args"], sort_keys=True, ensure_ascii=False)
            with self._lock:
                self._running[step.call_id] = (time.time_ns(), step.tool, args)
        elif isinstance(step, Observation) and step.call_id:
            with self._lock:
                ran = self._running.pop(step.call_id, None)
            if ran is not None:
                self.telemetry.record_tool_run(
                    self.span, tool=ran[1], call_id=step.call_id, args_json=ran[2], result=step.content,
                    is_error=step.is_error, started_ns=ran[0], ended_ns=started, agent=self._agent,
                )  # fmt: skip

    def review(self, review: Review) -> None:
        """Record a review (its comment and edits masked), chained after the trajectory's last record."""
        recorded = review
        if self.redactor is not None:
            recorded = review.model_copy(
                update={
                    "comment": self.redactor.text(review.comment) if review.comment else review.comment,
                    "edited": self.redactor.value(review.edited) if review.edited else review.edited,
                }
            )
        chain = self._link(review_content(clean_json(recorded.model_dump(mode="json"))))
        self.telemetry.record_review(self.span, recorded, chain)

    def end(self, status: str, counts: Mapping[str, int]) -> None:
        """Close the trajectory's record with its outcome."""
        task, metadata = self.header()
        self.telemetry.end_trajectory(self.span, task=task, metadata=metadata, status=status, counts=counts)
