"""Re-audit on other engines: the same findings from this process, from worker processes and from a Ray cluster;
a killed job run again resumes from its checkpoint without judging finished partitions again."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from overseer.bench.rescore import fill  # 4-step runs recorded under permissive; every third one hijacked
from overseer.exceptions import ConfigError
from overseer.rescore import rescore
from overseer.store import AuditStore

OVERSEER = Path(sys.executable).with_name("overseer")


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    fill(url, 24)
    return url


def findings(report: Any) -> dict[str, Any]:
    out = report.to_json()
    out["summary"].pop("resumed_partitions")
    return dict(out)


def test_processes_give_the_same_findings_as_this_process(store: str, tmp_path: Path) -> None:
    with AuditStore(store) as audit:
        here = rescore(audit, "strict", partition_size=5)
        there = rescore(audit, "strict", partition_size=5, engine="processes", workers=2)
        with pytest.raises(ConfigError, match="--engine 'spark'"):
            rescore(audit, "strict", engine="spark")
    assert here.trajectories == 24 and here.steps == 96
    assert here.newly_blocked >= 8  # the planted sends, flagged when recorded, are blocked under strict
    assert findings(there) == findings(here)


def test_ray_gives_the_same_findings_on_a_local_cluster(store: str) -> None:
    ray = pytest.importorskip("ray", reason="the Ray engine needs the ray extra")
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
    try:
        with AuditStore(store) as audit:
            here = rescore(audit, "strict", partition_size=4)
            on_ray = rescore(audit, "strict", partition_size=4, engine="ray", workers=2)
    finally:
        ray.shutdown()
    assert findings(on_ray) == findings(here) and on_ray.trajectories == 24


def test_a_killed_job_resumes_without_judging_finished_partitions_again(
    store: str, tmp_path: Path, slow_strict: Any
) -> None:
    policy, env = slow_strict(0.15)
    checkpoint = tmp_path / "job"
    command = [str(OVERSEER), "audit", "rescore", "--policy", str(policy), "--store", store, "--json",
               "--engine", "processes", "--partition-size", "3", "--checkpoint", str(checkpoint)]  # fmt: skip
    job = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(checkpoint.glob("part-*.json")) and time.monotonic() < deadline and job.poll() is None:
        time.sleep(0.05)
    os.killpg(job.pid, signal.SIGKILL)  # the job and its worker processes
    job.communicate(timeout=30)
    finished = sorted(p.name for p in checkpoint.glob("part-*.json"))
    assert 1 <= len(finished) < 8, finished  # killed part-way: 8 partitions in all
    stamps = {p.name: p.stat().st_mtime_ns for p in checkpoint.glob("part-*.json")}

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["summary"]["resumed_partitions"] == len(finished)
    assert all(checkpoint.joinpath(name).stat().st_mtime_ns == stamp for name, stamp in stamps.items())
    with AuditStore(store) as audit:
        clean = rescore(audit, "strict", partition_size=3)
    assert report["summary"]["trajectories"] == 24
    assert report["summary"]["transitions"] == findings(clean)["summary"]["transitions"]
    assert [c["step_id"] for c in report["changes"]] == [c["step_id"] for c in findings(clean)["changes"]]

    other = [
        str(OVERSEER),
        "audit",
        "rescore",
        "--policy",
        "permissive",
        "--store",
        store,
        "--checkpoint",
        str(checkpoint),
    ]
    refused = subprocess.run(other, env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "holds partitions of another job" in refused.stderr


def test_bench_rescore_prints_one_json_document_with_every_engine_agreeing() -> None:
    done = subprocess.run(
        [str(OVERSEER), "bench", "rescore", "--policy", "permissive", "--trajectories", "12", "--engine", "local",
         "--engine", "processes", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    runs = result["runs"]
    assert set(runs) == {"1 process", "1 worker process", "2 processes"} and result["steps"] == 48
    assert all(r["same_findings_as_first"] and r["steps_per_s"] > 0 for r in runs.values())
    assert result["projected_hours_for_10M_steps_at_best_rate"] > 0
