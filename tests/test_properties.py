"""Property-based tests: whatever bytes or YAML arrive, the readers and the policy loader answer with a result or
their own clear error, never another exception."""

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overseer import PolicyError, TrajectoryFormatError
from overseer.policy import policy_from_text
from overseer.readers import read_trajectories

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "function", "x"])},
        optional={
            "content": json_values,
            "tool_calls": json_values,
            "tool_call_id": json_values,
            "function_call": json_values,
            "name": json_values,
        },
    ),
    max_size=6,
)
FAST = settings(
    max_examples=int(os.environ.get("OVERSEER_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    derandomize=not os.environ.get("OVERSEER_HYPOTHESIS_EXAMPLES"),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def outcome(action: Callable[[], object]) -> Exception | None:
    """None when the action succeeds, overseer's own error when it refuses; anything else propagates."""
    try:
        action()
    except (TrajectoryFormatError, PolicyError) as err:
        return err
    return None


def read_all(path: Path) -> None:
    err = outcome(lambda: list(read_trajectories(path)))
    if isinstance(err, TrajectoryFormatError):
        assert err.line >= 1
        assert str(path) in str(err)


@FAST
@given(data=st.binary(max_size=300))
def test_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    read_all(path)


@FAST
@given(record=json_values)
def test_any_json_value(tmp_path: Path, record: object) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n")
    read_all(path)


@FAST
@given(chat=messages, extra=st.dictionaries(st.sampled_from(["id", "metadata", "model", "steps", "task"]), json_values))
def test_any_chat_shaped_record(tmp_path: Path, chat: list[dict[str, object]], extra: dict[str, object]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"messages": chat, **extra}) + "\n")
    read_all(path)


def test_extends_of_something_unreadable(tmp_path: Path) -> None:
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00")
    for target in (str(tmp_path), str(tmp_path / "binary.yaml")):
        with pytest.raises(PolicyError, match="cannot read"):
            policy_from_text(f"name: p\nextends: {target}\n")


def test_deeply_nested_and_huge_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        "[" * 100_000
        + "]" * 100_000
        + "\n"
        + json.dumps({"task": "t", "steps": [], "metadata": {"x": "y" * 2_000_000}})
        + "\n"
    )
    errors: list[TrajectoryFormatError] = []
    assert [t.task for t in read_trajectories(path, skip_invalid=True, on_error=errors.append)] == ["t"]
    assert errors[0].line == 1


@FAST
@given(text=st.text(max_size=200))
def test_any_policy_text(text: str) -> None:
    err = outcome(lambda: policy_from_text(text))
    assert err is None or (isinstance(err, PolicyError) and err.problems)


@FAST
@given(
    policy=st.dictionaries(
        st.sampled_from(
            [
                "name",
                "rules",
                "scorers",
                "stop",
                "on_scorer_error",
                "extends",
                "default_action",
                "version",
                "scorer_timeout_s",
            ]
        ),
        json_values,
    )
)
def test_any_policy_shaped_mapping(policy: dict[str, object]) -> None:
    import yaml

    err = outcome(lambda: policy_from_text(yaml.safe_dump(policy)))
    assert err is None or (isinstance(err, PolicyError) and err.problems)
