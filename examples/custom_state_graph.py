"""A hand-built LangGraph StateGraph under oversight: a guard node after the model, a guarded ToolNode.

Run: python examples/custom_state_graph.py
"""

from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, StateGraph

from overseer import Overseer
from overseer_langgraph import GraphOversight, OverseenMessagesState
from overseer_langgraph.testing import ScriptedChatModel, call, turn

ran: list[str] = []


@tool
def shell(command: str) -> str:
    """Run a shell command."""
    ran.append(command)
    return "ok"


model = ScriptedChatModel(
    turns=[
        turn("Cleaning the build folder.", call("shell", {"command": "rm -rf /"}, "s1")),
        turn("Only the build output then.", call("shell", {"command": "rm -r build/out"}, "s2")),
        turn("Done: removed build/out."),
    ]
).bind_tools([shell])


def call_model(state: OverseenMessagesState) -> dict[str, Any]:
    return {"messages": [model.invoke(state["messages"])]}


def main() -> None:
    """Build the graph, run it, show the result."""
    with Overseer("default", store="sqlite:///.overseer/examples.db") as overseer:
        oversight = GraphOversight(overseer, agent_name="build-bot")
        graph = StateGraph(OverseenMessagesState)
        graph.add_node("model", call_model)
        graph.add_node("guard", oversight.guard)  # judges every model turn
        graph.add_node("tools", oversight.tool_node([shell]))  # the last gate before side effects
        graph.add_edge(START, "model")
        graph.add_edge("model", "guard")
        graph.add_conditional_edges("guard", oversight.route, ["tools", "__end__"])
        graph.add_edge("tools", "model")
        result = graph.compile().invoke({"messages": [HumanMessage("Free some disk space in build/")]})
    for message in result["messages"]:
        print(f"{type(message).__name__:>13}: {str(message.content)[:110]}")
    print("commands run:", ran)


if __name__ == "__main__":
    main()
