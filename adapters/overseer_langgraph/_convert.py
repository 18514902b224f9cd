"""Between LangChain messages and overseer steps."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from overseer import FinalAnswer, Observation, Plan, Provenance, Step, ToolCall

_NS = uuid.UUID("5f1e3a3c-6c1d-4c39-9a55-0b1f0b7e2a11")


def text_of(content: Any) -> str:
    """A message's content as text (string content, or the text parts of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return "" if content is None else str(content)


def task_of(messages: Sequence[BaseMessage]) -> str:
    """The task of a run: its last human message (the request this run answers)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return text_of(message.content)
    return ""


def step_id(trajectory_id: str, kind: str, key: str) -> str:
    """A step id derived from where the step is, so that judging it again (after a resume) stores one row."""
    return uuid.uuid5(_NS, f"{trajectory_id}\x00{kind}\x00{key}").hex


def turn_steps(message: AIMessage, *, trajectory_id: str, turn: int, node: str | None = None) -> list[Step]:
    """The steps of one model turn: its text (a plan when it calls tools, else the final answer) and its calls."""
    provenance = Provenance(source="langgraph", model=(message.response_metadata or {}).get("model_name"), node=node)
    steps: list[Step] = []
    text = text_of(message.content).strip()
    if message.tool_calls:
        if text:
            steps.append(Plan(id=step_id(trajectory_id, "plan", str(turn)), content=text, provenance=provenance))
        for i, call in enumerate(message.tool_calls):
            call_id = call.get("id") or f"turn{turn}-{i}"
            steps.append(
                ToolCall(
                    id=step_id(trajectory_id, "call", call_id),
                    tool=call["name"],
                    args=dict(call.get("args") or {}),
                    call_id=call_id,
                    provenance=provenance,
                )
            )
    else:
        steps.append(FinalAnswer(id=step_id(trajectory_id, "final", str(turn)), content=text, provenance=provenance))
    return steps


def observation_step(message: ToolMessage, *, trajectory_id: str, tool: str | None) -> Observation:
    """A tool's result as an observation linked to its call."""
    return Observation(
        id=step_id(trajectory_id, "observation", message.tool_call_id),
        call_id=message.tool_call_id,
        tool=tool or message.name,
        content=text_of(message.content),
        is_error=message.status == "error",
        provenance=Provenance(source="langgraph"),
    )
