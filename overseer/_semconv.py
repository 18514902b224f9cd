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
