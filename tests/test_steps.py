import pytest
from pydantic import ValidationError

from overseer import FinalAnswer, Observation, Plan, Score, ToolCall, Trajectory, Verdict
from overseer.steps import step_adapter


def test_steps_are_frozen_and_reject_unknown_fields() -> None:
    call = ToolCall(tool="send_money", args={"amount": 3}, call_id="c1")
    with pytest.raises(ValidationError):
        call.tool = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="extra"):
        ToolCall(tool="x", argz={})  # type: ignore[call-arg]


def test_step_kind_discriminates() -> None:
    step = step_adapter.validate_python({"kind": "observation", "call_id": "c1", "content": "ok"})
    assert isinstance(step, Observation)
    with pytest.raises(ValidationError, match="tag"):
        step_adapter.validate_python({"kind": "nonsense", "content": "x"})


def test_trajectory_round_trips_through_json() -> None:
    trajectory = Trajectory(
        id="run-1",
        task="Pay the bill",
        steps=(
            Plan(content="read, then pay"),
            ToolCall(tool="read_file", args={"p": "b.txt"}, call_id="c1"),
            Observation(call_id="c1", content="IBAN X"),
            FinalAnswer(content="Paid."),
        ),
    )
    again = Trajectory.model_validate_json(trajectory.model_dump_json())
    assert again == trajectory
    assert [s.kind for s in again.steps] == ["plan", "tool_call", "observation", "final"]


def test_score_values_are_probabilities() -> None:
    with pytest.raises(ValidationError):
        Score(name="prm", value=1.5, scorer="x@1")


def test_verdict_record_has_the_documented_keys() -> None:
    verdict = Verdict(
        trajectory_id="run-42",
        index=3,
        step_id="s",
        kind="tool_call",
        tool="send_money",
        call_id="c2",
        scores={"prm": 0.07},
        action="block",
        rule="r",
        reason="why",
        policy="default@abc",
        scorer="m@1",
    )
    assert list(verdict.to_record()) == [
        "trajectory_id",
        "index",
        "kind",
        "tool",
        "call_id",
        "scores",
        "action",
        "rule",
        "reason",
        "policy",
        "scorer",
        "halt",
    ]
