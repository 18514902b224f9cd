"""Oversight for graphs you build yourself: a guarded ``ToolNode`` and a node that judges model turns."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NotRequired

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, MessagesState
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from overseer import ConfigError, Overseer, Policy, TrajectoryHandle
from overseer_langgraph._convert import task_of
from overseer_langgraph._gate import STATE_KEY, CallModel, Gate, RunTool, adrive, as_overseer, drive
from overseer_langgraph._ids import next_trajectory_id, state_messages, state_trajectory_id, thread_id


class OverseenMessagesState(MessagesState):
    """``MessagesState`` plus the id of the run's trajectory (use it, or add the key to your own state)."""

    overseer_trajectory_id: NotRequired[str]


class GraphOversight:
    """Oversight for a hand-built ``StateGraph``.

    Put :meth:`guard` (or :meth:`aguard`) right after your model node, and :meth:`tool_node` in place of your
    ``ToolNode``; route with :meth:`route`. The guard judges each model turn (a blocked answer or plan is
    replaced; tool calls are judged here and enforced by the tool node, the last gate before side effects).
    The guard cannot ask your model again, so a ``resample`` rule's fallback applies: use
    :class:`OverseerMiddleware` with ``create_agent`` for best-of-N resampling.
    """

    def __init__(
        self,
        overseer: Overseer | Policy | str | Path = "default",
        *,
        store: str | None = None,
        agent_name: str | None = None,
    ) -> None:
        self.overseer = as_overseer(overseer, store)
        self.gate = Gate(self.overseer, agent_name)

    def _handle(self, state: Any) -> TrajectoryHandle:
        previous = state_trajectory_id(state)
        if previous is not None and (open_handle := self.overseer.get(previous)) is not None:
            return open_handle
        thread = thread_id()
        trajectory_id = next_trajectory_id(previous, thread)
        return self.gate.handle(trajectory_id, task_of(state_messages(state)), {"thread_id": thread} if thread else {})

    @staticmethod
    def _update(handle: TrajectoryHandle, last: AIMessage, result: Any) -> tuple[dict[str, Any], bool]:
        """The state update for the judged turn, and whether the run ends with it."""
        update: dict[str, Any] = {STATE_KEY: handle.id}
        final = result if isinstance(result, AIMessage) else last
        if final is not last:  # replace the model's message in place (same id)
            update["messages"] = [AIMessage(content=final.content, tool_calls=final.tool_calls, id=last.id)]
        return update, not final.tool_calls

    def _last(self, state: Any) -> AIMessage:
        messages = state_messages(state)
        if not messages or not isinstance(messages[-1], AIMessage):
            raise ConfigError(
                "GraphOversight.guard must run right after the model node (the last message is not an AIMessage)"
            )
        message: AIMessage = messages[-1]
        return message

    def guard(self, state: Any) -> dict[str, Any]:
        """A graph node: judge the model's last turn."""
        last = self._last(state)
        handle = self._handle(state)
        turn = sum(isinstance(m, AIMessage) for m in state_messages(state)) - 1
        result = drive(self.gate.model_turn(handle, turn, CallModel(call=lambda: last), node="guard"))
        update, finished = self._update(handle, last, result)
        if finished:
            handle.end()
        return update

    async def aguard(self, state: Any) -> dict[str, Any]:
        """The async twin of :meth:`guard`."""
        last = self._last(state)
        handle = self._handle(state)
        turn = sum(isinstance(m, AIMessage) for m in state_messages(state)) - 1
        result = await adrive(self.gate.model_turn(handle, turn, CallModel(call=lambda: last), node="guard"))
        update, finished = self._update(handle, last, result)
        if finished:
            await handle.aend()
        return update

    @staticmethod
    def route(state: Any) -> str:
        """After the guard: ``"tools"`` when the (judged) last turn calls tools, else the end."""
        messages = state_messages(state)
        last = messages[-1] if messages else None
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    def tool_node(self, tools: Sequence[Any], **kwargs: Any) -> ToolNode:
        """A ``ToolNode`` whose every call passes the oversight gate first."""

        def wrap(request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> Any:
            handle = self._handle(request.state)
            return drive(self.gate.tool_call(handle, dict(request.tool_call), RunTool(handler, None, request)))

        async def awrap(
            request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
        ) -> Any:
            handle = self._handle(request.state)
            return await adrive(self.gate.tool_call(handle, dict(request.tool_call), RunTool(None, handler, request)))

        return ToolNode(tools, wrap_tool_call=wrap, awrap_tool_call=awrap, **kwargs)
