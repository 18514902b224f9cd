"""Re-running a file into the same store makes new runs, never duplicates; a spill belongs to one store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from overseer import AuditStore
from overseer.cli import cli
from overseer.store import default_spill_dir

RUN = {
    "id": "r1",
    "task": "Pay the bill",
    "steps": [
        {"kind": "tool_call", "tool": "read_file", "args": {"path": "bill.txt"}, "call_id": "c1"},
        {"kind": "observation", "call_id": "c1", "content": "Pay 10 EUR to DE89370400440532013000."},
        {"kind": "final", "content": "Done."},
    ],
}


def test_scoring_the_same_file_twice_records_a_second_run_and_verify_stays_clean(tmp_path: Path) -> None:
    data = tmp_path / "runs.jsonl"
    data.write_text(json.dumps(RUN) + "\n")
    store = f"sqlite:///{tmp_path / 'a.db'}"
    policy = tmp_path / "p.yaml"
    policy.write_text("version: 1\nname: rules-only\nscorers: {rules: {type: rules}}\nrules: []\n")
    runner = CliRunner()
    for _ in range(2):
        result = runner.invoke(
            cli,
            ["score", str(data), "--policy", str(policy), "--store", store, "-q", "--out", str(tmp_path / "v.jsonl")],
        )
        assert result.exit_code == 0, result.output
    with AuditStore(store) as audit:
        assert sorted(t.id for t in audit.list_trajectories()) == ["r1", "r1#2"]
        assert audit.count("steps") == 6
        checked, problems = audit.verify()
        assert problems == [] and checked > 0


def test_each_store_has_its_own_spill_folder() -> None:
    a = default_spill_dir("postgresql://postgres:secret@127.0.0.1:5432/a")
    b = default_spill_dir("postgresql://postgres@127.0.0.1:5432/b")
    assert a != b and a.parent == b.parent
    assert a == default_spill_dir("postgresql://postgres:other@127.0.0.1:5432/a")  # the password is not the store
    assert "secret" not in str(a)


def test_careless_input_gets_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    runner = CliRunner()
    store = f"sqlite:///{tmp_path / 'a.db'}"
    result = runner.invoke(cli, ["audit", "review", "x", "--label", "maybe", "--store", store])
    assert result.exit_code == 2 and "'maybe' is not one of" in result.output
    policy = tmp_path / "p.yaml"
    policy.write_text('version: 1\nname: x\nscorers: {p: {type: python, factory: "nosuchmod:fn"}}\n')
    result = runner.invoke(cli, ["policy", "check", str(policy)])
    assert result.exit_code == 2 and "cannot import 'nosuchmod:fn'" in result.output
    data = tmp_path / "runs.jsonl"
    data.write_text(json.dumps(RUN) + "\n")
    missing = tmp_path / "no" / "such" / "dir" / "a.db"
    result = runner.invoke(cli, ["score", str(data), "--store", f"sqlite:///{missing}", "-q", "--out", "-"])
    assert result.exit_code == 2 and "no folder" in result.output and not missing.parent.exists()
    result = runner.invoke(cli, ["score", str(data), "--store", store, "-q", "--out", str(tmp_path / "v.jsonl")])
    step = json.loads((tmp_path / "v.jsonl").read_text().splitlines()[0])
    with AuditStore(store) as audit:
        step_id = audit.list_steps(trajectory_id=step["trajectory_id"], limit=1, newest_first=False)[0].id
    result = runner.invoke(
        cli, ["audit", "review", step_id, "--label", "bad", "--comment", "x" * 30_000, "--store", store]
    )
    assert result.exit_code == 2 and result.output.startswith("error: comment: String should have at most 20000")
    raising = tmp_path / "raising.py"
    raising.write_text("def make():\n    raise RuntimeError('no model here')\n")
    policy.write_text('version: 1\nname: x\nscorers: {p: {type: python, factory: "raising:make"}}\n')
    result = runner.invoke(cli, ["score", str(data), "--policy", str(policy), "--no-store", "-q", "--out", "-"])
    assert result.exit_code == 2 and "raising:make(...) raised RuntimeError: no model here" in result.output
