"""Telemetry: every trajectory and every decided step becomes an OpenTelemetry span.

Spans follow the GenAI semantic conventions: ``invoke_agent`` for a trajectory, one ``run_guardrail overseer``
span per decided step (``gen_ai.guardrail.*``: target, verdict, action, policy and rule, risk; ``error.type`` and
ERROR status where a call was blocked or a run halted), ``execute_tool`` only around a tool that really ran (from
its call's verdict to its result), one ``gen_ai.evaluation.result`` event per score, ``openinference.span.kind``
for Phoenix, and ``overseer.*`` attributes for the rest, which the audit store reads. What steps said (arguments,
results, the task, reasons that quote values) is content: the audit store keeps it; OTLP and other processors get
it only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is true (or ``capture_content=True``). The audit
store is filled by a span processor on the same spans; setting the standard ``OTEL_EXPORTER_OTLP_ENDPOINT``
(or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) also sends them to any OTLP backend.

Overseer uses a tracer provider of its own, always sampling: audit records are not a sample.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import Logger
from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from overseer import _guardrail
from overseer import _semconv as sc
from overseer._version import __version__
from overseer.exceptions import MissingDependencyError, StoreError
from overseer.steps import Review, Score, Step, ToolCall
from overseer.store import AuditExporter, AuditSpanProcessor, AuditStore, SpillQueue, default_spill_dir
from overseer.verdict import Verdict

__all__ = ["Telemetry"]

log = logging.getLogger("overseer.telemetry")

_UNLIMITED = SpanLimits(
    max_attributes=SpanLimits.UNSET,
    max_events=SpanLimits.UNSET,
    max_span_attributes=SpanLimits.UNSET,
    max_event_attributes=SpanLimits.UNSET,
    max_attribute_length=SpanLimits.UNSET,
    max_span_attribute_length=SpanLimits.UNSET,
)


def _otlp_configured() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


class Telemetry:
    """Records trajectories and steps as spans, and owns the span processors (audit store, OTLP, yours).

    Args:
        store: an :class:`AuditStore` or a database URL to fill; ``None`` for no audit store.
        processors: more span processors (an ``InMemorySpanExporter`` behind a ``SimpleSpanProcessor`` in tests).
        log_processors: log record processors that get every score as a log-based ``gen_ai.evaluation.result``
            event, parented to its decision's span (the GenAI conventions define evaluations both ways); with OTLP
            configured, the events go over OTLP/HTTP too.
        otlp: send spans over OTLP/HTTP; by default, when the standard OTel environment variables name an endpoint.
        spill_dir: where records wait while the store is down (see :func:`overseer.store.default_spill_dir`).
    """

    def __init__(
        self,
        *,
        store: AuditStore | str | None = None,
        processors: Sequence[SpanProcessor] = (),
        log_processors: Sequence[LogRecordProcessor] = (),
        otlp: bool | None = None,
        spill_dir: str | Path | None = None,
        service_name: str = "overseer",
        capture_content: bool | None = None,
    ) -> None:
        resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", service_name)})
        self.provider = TracerProvider(sampler=ALWAYS_ON, resource=resource, span_limits=_UNLIMITED)
        self.store: AuditStore | None = self._open(store) if isinstance(store, str) else store
        self.audit: AuditSpanProcessor | None = None
        if self.store is not None:
            spill = SpillQueue(spill_dir or default_spill_dir(self.store.url))
            self.audit = AuditSpanProcessor(AuditExporter(self.store, spill))
            self.provider.add_span_processor(self.audit)
        self.capture_content = _guardrail.capture_content() if capture_content is None else capture_content
        """Whether other processors than the audit store get what steps said (arguments, outputs, the task)."""

        def gated(processor: SpanProcessor) -> SpanProcessor:
            return processor if self.capture_content else _guardrail.ContentGate(processor)

        for processor in processors:
            self.provider.add_span_processor(gated(processor))
        if otlp if otlp is not None else _otlp_configured():
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ImportError:
                raise MissingDependencyError("sending spans over OTLP", "otlp") from None
            self.provider.add_span_processor(gated(BatchSpanProcessor(OTLPSpanExporter())))
            log_processors = [*log_processors, _otlp_log_processor()]
        self.tracer = self.provider.get_tracer("overseer", __version__)
        self.log_provider: LoggerProvider | None = None
        self.events: Logger | None = None
        """Where scores go as log-based events (``None``: no log processor, so none are made)."""
        if log_processors:
            self.log_provider = LoggerProvider(resource=resource)
            for log_processor in log_processors:
                self.log_provider.add_log_record_processor(log_processor)
            self.events = self.log_provider.get_logger("overseer", __version__)

    @staticmethod
    def _open(url: str) -> AuditStore:
        """Open a store; a database that is down now is not fatal: records spill until it answers."""
        store = AuditStore(url, migrate=False)  # a malformed URL or a missing driver still fails here, loudly
        try:
            store.migrate()
        except StoreError as err:
            log.warning("%s; audit records will spill to disk until it answers", err)
        return store

    def start_trajectory(self, trajectory_id: str, task: str, metadata: Mapping[str, Any], policy: str) -> Span:
        """Open the span of a trajectory (ended by :meth:`end_trajectory`)."""
        agent = metadata.get("agent")
        attributes: dict[str, Any] = {
            sc.RECORD: "trajectory",
            sc.OPERATION: "invoke_agent",
            sc.CONVERSATION_ID: trajectory_id,
            sc.TRAJECTORY_ID: trajectory_id,
            sc.POLICY: policy,
        }
        if isinstance(agent, str):
            attributes[sc.AGENT_NAME] = agent
        agent_id = metadata.get("agent_id", agent)
        if isinstance(agent_id, str):
            attributes[sc.AGENT_ID] = agent_id
        if isinstance(metadata.get("provider"), str):
            attributes[sc.PROVIDER_NAME] = metadata["provider"]
        if isinstance(metadata.get("model"), str):
            attributes[sc.REQUEST_MODEL] = metadata["model"]
        attributes[sc.OPENINFERENCE_KIND] = "AGENT"
        attributes[sc.INPUT_VALUE] = task
        name = f"invoke_agent {agent}" if isinstance(agent, str) else "invoke_agent"
        return self.tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes)

    def record_step(
        self,
        parent: Span,
        *,
        step: Step,
        verdict: Verdict,
        scores: Mapping[str, Score],
        started_ns: int,
        agent: str | None,
        trajectory: tuple[str, Mapping[str, Any]] | None = None,
        chain: tuple[str, str] | None = None,
        step_json: str | None = None,
        args_json: str | None = None,
        enforced: bool = True,
    ) -> None:
        """Emit the ``run_guardrail`` span of one decided step. Never raises: telemetry must not break the agent.

        ``enforced``: whether the verdict is applied (``False`` for observe-only runs and replays: action ``audit``).
        """
        try:
            self._record_step(
                parent, step, verdict, scores, started_ns, agent, trajectory, chain, step_json, args_json, enforced
            )
        except Exception:
            log.exception("could not record step %s of %s", verdict.index, verdict.trajectory_id)

    def _record_step(
        self,
        parent: Span,
        step: Step,
        verdict: Verdict,
        scores: Mapping[str, Score],
        started_ns: int,
        agent: str | None,
        trajectory: tuple[str, Mapping[str, Any]] | None,
        chain: tuple[str, str] | None = None,
        step_json: str | None = None,
        args_json: str | None = None,
        enforced: bool = True,
    ) -> None:
        now = time.time_ns()
        step_json = step_json if step_json is not None else step.model_dump_json()
        attributes = self._step_attributes(step, verdict, step_json, args_json, agent, chain)
        attributes[sc.LATENCY_MS] = (now - started_ns) / 1e6
        attributes.update(self._guardrail(step, verdict, scores, enforced))
        if trajectory is not None:
            task, metadata = trajectory
            attributes[sc.TRAJECTORY_TASK] = task
            attributes[sc.TRAJECTORY_META] = json.dumps(dict(metadata), default=str)
            attributes[sc.TRAJECTORY_STARTED] = started_ns
        span = self.tracer.start_span(
            "run_guardrail overseer",
            context=trace.set_span_in_context(parent),
            attributes=attributes,
            start_time=started_ns,
        )
        for score in scores.values():
            span.add_event(sc.EVALUATION_EVENT, _evaluation(score), timestamp=now)
        if self.events is not None:
            self._evaluation_events(span, scores, now)
        if enforced and (verdict.action in ("block", "resample") or verdict.halt):
            span.set_status(Status(StatusCode.ERROR, "halted" if verdict.halt else f"{verdict.kind} blocked"))
        span.end(end_time=now)

    def _evaluation_events(self, span: Span, scores: Mapping[str, Score], now: int) -> None:
        """Each score as a log-based ``gen_ai.evaluation.result`` event in the decision span's context."""
        assert self.events is not None
        context = trace.set_span_in_context(span)
        for score in scores.values():
            attributes = _evaluation(score)
            if not self.capture_content:  # an explanation quotes the step: content, sent only when asked for
                attributes.pop(sc.EVALUATION_EXPLANATION, None)
            self.events.emit(event_name=sc.EVALUATION_EVENT, attributes=attributes, context=context, timestamp=now)

    @staticmethod
    def _step_attributes(
        step: Step,
        verdict: Verdict,
        step_json: str,
        args_json: str | None,
        agent: str | None,
        chain: tuple[str, str] | None,
    ) -> dict[str, Any]:
        """What the audit store reads of a decided step (``overseer.*``), with the GenAI tool attributes."""
        attributes: dict[str, Any] = {
            sc.RECORD: "step",
            sc.CONVERSATION_ID: verdict.trajectory_id,
            sc.TRAJECTORY_ID: verdict.trajectory_id,
            sc.STEP_ID: step.id,
            sc.STEP_INDEX: verdict.index,
            sc.STEP_KIND: step.kind,
            sc.STEP_JSON: step_json,
            sc.VERDICT_ACTION: verdict.action,
            sc.VERDICT_REASON: verdict.reason,
            sc.VERDICT_HALT: verdict.halt,
            sc.POLICY: verdict.policy,
            sc.SCORER: verdict.scorer,
            sc.INPUT_VALUE: step_json,
        }
        if verdict.spans is not None:
            attributes[sc.VERDICT_SPANS] = json.dumps([list(s) for s in verdict.spans])
        if chain is not None:
            attributes[sc.CHAIN_PREV], attributes[sc.CHAIN_HASH] = chain
        if verdict.rule is not None:
            attributes[sc.VERDICT_RULE] = verdict.rule
        if verdict.errors:
            attributes[sc.VERDICT_ERRORS] = json.dumps(verdict.errors)
        if agent:
            attributes[sc.AGENT_NAME] = agent
        if verdict.tool is not None:
            attributes[sc.TOOL_NAME] = verdict.tool
        if verdict.call_id is not None:
            attributes[sc.TOOL_CALL_ID] = verdict.call_id
        if isinstance(step, ToolCall):
            attributes[sc.TOOL_CALL_ARGUMENTS] = args_json if args_json is not None else step.args_json()
        if verdict.sanitized is not None:
            attributes[sc.OUTPUT_VALUE] = verdict.sanitized
        return attributes

    @staticmethod
    def _guardrail(step: Step, verdict: Verdict, scores: Mapping[str, Score], enforced: bool) -> dict[str, Any]:
        """The ``gen_ai.guardrail.*`` attributes of a decision (and ``error.type`` where it stopped something)."""
        target_type, subtype = _guardrail.target(step.kind)
        values = {name: score.value for name, score in scores.items()}
        out: dict[str, Any] = {
            sc.OPERATION: "run_guardrail",
            sc.OPENINFERENCE_KIND: "GUARDRAIL",
            sc.GUARDRAIL_COMPONENT: "overseer",
            sc.GUARDRAIL_TARGET_TYPE: target_type,
            sc.GUARDRAIL_TARGET_SUBTYPE: subtype,
            sc.GUARDRAIL_TARGET_ID: verdict.call_id or step.id,
            sc.GUARDRAIL_VERDICT: _guardrail.verdict_type(verdict.action),
            sc.GUARDRAIL_ACTION: _guardrail.action_type(verdict.action, enforced),
            sc.GUARDRAIL_POLICY_ID: verdict.policy,
            sc.GUARDRAIL_VERDICT_REASON: _guardrail.public_reason(verdict.reason),
        }
        if verdict.rule is not None:
            out[sc.GUARDRAIL_RULE_ID] = verdict.rule
        risk = _guardrail.risk_category(verdict.action, verdict.rule, values)
        if risk is not None:
            out[sc.GUARDRAIL_RISK_CATEGORY] = risk
        if values:
            out[sc.GUARDRAIL_RISK_SCORE] = round(1.0 - min(values.values()), 6)
        if verdict.action == "sanitize":
            out[sc.GUARDRAIL_CONTENT_MODIFIED] = verdict.sanitized is not None
        if enforced and verdict.halt:
            out[sc.ERROR_TYPE] = "halted"
        elif enforced and verdict.action in ("block", "resample"):
            out[sc.ERROR_TYPE] = "blocked"
        return out

    def record_tool_run(
        self, parent: Span, *, tool: str, call_id: str | None, args_json: str, result: str, is_error: bool,
        started_ns: int, ended_ns: int, agent: str | None,
    ) -> None:  # fmt: skip
        """Emit the ``execute_tool`` span of a tool that really ran: from its call's allow to its result. Never raises."""
        try:
            attributes: dict[str, Any] = {
                sc.OPERATION: "execute_tool",
                sc.OPENINFERENCE_KIND: "TOOL",
                sc.TOOL_NAME: tool,
                sc.TOOL_CALL_ARGUMENTS: args_json,
                sc.TOOL_CALL_RESULT: result,
                sc.INPUT_VALUE: args_json,
                sc.OUTPUT_VALUE: result,
            }
            if call_id is not None:
                attributes[sc.TOOL_CALL_ID] = call_id
            if agent:
                attributes[sc.AGENT_NAME] = agent
            span = self.tracer.start_span(
                f"execute_tool {tool}",
                context=trace.set_span_in_context(parent),
                attributes=attributes,
                start_time=started_ns,
            )
            if is_error:
                span.set_attribute(sc.ERROR_TYPE, "tool_error")
                span.set_status(Status(StatusCode.ERROR, "the tool reported an error"))
            span.end(end_time=max(ended_ns, started_ns))
        except Exception:
            log.exception("could not record the run of tool %s", tool)

    def record_review(self, parent: Span | None, review: Review, chain: tuple[str, str] | None = None) -> None:
        """Emit a review as a span (the audit store keeps it). Never raises."""
        try:
            context = trace.set_span_in_context(parent) if parent is not None else None
            attributes = {
                sc.RECORD: "review",
                sc.TRAJECTORY_ID: review.trajectory_id,
                sc.CONVERSATION_ID: review.trajectory_id,
                sc.STEP_ID: review.step_id,
                sc.REVIEW_JSON: review.model_dump_json(),
            }
            if chain is not None:
                attributes[sc.CHAIN_PREV], attributes[sc.CHAIN_HASH] = chain
            self.tracer.start_span("overseer.review", context=context, attributes=attributes).end()
        except Exception:
            log.exception("could not record a review of step %s", review.step_id)

    def end_trajectory(
        self, span: Span, *, task: str, metadata: Mapping[str, Any], status: str, counts: Mapping[str, int]
    ) -> None:
        """Close a trajectory's span with its outcome. Never raises."""
        try:
            span.set_attributes(
                {
                    sc.TRAJECTORY_TASK: task,
                    sc.TRAJECTORY_META: json.dumps(dict(metadata), default=str),
                    sc.TRAJECTORY_STATUS: status,
                    sc.TRAJECTORY_COUNTS: json.dumps(dict(counts)),
                }
            )
            if status == "halted":
                span.set_attribute(sc.ERROR_TYPE, "halted")
                span.set_status(Status(StatusCode.ERROR, "the policy stopped the run"))
            span.end()
        except Exception:
            log.exception("could not record the end of a trajectory")

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until every span so far is exported (for the audit store: in the store or the spill)."""
        if self.log_provider is not None:
            self.log_provider.force_flush(int(timeout_s * 1000))
        return self.provider.force_flush(int(timeout_s * 1000))

    def shutdown(self) -> None:
        """Flush and stop every processor, then close the audit store's connections."""
        self.provider.shutdown()
        if self.log_provider is not None:
            self.log_provider.shutdown()
        if self.store is not None:
            self.store.close()


def _evaluation(score: Score) -> dict[str, Any]:
    """A score as the attributes of a ``gen_ai.evaluation.result`` event."""
    event: dict[str, Any] = {sc.EVALUATION_NAME: score.name, sc.EVALUATION_SCORE: score.value, sc.SCORER: score.scorer}
    if score.label is not None:
        event[sc.EVALUATION_LABEL] = score.label
    if score.explanation is not None:
        event[sc.EVALUATION_EXPLANATION] = score.explanation
    return event


def _otlp_log_processor() -> LogRecordProcessor:
    """Evaluation events over OTLP/HTTP, to the endpoint the standard variables name."""
    try:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    except ImportError:
        raise MissingDependencyError("sending events over OTLP", "otlp") from None
    return BatchLogRecordProcessor(OTLPLogExporter())
