"""The step model: what an agent does, one step at a time, and what overseer decides about it.

Every model here is frozen and rejects unknown fields. A :data:`Step` is one of six kinds, told apart by
``kind``: a :class:`Plan` (reasoning or plan text), a :class:`ToolCall`, an :class:`Observation` (a tool's
result, linked to its call by ``call_id``), a :class:`Message` (any other turn, such as a later user message),
a :class:`FinalAnswer`, and a :class:`ToolChange` (a tool whose description changed after it was pinned). A :class:`Trajectory` is a task and its steps. A scorer turns a step into named
:class:`Score` values; the policy turns the scores into a :class:`~overseer.verdict.Verdict`.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "FinalAnswer",
    "Message",
    "Observation",
    "Plan",
    "Provenance",
    "Review",
    "Score",
    "Step",
    "StepKind",
    "ToolCall",
    "ToolChange",
    "Trajectory",
    "step_adapter",
]

StepKind: TypeAlias = Literal["plan", "tool_call", "observation", "message", "final", "tool_change"]
"""The six kinds of step."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _new_id() -> str:
    return uuid.uuid4().hex


class Provenance(BaseModel):
    """Where a step came from."""

    model_config = _FROZEN

    source: str | None = None
    """What produced the record: an adapter name (``"langgraph"``) or ``"file.jsonl:12"``."""
    agent: str | None = None
    """The agent's name, where it has one."""
    model: str | None = None
    """The model that produced the step, where known."""
    node: str | None = None
    """The graph node or component that emitted the step."""
    run_id: str | None = None
    """The framework's own run id for the step."""
    at: datetime | None = None
    """When the step was produced."""


class _StepBase(BaseModel):
    model_config = _FROZEN

    id: str = Field(default_factory=_new_id)
    """A unique id for this step (generated when absent)."""
    provenance: Provenance | None = None
    """Where the step came from."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form JSON metadata; never read by the policy engine. The rules scorer reads one key of a tool call's:
    ``tool_hints`` (``read_only``, ``destructive``: what the tool's server declared; the MCP proxy sets it)."""

    def text(self) -> str:
        """The step as one line of text, for pattern rules and model input."""
        raise NotImplementedError


class Plan(_StepBase):
    """A plan or a piece of reasoning that the model wrote before acting."""

    kind: Literal["plan"] = "plan"
    """Always ``"plan"``."""
    content: str
    """The plan or reasoning text."""

    def text(self) -> str:
        """The plan text."""
        return self.content


class ToolCall(_StepBase):
    """A tool call that the model proposed."""

    kind: Literal["tool_call"] = "tool_call"
    """Always ``"tool_call"``."""
    tool: str = Field(min_length=1)
    """The tool's name."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The call's arguments, as a JSON object."""
    call_id: str | None = None
    """The call's id, which links it to its observation."""

    def args_json(self) -> str:
        """The arguments as compact JSON with sorted keys (nesting past 64 levels cut, as text)."""
        try:
            return json.dumps(self.args, sort_keys=True, ensure_ascii=False, default=str)
        except (RecursionError, ValueError):
            from overseer._text import clean_json

            return json.dumps(clean_json(self.args), sort_keys=True, ensure_ascii=False, default=str)

    def text(self) -> str:
        """``tool(args as JSON)``."""
        return f"{self.tool}({self.args_json()})"


class Observation(_StepBase):
    """What a tool returned; attacker-controlled text may arrive here."""

    kind: Literal["observation"] = "observation"
    """Always ``"observation"``."""
    content: str
    """The tool's result as text."""
    call_id: str | None = None
    """The id of the call this observation answers."""
    tool: str | None = None
    """The tool that produced it, where known."""
    is_error: bool = False
    """Whether the tool reported an error."""

    def text(self) -> str:
        """The observation text."""
        return self.content


class Message(_StepBase):
    """Any other turn: a later user message, an assistant message that is neither plan nor answer."""

    kind: Literal["message"] = "message"
    """Always ``"message"``."""
    role: Literal["user", "assistant", "system"]
    """Who said it."""
    content: str
    """What was said."""

    def text(self) -> str:
        """The message text."""
        return self.content


class FinalAnswer(_StepBase):
    """The agent's final answer to the task."""

    kind: Literal["final"] = "final"
    """Always ``"final"``."""
    content: str
    """The answer text."""

    def text(self) -> str:
        """The answer text."""
        return self.content


class ToolChange(_StepBase):
    """A tool whose description or input schema is not what was pinned: an MCP server's "rug pull".

    The MCP proxy pins what a model reads about each tool the first time it is listed (in the session, and in the
    audit store across sessions); a tool listed again with another pin is this step, judged before the changed tool
    reaches the client. A policy matches it with ``kind: tool_change``; a refused change withholds the tool.
    """

    kind: Literal["tool_change"] = "tool_change"
    """Always ``"tool_change"``."""
    tool: str = Field(min_length=1)
    """The tool's name."""
    server: str | None = None
    """The server that lists it, where known."""
    since: Literal["session", "store"] = "session"
    """Against what it changed: the pin taken earlier in this session, or the last accepted pin in the store."""
    pinned: str
    """The pin it had (a hash of its name, title, description and schemas)."""
    pin: str
    """The pin it has now."""
    before: str = ""
    """The description it had, where known."""
    after: str = ""
    """The description it has now."""

    def text(self) -> str:
        """``tool 'name' changed its description: <the new description>``."""
        return f"tool {self.tool!r} changed its description: {self.after}"


Step: TypeAlias = Annotated[
    Plan | ToolCall | Observation | Message | FinalAnswer | ToolChange, Field(discriminator="kind")
]
"""Any one step, told apart by ``kind``."""

step_adapter: TypeAdapter[Step] = TypeAdapter(Step)
"""Validates a dict or JSON into the right :data:`Step` class."""


class Trajectory(BaseModel):
    """A task and the steps an agent took on it."""

    model_config = _FROZEN

    id: str = Field(default_factory=_new_id)
    """The trajectory's id (generated when absent)."""
    task: str
    """What the user asked for."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form metadata; ``agent`` and ``model`` are shown by the audit commands."""
    steps: tuple[Step, ...] = ()
    """The steps, in order."""


class Score(BaseModel):
    """One named score of one step. Higher is better: ``value`` is the probability that the step is good."""

    model_config = _FROZEN

    name: str = Field(min_length=1)
    """The score's name, such as ``"prm"`` or ``"rules.secrets"``."""
    value: float = Field(ge=0.0, le=1.0)
    """The score, from 0 (bad) to 1 (good)."""
    scorer: str
    """The scorer that produced it, as ``name@version``."""
    label: str | None = None
    """A short label, such as ``"secret"``."""
    explanation: str | None = None
    """Why, in words."""
    spans: tuple[tuple[int, int], ...] | None = None
    """Character spans of the step's text that the score is about (an injected passage, say), as [start, end)."""


REVIEW_LABELS: dict[str, str] = {
    "approve": "an escalated step: let it run as proposed",
    "reject": "an escalated step: it must not run",
    "edit": "an escalated step: it ran with the reviewer's changes",
    "good": "the step itself was right (a training label for the PRM)",
    "bad": "the step itself was wrong (a training label for the PRM)",
    "correct-block": "the policy was right to block, sanitize, flag or escalate this step",
    "wrong-block": "a false alarm: the policy should have let this step through",
    "missed": "the policy let this step through, and should not have",
}
"""The labels a reviewer may give, with what each means (the CLI and the review page accept only these)."""


class Review(BaseModel):
    """A judgement of a recorded step by a person or a program. Reviews never overwrite one another."""

    model_config = _FROZEN

    id: str = Field(default_factory=_new_id)
    """The review's id."""
    trajectory_id: str
    """The trajectory of the reviewed step."""
    step_id: str
    """The reviewed step."""
    index: int = Field(ge=0)
    """The reviewed step's position in its trajectory."""
    reviewer: str = Field(min_length=1)
    """Who reviewed: a person's name or a program's."""
    reviewer_kind: Literal["human", "automated"] = "human"
    """Whether a person or a program reviewed."""
    label: str = Field(min_length=1)
    """The judgement: ``approve`` / ``edit`` / ``reject`` for an escalation, or any label (``good``, ``bad``)."""
    comment: str | None = Field(default=None, max_length=20_000)
    """Why, in words (at most 20,000 characters)."""
    edited: dict[str, Any] | None = None
    """For ``edit``: what the reviewer changed (new arguments, new text)."""
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    """When."""
