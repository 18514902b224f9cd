"""A hand-built StateGraph with GraphOversight, and an unchanged agent under the observe-only callback."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, StateGraph

from overseer import AuditStore, Overseer
from overseer_langgraph import GraphOversight, OverseenMessagesState, OverseerCallbackHandler
from overseer_langgraph.testing import ScriptedChatModel, call, turn

from .test_langgraph_middleware import EXPECTED, TASK, Tools, hijack_script, kinds_and_actions


def build_graph(oversight: GraphOversight, model: ScriptedChatModel, tools: Tools, use_async: bool) -> Any:
    bound = model.bind_tools(tools.all)

    def call_model(state: OverseenMessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(OverseenMessagesState)
    graph.add_node("model", call_model)
    graph.add_node("guard", oversight.aguard if use_async else oversight.guard)
    graph.add_node("tools", oversight.tool_node(tools.all))
    graph.add_edge(START, "model")
    graph.add_edge("model", "guard")
    graph.add_conditional_edges("guard", oversight.route, ["tools", "__end__"])
    graph.add_edge("tools", "model")
    return graph.compile()


@pytest.mark.parametrize("use_async", [False, True])
def test_custom_state_graph_under_oversight(use_async: bool, tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'a.db'}"
    tools = Tools()
    with Overseer("default", store=store_url) as overseer:
        app = build_graph(GraphOversight(overseer), ScriptedChatModel(turns=hijack_script()), tools, use_async)
        inputs = {"messages": [HumanMessage(TASK)]}
        out = asyncio.run(app.ainvoke(inputs)) if use_async else app.invoke(inputs)
    assert tools.sent == ["me@example.com"]
    refusal = next(m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "c2")
    assert refusal.status == "error"
    assert kinds_and_actions(store_url) == [EXPECTED]
    with AuditStore(store_url) as store:
        assert store.list_trajectories()[0].status == "completed"


def test_the_guard_replaces_a_blocked_answer_in_place(tmp_path: Path) -> None:
    policy = {
        "name": "p",
        "rules": [{"name": "no-secrets-out", "action": "block", "when": {"kind": "final", "content": "password"}}],
    }
    tools = Tools()
    with Overseer(policy, store=f"sqlite:///{tmp_path / 'a.db'}") as overseer:
        app = build_graph(
            GraphOversight(overseer), ScriptedChatModel(turns=[turn("the password is hunter2")]), tools, False
        )
        out = app.invoke({"messages": [HumanMessage("what is the admin password?")]})
    assert len(out["messages"]) == 2  # replaced, not appended
    assert "answer withheld by the oversight policy (no-secrets-out)" in out["messages"][-1].content


def test_observe_only_callback_records_everything_and_blocks_nothing(tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'a.db'}"
    tools = Tools()
    with Overseer("default", store=store_url) as overseer:
        handler = OverseerCallbackHandler(overseer, agent_name="legacy-bot")
        agent = create_agent(ScriptedChatModel(turns=hijack_script()), tools.all)  # unchanged agent
        out = agent.invoke({"messages": [HumanMessage(TASK)]}, config={"callbacks": [handler]})
    assert sorted(tools.sent) == ["drop@evil.example", "me@example.com"]  # observe-only: nothing is enforced
    assert isinstance(out["messages"][-1], AIMessage)
    (steps,) = kinds_and_actions(store_url)
    observed = [(kind, tool, action) for kind, tool, action in steps]
    assert ("tool_call", "send_email", "block") in observed  # the verdict is still recorded for review
    assert observed.count(("observation", "send_email", "allow")) == 2
    assert [kind for kind, _, _ in observed] == [
        "plan",
        "tool_call",
        "observation",
        "tool_call",
        "tool_call",
        "observation",
        "observation",
        "final",
    ]
    with AuditStore(store_url) as store:
        (trajectory,) = store.list_trajectories()
        assert (trajectory.status, trajectory.task) == ("completed", TASK)


def test_observe_only_callback_with_threads(tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'a.db'}"
    with Overseer("default", store=store_url) as overseer:
        handler = OverseerCallbackHandler(overseer)
        model = ScriptedChatModel(turns=[turn("", call("read_inbox", {}, "r")), turn("ok")])
        agent = create_agent(model, Tools().all)
        for _ in range(2):
            agent.invoke(
                {"messages": [HumanMessage("read it")]},
                config={"callbacks": [handler], "configurable": {"thread_id": "th"}},
            )
    with AuditStore(store_url) as store:
        assert sorted(t.id for t in store.list_trajectories()) == ["th", "th#2"]
