"""LangChain v1 agent middleware: ``create_agent(model, tools, middleware=[OverseerMiddleware()])``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from overseer import Overseer, Policy, TrajectoryHandle
from overseer_langgraph._convert import task_of
from overseer_langgraph._gate import STATE_KEY, CallModel, Gate, RunTool, adrive, as_overseer, drive
from overseer_langgraph._ids import next_trajectory_id, state_messages, state_trajectory_id, thread_id


class OverseerState(AgentState[Any]):
    """The agent state, plus the id of the run's trajectory."""

    overseer_trajectory_id: NotRequired[str]


class OverseerMiddleware(AgentMiddleware[OverseerState, Any, Any]):
    """Puts a LangChain v1 agent under oversight: every model turn and tool call is judged before it has effects.

    - ``wrap_model_call`` turns the model's output into steps (plan or answer text, each tool call) and judges
      them; ``resample`` asks the model again and keeps the best-scored candidate that passes.
    - ``wrap_tool_call`` is the last gate before side effects: a blocked call gets an error ``ToolMessage``
      that says why, and the tool never runs; the tool's result is judged as an observation.
    - ``escalate`` pauses the run with ``interrupt()``; resume it with ``Command(resume={"decision": "approve" |
      "edit" | "reject", ...})``. The answer is stored as a review. (Interrupts need a checkpointer.)
    - The policy's trajectory-level stop ends the run with a final message that says why.

    Args:
        overseer: an :class:`Overseer`, or a policy (file, name, :class:`Policy`) to build one with.
        store: the audit store when building the Overseer here (default: ``$OVERSEER_STORE`` or SQLite).
        agent_name: recorded as the agent of every trajectory.
    """

    state_schema = OverseerState

    def __init__(
        self,
        overseer: Overseer | Policy | str | Path = "default",
        *,
        store: str | None = None,
        agent_name: str | None = None,
    ) -> None:
        super().__init__()
        self.overseer = as_overseer(overseer, store)
        self.gate = Gate(self.overseer, agent_name)

    @property
    def name(self) -> str:
        """The middleware's name in the graph."""
        return "OverseerMiddleware"

    # --- the run's trajectory -------------------------------------------------------------------------------

    def _start(self, state: Any) -> dict[str, Any]:
        thread = thread_id()
        trajectory_id = next_trajectory_id(state_trajectory_id(state), thread)
        metadata = {"thread_id": thread} if thread else {}
        self.gate.handle(trajectory_id, task_of(state_messages(state)), metadata)
        return {STATE_KEY: trajectory_id}

    def _handle(self, state: Any) -> TrajectoryHandle:
        trajectory_id = state_trajectory_id(state) or thread_id() or next_trajectory_id(None, None)
        return self.overseer.get(trajectory_id) or self.gate.handle(trajectory_id, task_of(state_messages(state)))

    def before_agent(self, state: OverseerState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Start the run's trajectory."""
        return self._start(state)

    async def abefore_agent(self, state: OverseerState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Start the run's trajectory."""
        return self._start(state)

    def after_agent(self, state: OverseerState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """End the run's trajectory."""
        handle = self.overseer.get(state_trajectory_id(state) or "")
        if handle is not None:
            handle.end()
        return None

    async def aafter_agent(self, state: OverseerState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """End the run's trajectory."""
        handle = self.overseer.get(state_trajectory_id(state) or "")
        if handle is not None:
            await handle.aend()
        return None

    # --- the hooks --------------------------------------------------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        """Judge the model's turn before anything in it runs; resample where the policy says so."""
        handle = self._handle(request.state)
        call = CallModel(call=lambda: handler(request))
        return drive(self.gate.model_turn(handle, len(request.messages), call, node="model"))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> Any:
        """Async twin of :meth:`wrap_model_call`."""
        handle = self._handle(request.state)
        call = CallModel(call=None, acall=lambda: handler(request))
        return await adrive(self.gate.model_turn(handle, len(request.messages), call, node="model"))

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        """The last gate before the tool runs; the result is judged as an observation."""
        handle = self._handle(request.state)
        result: ToolMessage | Command[Any] = drive(
            self.gate.tool_call(handle, dict(request.tool_call), RunTool(handler, None, request))
        )
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async twin of :meth:`wrap_tool_call`."""
        handle = self._handle(request.state)
        result: ToolMessage | Command[Any] = await adrive(
            self.gate.tool_call(handle, dict(request.tool_call), RunTool(None, handler, request))
        )
        return result
