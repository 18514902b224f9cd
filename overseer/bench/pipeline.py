"""Benchmarks behind ``overseer bench``: figures measured in one run, printed as JSON."""

from __future__ import annotations

import asyncio
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from overseer._pipeline import Overseer
from overseer.steps import FinalAnswer, Observation, Plan, Step, ToolCall
from overseer.testing import ConstantScorer

__all__ = ["bench_pipeline"]


def _steps(n: int, prefix: str = "c") -> list[Step]:
    """A realistic cycle of steps: plan, call, observation, ..., answer."""
    cycle: list[Step] = []
    i = 0
    while len(cycle) < n:
        call_id = f"{prefix}{i}"
        cycle.append(Plan(content=f"Look up order {i} and check its status before answering."))
        cycle.append(
            ToolCall(tool="get_order", args={"order_id": f"A{i:05d}", "fields": ["status", "eta"]}, call_id=call_id)
        )
        cycle.append(
            Observation(
                call_id=call_id,
                tool="get_order",
                content=f'{{"order_id": "A{i:05d}", "status": "shipped", "eta": "2026-12-0{i % 9 + 1}"}}',
            )
        )
        i += 1
    cycle = cycle[: n - 1]
    cycle.append(FinalAnswer(content="All orders have shipped."))
    return cycle


def _percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {
        "p50_ms": round(q[49], 4),
        "p99_ms": round(q[98], 4),
        "mean_ms": round(statistics.fmean(ordered), 4),
        "max_ms": round(ordered[-1], 4),
    }


def _latency(overseer: Overseer, steps: int, trajectory_len: int) -> list[float]:
    samples: list[float] = []
    done = 0
    while done < steps:
        with overseer.trajectory("Check the status of every open order", metadata={"agent": "bench"}) as run:
            for step in _steps(trajectory_len):
                start = time.perf_counter()
                run.judge(step)
                samples.append((time.perf_counter() - start) * 1000)
                done += 1
    return samples


async def _throughput(overseer: Overseer, trajectories: int, trajectory_len: int) -> float:
    async def one(i: int) -> None:
        async with overseer.trajectory("Check the status of every open order", metadata={"agent": "bench"}) as run:
            for step in _steps(trajectory_len, prefix=f"t{i}-"):
                await run.ajudge(step)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(trajectories)))
    return trajectories * trajectory_len / (time.perf_counter() - start)


def bench_pipeline(steps: int = 2000, trajectory_len: int = 20, concurrency: int = 32) -> dict[str, Any]:
    """Per-step overhead of the pipeline with a constant scorer, with and without the SQLite audit store."""
    results: dict[str, Any] = {
        "benchmark": "pipeline",
        "scorer": "constant",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "steps": steps,
        "trajectory_len": trajectory_len,
    }
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        for label, store in (("no_store", None), ("sqlite_store", url)):
            overseer = Overseer("permissive", scorers=[ConstantScorer(1.0)], store=store)
            try:
                warm = _latency(overseer, min(200, steps), trajectory_len)
                samples = _latency(overseer, steps, trajectory_len)
                one = asyncio.run(_throughput(overseer, 1, steps))
                many_len = max(trajectory_len, steps // concurrency)
                many = asyncio.run(_throughput(overseer, concurrency, many_len))
                entry: dict[str, Any] = {
                    "latency": _percentiles(samples),
                    "throughput_steps_per_s": {"1": round(one, 1), str(concurrency): round(many, 1)},
                }
                if store is not None:
                    judged = len(warm) + len(samples) + steps + concurrency * many_len
                    drain = time.perf_counter()
                    overseer.flush()
                    entry["audit_drain_after_run_s"] = round(time.perf_counter() - drain, 3)
                    assert overseer.telemetry.store is not None
                    stored = overseer.telemetry.store.count("steps")
                    entry["audit_steps_expected"] = judged
                    entry["audit_steps_stored"] = stored
                    entry["audit_records_lost"] = judged - stored
            finally:
                overseer.close()
            results[label] = entry
    base = results["no_store"]["latency"]["p50_ms"]
    results["store_cost_on_p50_ratio"] = round(results["sqlite_store"]["latency"]["p50_ms"] / base, 3) if base else None
    return results
