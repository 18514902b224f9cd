"""Observe-only oversight for agents that cannot be changed: a LangChain callback handler.

It scores and records every model turn and tool result but never blocks: ``config={"callbacks": [handler]}``.
Verdicts are computed off the agent's path (submitted, not awaited); errors are logged, never raised.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import LLMResult

from overseer import Observation, Overseer, Policy, TrajectoryHandle
from overseer_langgraph._convert import observation_step, task_of, text_of, turn_steps
from overseer_langgraph._gate import as_overseer
from overseer_langgraph._ids import next_trajectory_id

log = logging.getLogger("overseer.langgraph")


class OverseerCallbackHandler(BaseCallbackHandler):
    """Records every step of any LangChain / LangGraph run it is attached to, judged but never enforced."""

    raise_error = False

    def __init__(
        self,
        overseer: Overseer | Policy | str | Path = "default",
        *,
        store: str | None = None,
        agent_name: str | None = None,
    ) -> None:
        self.overseer = as_overseer(overseer, store)
        self.agent_name = agent_name
        self._lock = threading.Lock()
        self._roots: dict[UUID, UUID] = {}
        self._runs: dict[UUID, TrajectoryHandle] = {}
        self._turns: dict[UUID, int] = {}
        self._tools: dict[UUID, str] = {}
        self._last_id: dict[str, str] = {}

    def _root(self, run_id: UUID, parent_run_id: UUID | None) -> UUID:
        with self._lock:
            root = self._roots.get(parent_run_id, parent_run_id) if parent_run_id is not None else run_id
            self._roots[run_id] = root
            return root

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A root chain starts a trajectory."""
        try:
            root = self._root(run_id, parent_run_id)
            if parent_run_id is not None or root in self._runs:
                return
            thread = (metadata or {}).get("thread_id")
            thread = None if thread is None else str(thread)
            trajectory_id = next_trajectory_id(self._last_id.get(thread or ""), thread)
            if thread:
                self._last_id[thread] = trajectory_id
            messages = inputs.get("messages", []) if isinstance(inputs, dict) else []
            meta = {"framework": "langgraph", "mode": "observe"}
            if self.agent_name:
                meta["agent"] = self.agent_name
            task = task_of([m for m in messages if isinstance(m, BaseMessage)]) or text_of(
                next((m[1] for m in messages if isinstance(m, tuple) and m[0] in ("user", "human")), "")
            )
            self._runs[root] = self.overseer.trajectory(task, id=trajectory_id, metadata=meta)
        except Exception:
            log.exception("overseer callback: on_chain_start failed")

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        """The root chain's end ends the trajectory."""
        self._finish(run_id, parent_run_id, "completed")

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        """The root chain's failure ends the trajectory (``GraphInterrupt`` leaves it open for the resume)."""
        if type(error).__name__ in ("GraphInterrupt", "NodeInterrupt"):
            return
        self._finish(run_id, parent_run_id, "error")

    def _finish(self, run_id: UUID, parent_run_id: UUID | None, status: str) -> None:
        if parent_run_id is not None:
            return
        try:
            handle = self._runs.pop(run_id, None)
            self._turns.pop(run_id, None)
            if handle is not None:
                handle.end(status)
            with self._lock:
                for key in [k for k, v in self._roots.items() if v == run_id]:
                    self._roots.pop(key, None)
        except Exception:
            log.exception("overseer callback: ending a trajectory failed")

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Remember which run the model call belongs to."""
        self._root(run_id, parent_run_id)

    def on_llm_end(
        self, response: LLMResult, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        """Judge the model's turn (plan or answer, each tool call) without waiting."""
        try:
            root = self._root(run_id, parent_run_id)
            handle = self._runs.get(root)
            if handle is None or not response.generations or not response.generations[0]:
                return
            message = getattr(response.generations[0][0], "message", None)
            if not isinstance(message, AIMessage):
                return
            turn = self._turns.get(root, 0)
            self._turns[root] = turn + 1
            for step in turn_steps(message, trajectory_id=handle.id, turn=turn, node="observe"):
                handle.submit(step)
        except Exception:
            log.exception("overseer callback: on_llm_end failed")

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Remember the tool's name."""
        self._root(run_id, parent_run_id)
        self._tools[run_id] = (serialized or {}).get("name") or kwargs.get("name") or "tool"

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        """Judge the tool's result as an observation, without waiting."""
        try:
            root = self._root(run_id, parent_run_id)
            handle = self._runs.get(root)
            tool = self._tools.pop(run_id, None)
            if handle is None:
                return
            if isinstance(output, ToolMessage):
                step: Observation = observation_step(output, trajectory_id=handle.id, tool=tool)
            else:
                step = Observation(tool=tool, content=text_of(getattr(output, "content", output)))
            handle.submit(step)
        except Exception:
            log.exception("overseer callback: on_tool_end failed")
