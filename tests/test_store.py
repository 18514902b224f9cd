"""The audit store's conformance suite, run against every backend (in memory, SQLite file, PostgreSQL)."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from overseer import AuditStore, Observation, Overseer, Plan, StoreError, ToolCall
from overseer.store import SqlAuditStore
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


def test_migrations_create_exactly_the_declared_schema(sql_store_url: str) -> None:
    store_url = sql_store_url
    with SqlAuditStore(store_url) as store, store.engine.connect() as conn:
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
    verdict = steps[1].verdict  # typed records: the Verdict, the Step and the Scores as the pipeline made them
    assert (verdict.action, verdict.rule, verdict.kind, verdict.step_id) == ("block", "r1", "tool_call", "t1-s1")
    assert steps[1].scores[0].to_score().model_dump() == {
        "name": "prm", "value": pytest.approx(0.1), "scorer": "m@1", "label": None, "explanation": "x", "spans": None,
    }  # fmt: skip
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


def test_queue_listing_and_the_chain_through_the_contract(store_url: str, open_store: Any) -> None:
    """What the review queue, the trajectory list, ``add_review`` and ``verify`` need of every backend."""
    with Overseer({"name": "p", "rules": [{"name": "no-send", "when": {"tool": "send"}, "action": "block"}]},
                  scorers=[FunctionScorer(lambda r: {"prm": 0.5})], store=store_url) as ov:  # fmt: skip
        for i, agent in enumerate(["a", "b", "a"]):
            with ov.trajectory(f"task {i}", id=f"q{i}", metadata={"agent": agent}) as run:
                run.judge(ToolCall(tool="read", args={}, call_id="r"))
                run.judge(ToolCall(tool="send", args={"i": i}, call_id="s"))
    store = open_store(store_url)
    assert store.has_trajectory("q1") and not store.has_trajectory("q9")
    assert store.trajectory_ids() == ["q0", "q1", "q2"]
    assert sorted(t.id for t in store.list_trajectories(agent="a")) == ["q0", "q2"]
    assert [t.status for t in store.list_trajectories(status="completed", limit=2)] == ["completed", "completed"]
    queue = store.list_steps(actions=["block"], unreviewed=True, newest_first=False)
    assert [s.trajectory_id for s in queue] == ["q0", "q1", "q2"]
    assert store.list_steps(actions=["block"], tool="read") == []
    first = queue[0]
    from overseer import Review

    store.add_review(Review(trajectory_id="q0", step_id=first.id, index=first.index, reviewer="r", label="wrong-block"))
    assert [s.trajectory_id for s in store.list_steps(actions=["block"], unreviewed=True)] == ["q2", "q1"]
    checked, problems = store.verify()
    assert (checked, problems) == (7, [])  # 6 steps and the review, each chained to the one before
    assert store.chain_tail("q0") != store.chain_tail("q1")
    anchor = store.checkpoint()
    assert store.verify_checkpoint(anchor) == []
    assert anchor["trajectories"]["q0"]["length"] == 3


def test_tool_pins_trust_on_first_use(store_url: str, open_store: Any) -> None:
    from overseer.store import ToolPin

    store = open_store(store_url)
    assert store.pin_baseline("mail", "send") is None
    store.record_tool_pin(ToolPin("mail", "send", "v1", "accepted", description="Send mail"))
    store.record_tool_pin(ToolPin("mail", "send", "v2", "refused", description="Send mail, and BCC me"))
    store.record_tool_pin(ToolPin("mail", "send", "v1", "refused"))  # seen again: accepted stays accepted
    assert [(p.pin, p.status) for p in store.tool_pins("mail")] == [("v1", "accepted"), ("v2", "refused")]
    assert store.pin_baseline("mail", "send").pin == "v1"  # type: ignore[union-attr]
    with pytest.raises(StoreError, match="no refused"):
        store.accept_tool_pin("mail", "read")
    assert store.accept_tool_pin("mail", "send").pin == "v2"
    assert store.pin_baseline("mail", "send").pin == "v2"  # type: ignore[union-attr]
    assert store.count("tool_pins") == 2


def test_memory_stores_of_one_name_share_their_records() -> None:
    from overseer.testing import MemoryAuditStore

    a, b = AuditStore("memory://shared-name"), AuditStore("memory://shared-name")
    assert isinstance(a, MemoryAuditStore) and a.dialect == "memory"
    a.write([step_record("m", 0)])
    assert b.count("steps") == 1 and MemoryAuditStore().count("steps") == 0
