"""Span and attribute names: the GenAI semantic conventions where they exist, ``overseer.*`` for the rest.

The telemetry recorder writes these and the audit exporter reads them back: this module is their contract.
"""

from __future__ import annotations

# GenAI semantic conventions
OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE = "gen_ai.evaluation.score.value"
EVALUATION_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"

# overseer's own
RECORD = "overseer.record"  # "step" or "trajectory": which spans the audit store keeps
TRAJECTORY_ID = "overseer.trajectory.id"
TRAJECTORY_TASK = "overseer.trajectory.task"
TRAJECTORY_META = "overseer.trajectory.metadata"
TRAJECTORY_STATUS = "overseer.trajectory.status"
TRAJECTORY_STARTED = "overseer.trajectory.started_ns"
TRAJECTORY_COUNTS = "overseer.trajectory.counts"
STEP_ID = "overseer.step.id"
STEP_INDEX = "overseer.step.index"
STEP_KIND = "overseer.step.kind"
STEP_JSON = "overseer.step.json"
VERDICT_ACTION = "overseer.verdict.action"
VERDICT_RULE = "overseer.verdict.rule"
VERDICT_REASON = "overseer.verdict.reason"
VERDICT_HALT = "overseer.verdict.halt"
VERDICT_SPANS = "overseer.verdict.spans"
VERDICT_ERRORS = "overseer.verdict.errors"
POLICY = "overseer.policy"
SCORER = "overseer.scorer"
LATENCY_MS = "overseer.latency_ms"
REVIEW_JSON = "overseer.review.json"
CHAIN_PREV = "overseer.chain.prev"
CHAIN_HASH = "overseer.chain.hash"

# GenAI semantic conventions: guardrails (gen_ai.guardrail.*, development status) and other spans
PROVIDER_NAME = "gen_ai.provider.name"
AGENT_ID = "gen_ai.agent.id"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
GUARDRAIL_COMPONENT = "gen_ai.guardrail.component.name"
GUARDRAIL_TARGET_TYPE = "gen_ai.guardrail.target.type"
GUARDRAIL_TARGET_SUBTYPE = "gen_ai.guardrail.target.subtype"
GUARDRAIL_TARGET_ID = "gen_ai.guardrail.target.id"
GUARDRAIL_VERDICT = "gen_ai.guardrail.verdict.type"
GUARDRAIL_VERDICT_REASON = "gen_ai.guardrail.verdict.reason"
GUARDRAIL_ACTION = "gen_ai.guardrail.action.type"
GUARDRAIL_POLICY_ID = "gen_ai.guardrail.security.policy.id"
GUARDRAIL_RULE_ID = "gen_ai.guardrail.security.policy.rule.id"
GUARDRAIL_RISK_CATEGORY = "gen_ai.guardrail.security.risk.category"
GUARDRAIL_RISK_SCORE = "gen_ai.guardrail.security.risk.score"
GUARDRAIL_CONTENT_MODIFIED = "gen_ai.guardrail.security.content.modified"

# OpenInference (Arize Phoenix): what kind of span a viewer should draw
OPENINFERENCE_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"

CONTENT_SWITCH = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CONTENT_ATTRIBUTES = frozenset(
    {
        STEP_JSON,
        TOOL_CALL_ARGUMENTS,
        TOOL_CALL_RESULT,
        VERDICT_REASON,
        VERDICT_SPANS,
        TRAJECTORY_TASK,
        TRAJECTORY_META,
        REVIEW_JSON,
        INPUT_VALUE,
        OUTPUT_VALUE,
    }
)
"""What a step said (arguments, outputs, the task, reasons that quote values): kept by the audit store, sent to
other span processors only when the standard content switch is on (the GenAI conventions make content opt-in)."""
