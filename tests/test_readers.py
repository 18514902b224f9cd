import gzip
import json
from pathlib import Path

import pytest

from overseer import (
    FinalAnswer,
    Message,
    Observation,
    Plan,
    ToolCall,
    TrajectoryFormatError,
    read_trajectories,
)

NATIVE = {
    "id": "run-42",
    "task": "Pay the bill in bill-december.txt",
    "metadata": {"agent": "banking-bot", "model": "gpt-4o-mini"},
    "steps": [
        {"kind": "plan", "content": "Read the bill, then pay it."},
        {
            "kind": "tool_call",
            "tool": "read_file",
            "args": {"file_path": "bill-december.txt"},
            "call_id": "c1",
        },
        {"kind": "observation", "call_id": "c1", "content": "Bill ... IBAN UK12 ..."},
        {
            "kind": "tool_call",
            "tool": "send_money",
            "args": {"recipient": "UK12...", "amount": 98.7},
            "call_id": "c2",
        },
        {"kind": "final", "content": "Paid."},
    ],
}

CHAT = {
    "id": "chat-1",
    "messages": [
        {"role": "system", "content": "You are a bank assistant."},
        {"role": "user", "content": "Pay the bill in bill.txt"},
        {
            "role": "assistant",
            "content": "I will read it first.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "bill.txt"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "get_balance", "arguments": {}}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "IBAN UK12, 98.70"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "1000.00"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c3",
                    "function": {"name": "send_money", "arguments": {"recipient": "UK12", "amount": 98.7}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "ok"},
        {"role": "user", "content": "Thanks! Anything else?"},
        {"role": "assistant", "content": "The bill is paid."},
    ],
}


def write_lines(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_native_format_reads_the_documented_example(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", json.dumps(NATIVE), "", json.dumps({**NATIVE, "id": "run-43"}))
    trajectories = list(read_trajectories(path))
    assert [t.id for t in trajectories] == ["run-42", "run-43"]
    steps = trajectories[0].steps
    assert isinstance(steps[1], ToolCall) and steps[1].args == {"file_path": "bill-december.txt"}
    assert isinstance(steps[2], Observation) and steps[2].call_id == "c1"
    assert trajectories[0].metadata["agent"] == "banking-bot"


def test_openai_transcript_maps_every_message(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "chat.jsonl", json.dumps(CHAT))
    (trajectory,) = read_trajectories(path, "openai")
    assert trajectory.task == "Pay the bill in bill.txt"
    assert trajectory.metadata["system"] == "You are a bank assistant."
    kinds = [type(s) for s in trajectory.steps]
    assert kinds == [
        Plan,
        ToolCall,
        ToolCall,
        Observation,
        Observation,
        ToolCall,
        Observation,
        Message,
        FinalAnswer,
    ]
    first_call, obs = trajectory.steps[1], trajectory.steps[3]
    assert isinstance(first_call, ToolCall) and first_call.args == {"path": "bill.txt"}  # a JSON string
    assert isinstance(trajectory.steps[5], ToolCall) and trajectory.steps[5].args["amount"] == 98.7  # an object
    assert isinstance(obs, Observation) and obs.tool == "read_file" and obs.call_id == "c1"
    assert isinstance(trajectory.steps[4], Observation) and trajectory.steps[4].content == "1000.00"


def test_auto_format_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps(NATIVE) + "\n" + json.dumps(CHAT) + "\n")
    assert [t.id for t in read_trajectories(path)] == ["run-42", "chat-1"]


@pytest.mark.parametrize(
    ("line", "field", "problem"),
    [
        ("{not json", "", "not JSON"),
        ("[1, 2]", "", "expected a JSON object"),
        (
            json.dumps({**NATIVE, "steps": [{"kind": "tool_call", "args": {}}]}),
            "steps[0].tool",
            "Field required",
        ),
        (
            json.dumps({**NATIVE, "steps": [{"kind": "teleport"}]}),
            "steps[0]",
            "does not match any of the expected tags",
        ),
        (json.dumps({"task": "t", "steps": [], "colour": 1}), "colour", "unknown field"),
        (json.dumps({**NATIVE, "task": 5}), "task", "valid string"),
    ],
)
def test_native_errors_name_file_line_and_field(tmp_path: Path, line: str, field: str, problem: str) -> None:
    path = write_lines(tmp_path / "bad.jsonl", json.dumps(NATIVE), line)
    with pytest.raises(TrajectoryFormatError) as info:
        list(read_trajectories(path, "native"))
    err = info.value
    assert (err.file, err.line, err.field) == (str(path), 2, field)
    assert problem in err.problem
    assert str(err).startswith(f"{path}:2")


@pytest.mark.parametrize(
    ("mutate", "field", "problem"),
    [
        (
            lambda m: m[2]["tool_calls"][0]["function"].update(arguments="{oops"),
            "messages[2].tool_calls[0].function.arguments",
            "not valid JSON",
        ),
        (
            lambda m: m[2]["tool_calls"][0]["function"].update(arguments="[1]"),
            "messages[2].tool_calls[0].function.arguments",
            "JSON object",
        ),
        (lambda m: m[3].update(tool_call_id=7), "messages[3].tool_call_id", "expected a string"),
        (lambda m: m[1].update(role="wizard"), "messages[1].role", "unknown role"),
        (
            lambda m: m[2]["tool_calls"][0]["function"].pop("name"),
            "messages[2].tool_calls[0].function.name",
            "tool name",
        ),
    ],
)
def test_openai_errors_name_the_field(tmp_path: Path, mutate, field: str, problem: str) -> None:  # type: ignore[no-untyped-def]
    chat = json.loads(json.dumps(CHAT))
    mutate(chat["messages"])
    path = write_lines(tmp_path / "bad.jsonl", json.dumps(chat))
    with pytest.raises(TrajectoryFormatError) as info:
        list(read_trajectories(path, "openai"))
    assert (info.value.line, info.value.field) == (1, field)
    assert problem in info.value.problem


def test_skip_invalid_reports_and_continues(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        json.dumps(NATIVE).encode() + b'\n\xff\xfe broken\n{"task": 1}\n' + json.dumps(CHAT).encode() + b"\n"
    )
    errors: list[TrajectoryFormatError] = []
    ids = [t.id for t in read_trajectories(path, skip_invalid=True, on_error=errors.append)]
    assert ids == ["run-42", "chat-1"]
    assert [(e.line, e.field) for e in errors] == [(2, ""), (3, "task")]
    assert "not UTF-8" in errors[0].problem


def test_a_transcript_without_a_user_message_is_rejected(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", json.dumps({"messages": [{"role": "system", "content": "x"}]}))
    with pytest.raises(TrajectoryFormatError, match="first user message is the task"):
        list(read_trajectories(path))


def test_openai_variants_seen_in_the_wild(tmp_path: Path) -> None:
    chat = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "developer", "content": [{"type": "input_text", "text": "be brief"}]},
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            },
            {"role": "function", "name": "get_weather", "content": "rain"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "k", "type": "custom", "custom": {"name": "shell", "input": "ls -la"}}],
            },
            {"role": "tool", "tool_call_id": "lost-in-truncation", "name": "shell", "content": "total 0"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Rain in Oslo."}]},
        ],
    }
    (trajectory,) = read_trajectories(write_lines(tmp_path / "w.jsonl", json.dumps(chat)))
    calls = [s for s in trajectory.steps if isinstance(s, ToolCall)]
    assert [(c.tool, c.args) for c in calls] == [("get_weather", {"city": "Oslo"}), ("shell", {"input": "ls -la"})]
    unlinked = trajectory.steps[3]
    assert isinstance(unlinked, Observation) and unlinked.tool == "shell" and unlinked.call_id == "lost-in-truncation"
    assert trajectory.steps[-1] == FinalAnswer(id=trajectory.steps[-1].id, content="Rain in Oslo.")
    assert trajectory.metadata == {"model": "gpt-4o-mini", "system": "be brief"}
