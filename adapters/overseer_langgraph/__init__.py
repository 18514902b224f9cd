"""overseer for LangGraph and LangChain v1 agents.

- :class:`OverseerMiddleware`: ``create_agent(model, tools, middleware=[OverseerMiddleware("default")])``.
- :class:`GraphOversight`: for your own ``StateGraph``: a guarded ``ToolNode`` and a node that judges model turns.
- :class:`OverseerCallbackHandler`: observe-only, for agents you cannot change: ``config={"callbacks": [...]}``.
"""

from overseer_langgraph._callback import OverseerCallbackHandler
from overseer_langgraph._gate import STATE_KEY, Decision
from overseer_langgraph._graph import GraphOversight, OverseenMessagesState
from overseer_langgraph._middleware import OverseerMiddleware, OverseerState

__all__ = [
    "STATE_KEY",
    "Decision",
    "GraphOversight",
    "OverseenMessagesState",
    "OverseerCallbackHandler",
    "OverseerMiddleware",
    "OverseerState",
]
