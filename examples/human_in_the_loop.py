"""Escalation to a human: the run pauses with LangGraph interrupt(), a reviewer answers, the run resumes.

Run: python examples/human_in_the_loop.py
"""

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from overseer import AuditStore, Overseer
from overseer_langgraph import OverseerMiddleware
from overseer_langgraph.testing import ScriptedChatModel, call, turn

deleted: list[str] = []


@tool
def delete_customer(customer_id: str) -> str:
    """Delete a customer record."""
    deleted.append(customer_id)
    return f"deleted {customer_id}"


POLICY = {
    "name": "support-desk",
    "extends": "default",
    "rules": [
        {"name": "human-approves-deletions", "action": "escalate", "when": {"kind": "tool_call", "tool": "delete_*"}}
    ],
}

STORE = "sqlite:///.overseer/examples.db"


def main() -> None:
    """Pause at the deletion, let a reviewer edit it, resume."""
    model = ScriptedChatModel(
        turns=[
            turn("", call("delete_customer", {"customer_id": "C-1042"}, "d1")),
            turn("The customer record was deleted."),
        ]
    )
    config = {"configurable": {"thread_id": "ticket-5521"}}
    with Overseer(POLICY, store=STORE) as overseer:
        agent = create_agent(
            model, [delete_customer], middleware=[OverseerMiddleware(overseer)], checkpointer=InMemorySaver()
        )
        paused = agent.invoke({"messages": [HumanMessage("Delete the duplicate record of customer C-1042")]}, config)
        request = paused["__interrupt__"][0].value
        print("paused for review:", request["step"]["tool"], request["step"]["args"], "-", request["verdict"]["reason"])
        print("deleted so far:", deleted)
        # A reviewer sees the request (in a UI, a ticket, a chat) and corrects the id:
        answer = {
            "decision": "edit",
            "args": {"customer_id": "C-1042-dup"},
            "reviewer": "dana",
            "comment": "C-1042 is the real record; delete the duplicate",
        }
        result = agent.invoke(Command(resume=answer), config)
    print("final answer:", result["messages"][-1].content)
    print("deleted:", deleted)
    with AuditStore(STORE) as store:
        for review in store.list_reviews(trajectory_id="ticket-5521"):
            print(f"review by {review.reviewer}: {review.label} {review.edited} ({review.comment})")


if __name__ == "__main__":
    main()
