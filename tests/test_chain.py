"""Tamper evidence: editing, deleting or reordering a stored record by hand is caught and named."""

import json
from typing import Any

import sqlalchemy as sa
from click.testing import CliRunner

from overseer import Overseer, Plan, ToolCall
from overseer.cli import cli
from overseer.testing import FunctionScorer


def record(store_url: str) -> list[str]:
    scorer = FunctionScorer(lambda r: {"q": 0.4 if r.step.kind == "tool_call" else 0.9})
    with Overseer({"name": "p"}, scorers=[scorer], store=store_url) as ov:
        for t in ("t1", "t2"):
            with ov.trajectory("task", id=t) as run:
                verdicts = [
                    run.judge(Plan(content="plan")),
                    run.judge(ToolCall(tool="send", args={"to": "a"})),
                    run.judge(Plan(content="done")),
                ]
                run.review(verdicts[1], "approve", reviewer="dana")
    return [v.step_id for v in verdicts]


def verify(store_url: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "verify", "--store", store_url, "--json"], catch_exceptions=False)
    if result.exit_code == 0:
        return result.exit_code, result.output.strip().splitlines()[-1]
    problems = [json.loads(line) for line in result.output.splitlines()][:-1]
    return result.exit_code, " | ".join(f"{p['trajectory_id']} {p['record']} {p['problem']}" for p in problems)


def sql(open_store: Any, store_url: str, statement: str) -> None:
    with open_store(store_url).engine.begin() as conn:
        conn.execute(sa.text(statement))


def test_an_untouched_store_verifies(store_url: str) -> None:
    record(store_url)
    assert verify(store_url) == (0, '{"checked": 8, "problems": 0}')


def test_an_edited_row_is_named(sql_store_url: str, open_store: Any) -> None:
    store_url = sql_store_url  # the record is edited in the database itself
    ids = record(store_url)
    sql(open_store, store_url, f"UPDATE steps SET action = 'allow', reason = 'fine' WHERE id = '{ids[1]}'")
    code, out = verify(store_url)
    assert code == 1
    assert f"t2 step 1 ({ids[1]}) content changed since it was recorded" in out
    assert "t1" not in out


def test_an_edited_score_and_an_edited_review_are_named(sql_store_url: str, open_store: Any) -> None:
    store_url = sql_store_url  # the record is edited in the database itself
    ids = record(store_url)
    sql(open_store, store_url, f"UPDATE scores SET value = 0.99 WHERE step_id = '{ids[1]}'")
    sql(open_store, store_url, "UPDATE reviews SET label = 'reject' WHERE trajectory_id = 't1'")
    code, out = verify(store_url)
    assert code == 1 and f"step 1 ({ids[1]}) content changed" in out and "t1 review" in out


def test_a_deleted_row_breaks_the_chain_at_the_next_record(sql_store_url: str, open_store: Any) -> None:
    store_url = sql_store_url  # the record is edited in the database itself
    ids = record(store_url)
    sql(open_store, store_url, f"DELETE FROM steps WHERE id = '{ids[0]}'")
    code, out = verify(store_url)
    assert code == 1 and f"step 1 ({ids[1]}) its predecessor is missing" in out


def test_reordered_rows_are_caught(sql_store_url: str, open_store: Any) -> None:
    store_url = sql_store_url  # the record is edited in the database itself
    ids = record(store_url)
    sql(open_store, store_url, f"UPDATE steps SET idx = 7 WHERE id = '{ids[0]}'")
    sql(open_store, store_url, f"UPDATE steps SET idx = 0 WHERE id = '{ids[2]}'")
    code, out = verify(store_url)
    assert code == 1 and f"({ids[0]}) content changed" in out and f"({ids[2]}) content changed" in out


def test_a_review_from_the_command_line_joins_the_chain(sql_store_url: str) -> None:
    store_url = sql_store_url  # the record is edited in the database itself
    ids = record(store_url)
    result = CliRunner().invoke(
        cli,
        ["audit", "review", ids[2], "--label", "good", "--reviewer", "eve", "--store", store_url],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    assert verify(store_url) == (0, '{"checked": 9, "problems": 0}')


def checkpoint_then(store_url: str, open_store: Any, tmp_path: Any, *statements: str) -> tuple[int, str]:
    """Take a checkpoint, tamper, verify against the checkpoint: (exit code, problems)."""
    cp = tmp_path / "cp.json"
    taken = CliRunner().invoke(cli, ["audit", "checkpoint", "--out", str(cp), "--store", store_url])
    assert taken.exit_code == 0 and taken.output.startswith("root ")
    root = taken.output.split()[1]
    for statement in statements:
        sql(open_store, store_url, statement)
    result = CliRunner().invoke(
        cli, ["audit", "verify", "--store", store_url, "--checkpoint", str(cp), "--root", root, "--json"]
    )
    problems = [json.loads(line) for line in result.output.splitlines()][:-1]
    return result.exit_code, " | ".join(f"{p['trajectory_id']} {p['record']} {p['problem']}" for p in problems)


def test_a_checkpoint_catches_what_a_chain_cannot(sql_store_url: str, open_store: Any, tmp_path: Any) -> None:
    store_url = sql_store_url  # the records are deleted in the database itself
    ids = record(store_url)
    assert checkpoint_then(store_url, open_store, tmp_path) == (0, "")
    # the last step of t2 and its review deleted: t2's chain is intact but shorter
    code, out = checkpoint_then(
        store_url, open_store, tmp_path,
        "DELETE FROM reviews WHERE trajectory_id = 't2'", f"DELETE FROM scores WHERE step_id = '{ids[2]}'",
        f"DELETE FROM steps WHERE id = '{ids[2]}'",
    )  # fmt: skip
    assert code == 1 and "t2 chain the checkpoint saw 4 chained record(s)" in out


def test_a_checkpoint_catches_deletion_nulled_hashes_and_unchained_fields(
    sql_store_url: str, open_store: Any, tmp_path: Any
) -> None:
    store_url = sql_store_url  # the records are edited in the database itself
    ids = record(store_url)
    code, out = checkpoint_then(
        store_url, open_store, tmp_path,
        "DELETE FROM scores WHERE step_id IN (SELECT id FROM steps WHERE trajectory_id = 't1')",
        "DELETE FROM steps WHERE trajectory_id = 't1'", "DELETE FROM reviews WHERE trajectory_id = 't1'",
        "DELETE FROM trajectories WHERE id = 't1'",
        f"UPDATE steps SET action = 'allow', prev_hash = NULL, hash = NULL WHERE id = '{ids[1]}'",
    )  # fmt: skip
    assert code == 1 and "t1 trajectory deleted" in out and "t2 chain" in out
    code, out = checkpoint_then(store_url, open_store, tmp_path, "UPDATE trajectories SET task = 'other'")
    assert code == 1 and "task, agent, model, metadata or start time changed" in out
    code, out = checkpoint_then(store_url, open_store, tmp_path, "UPDATE scores SET explanation = 'edited'")
    assert code == 1 and "explanation changed" in out
