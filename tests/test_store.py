"""The audit store's conformance suite, run against every backend (SQLite file, PostgreSQL)."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from overseer import AuditStore, Observation, Overseer, Plan, StoreError, ToolCall
from overseer.store._schema import metadata
from overseer.testing import FunctionScorer


def step_record(traj: str, idx: int, action: str = "allow", **extra: object) -> dict[str, object]:
    return {
        "type": "step",
        "id": f"{traj}-s{idx}",
        "trajectory_id": traj,
        "idx": idx,
        "kind": "tool_call",
        "tool": "send",
        "call_id": f"c{idx}",
        "action": action,
        "rule": "r1" if action != "allow" else None,
        "reason": "because",
        "policy": "p@1",
        "scorer": "m@1",
        "halt": False,
        "agent": "bot",
        "step": {
            "kind": "tool_call",
            "id": f"{traj}-s{idx}",
            "tool": "send",
            "args": {"n": idx},
            "call_id": f"c{idx}",
        },
        "errors": None,
        "created_at_ns": 1_700_000_000_000_000_000 + idx * 10**9,
        "latency_ms": 0.5,
        "trace_id": "0" * 32,
        "span_id": "1" * 16,
        "scores": [{"name": "prm", "value": 0.1 * idx, "label": None, "explanation": "x", "scorer": "m@1"}],
        **extra,
    }


def test_migrations_create_exactly_the_declared_schema(store_url: str) -> None:
    with AuditStore(store_url) as store, store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    AuditStore(store_url).close()  # opening again is a no-op


def test_writes_are_idempotent_and_read_back(store_url: str, open_store: Any) -> None:
    store = open_store(store_url)
    records = [
        step_record("t1", 0, trajectory={"task": "Do it", "meta": {"agent": "bot"}, "started_at_ns": 1}),
        step_record("t1", 1, "block"),
        step_record("t2", 0, "flag", agent="other"),
    ]
    store.write(records)
    store.write(records)  # a replay after a crash: nothing doubles
    assert (store.count("steps"), store.count("scores"), store.count("trajectories")) == (3, 3, 1)
    found = store.get_trajectory("t1")
    assert found is not None
    trajectory, steps = found
    assert (trajectory.task, trajectory.status, trajectory.agent) == ("Do it", "running", "bot")
    assert [s.index for s in steps] == [0, 1]
    assert isinstance(steps[1].step, ToolCall) and steps[1].step.args == {"n": 1}
    assert steps[1].verdict_record()["scores"] == {"prm": pytest.approx(0.1)}
    assert steps[1].created_at.tzinfo is not None
    # a trajectory that ends later is updated in place
    store.write(
        [
            {
                "type": "trajectory",
                "id": "t1",
                "task": "Do it",
                "status": "halted",
                "started_at_ns": 1,
                "ended_at_ns": 2,
                "n_steps": 2,
                "n_blocked": 1,
            }
        ]
    )
    assert store.get_trajectory("t1")[0].status == "halted"  # type: ignore[index]
    # a trajectory whose first step never arrived still reads back from its steps
    t2 = store.get_trajectory("t2")
    assert t2 is not None and t2[0].agent == "other" and t2[0].task is None
    assert store.get_trajectory("nope") is None
    assert store.get_step("t1-s1") is not None


def test_filters(store_url: str, open_store: Any) -> None:
    store = open_store(store_url)
    store.write([step_record("a", i, action) for i, action in enumerate(["allow", "block", "flag", "block"])])
    assert [s.index for s in store.list_steps(actions=["block"], newest_first=False)] == [1, 3]
    assert len(store.list_steps(actions=["block", "flag"])) == 3
    assert len(store.list_steps(rule="r1")) == 3
    assert store.list_steps(agent="nobody") == []
    start = datetime.fromtimestamp(1_700_000_000, tz=UTC)
    assert [s.index for s in store.list_steps(since=start + timedelta(seconds=2), newest_first=False)] == [
        2,
        3,
    ]
    assert [s.index for s in store.list_steps(until=start + timedelta(seconds=1))] == [0]
    assert len(store.list_steps(limit=2)) == 2


def test_overseer_records_every_decision(store_url: str, open_store: Any) -> None:
    scorer = FunctionScorer(lambda r: {"prm": 0.1 if r.step.kind == "tool_call" else 0.9})
    policy = {
        "name": "p",
        "rules": [
            {
                "name": "low",
                "action": "block",
                "when": {"kind": "tool_call", "score": {"prm": {"below": 0.5}}},
            }
        ],
    }
    with Overseer(policy, scorers=[scorer], store=store_url) as ov:
        for i in range(5):
            with ov.trajectory(f"task {i}", id=f"run-{i}", metadata={"agent": "a"}) as run:
                run.judge(Plan(content="plan"))
                run.judge(ToolCall(tool="send", args={"i": i}, call_id="c"))
                run.judge(Observation(call_id="c", content="ok"))
    store = open_store(store_url)
    assert store.count("steps") == 15 and store.count("trajectories") == 5
    trajectory, steps = store.get_trajectory("run-3")  # type: ignore[misc]
    assert (trajectory.task, trajectory.status, trajectory.n_steps, trajectory.n_blocked) == (
        "task 3",
        "completed",
        3,
        1,
    )
    assert [s.action for s in steps] == ["allow", "block", "allow"]
    assert steps[1].rule == "low" and steps[1].policy.startswith("p@") and steps[1].scorer == "function@0"


def test_unreachable_or_unknown_databases_say_so(tmp_path: object) -> None:
    with pytest.raises(StoreError, match="cannot open the audit store"):
        AuditStore("postgresql://nobody@127.0.0.1:1/none", connect_timeout_s=1)
    with pytest.raises(StoreError, match="unsupported database"):
        AuditStore("mysql://x@localhost/db")
    with pytest.raises(StoreError, match="not a database URL"):
        AuditStore("::nonsense::")


def test_reviews_are_recorded_and_never_overwrite_each_other(store_url: str, open_store: Any) -> None:
    with (
        Overseer({"name": "p"}, scorers=[FunctionScorer(lambda r: {"prm": 0.5})], store=store_url) as ov,
        ov.trajectory("task", id="rev") as run,
    ):
        verdict = run.judge(ToolCall(tool="send", args={"to": "a"}, call_id="c"))
        run.review(verdict, "edit", reviewer="dana", comment="wrong recipient", edited={"args": {"to": "b"}})
        run.review(verdict, "approve", reviewer="policy-bot", reviewer_kind="automated")
    store = open_store(store_url)
    reviews = store.list_reviews(step_id=verdict.step_id)
    assert [(r.label, r.reviewer, r.reviewer_kind) for r in reviews] == [
        ("edit", "dana", "human"),
        ("approve", "policy-bot", "automated"),
    ]
    assert reviews[0].edited == {"args": {"to": "b"}} and reviews[0].comment == "wrong recipient"
    assert reviews[0].index == 0 and reviews[0].trajectory_id == "rev"
    assert store.count("reviews") == 2
