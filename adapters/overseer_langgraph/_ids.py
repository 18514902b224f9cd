"""Which trajectory a LangGraph run is: its thread id where it has one."""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.config import get_config

from overseer_langgraph._gate import STATE_KEY


def thread_id() -> str | None:
    """The ``thread_id`` of the run being executed, if any."""
    try:
        config = get_config()
    except RuntimeError:  # outside a runnable context
        return None
    value = (config.get("configurable") or {}).get("thread_id")
    return None if value is None else str(value)


def next_trajectory_id(previous: str | None, thread: str | None) -> str:
    """The id of a new run: the thread id for its first run, ``<thread>#2`` for its second, a fresh id without one."""
    if thread is None:
        return f"lg-{uuid.uuid4().hex[:16]}"
    if previous is None:
        return thread
    base, _, number = previous.partition("#")
    if base != thread:
        return thread
    return f"{thread}#{int(number) + 1 if number.isdigit() else 2}"


def state_trajectory_id(state: Any) -> str | None:
    """The trajectory id kept in the agent's state."""
    value = state.get(STATE_KEY) if isinstance(state, dict) else getattr(state, STATE_KEY, None)
    return value if isinstance(value, str) else None


def state_messages(state: Any) -> list[Any]:
    """The agent state's messages."""
    if isinstance(state, dict):
        return list(state.get("messages") or [])
    return list(getattr(state, "messages", None) or [])
