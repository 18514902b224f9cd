"""``overseer bench agent``: the same scripted LangChain agent with and without oversight, in one run."""

from __future__ import annotations

import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from overseer import Overseer
from overseer.exceptions import ConfigError
from overseer.testing import ConstantScorer
from overseer_langgraph._middleware import OverseerMiddleware
from overseer_langgraph.testing import ScriptedChatModel, call, turn

TURNS = 4  # tool-calling turns per run, then an answer: 4 plans + 4 calls + 4 observations + 1 answer


def _tools() -> list[BaseTool]:
    @tool
    def lookup(order_id: str) -> str:
        """Look up an order."""
        return f'{{"order_id": "{order_id}", "status": "shipped"}}'

    return [lookup]


def _script() -> list[Any]:
    turns: list[Any] = [
        turn(f"Checking order A{i}.", call("lookup", {"order_id": f"A{i}"}, f"c{i}")) for i in range(TURNS)
    ]
    return [*turns, turn("All four orders have shipped.")]


def bench_agent(runs: int = 40, model_latency_ms: float = 0.0) -> dict[str, Any]:
    """Wall time per step of the bare agent and of the agent under oversight (constant scorer, SQLite store)."""
    steps_per_run = 3 * TURNS + 1
    delay = model_latency_ms / 1000
    with tempfile.TemporaryDirectory() as tmp:
        overseer = Overseer("permissive", scorers=[ConstantScorer(1.0)], store=f"sqlite:///{Path(tmp) / 'bench.db'}")
        middleware = OverseerMiddleware(overseer)
        bare = create_agent(ScriptedChatModel(turns=_script(), delay_s=delay), _tools())
        overseen = create_agent(ScriptedChatModel(turns=_script(), delay_s=delay), _tools(), middleware=[middleware])
        times: dict[str, list[float]] = {"bare": [], "overseen": []}
        for i in range(runs + 3):
            for label, agent in (
                (("bare", bare), ("overseen", overseen)) if i % 2 else (("overseen", overseen), ("bare", bare))
            ):
                start = time.perf_counter()
                agent.invoke({"messages": [HumanMessage("Check the status of orders A0 to A3")]})
                if i >= 3:  # the first runs warm up both
                    times[label].append((time.perf_counter() - start) * 1000)
        overseer.flush()
        assert overseer.telemetry.store is not None
        stored = overseer.telemetry.store.count("steps")
        overseer.close()
    bare_ms = statistics.median(times["bare"]) / steps_per_run
    overseen_ms = statistics.median(times["overseen"]) / steps_per_run
    return {
        "benchmark": "agent",
        "python": platform.python_version(),
        "runs": runs,
        "steps_per_run": steps_per_run,
        "model_latency_ms": model_latency_ms,
        "scorer": "constant",
        "bare_ms_per_step": round(bare_ms, 4),
        "overseen_ms_per_step": round(overseen_ms, 4),
        "overhead_ms_per_step": round(overseen_ms - bare_ms, 4),
        "overhead_ratio": round(overseen_ms / bare_ms - 1, 4),
        "audit_steps_stored": stored,
        "audit_steps_expected": (runs + 3) * steps_per_run,
    }


def _pg_cluster(action: str) -> None:
    """Stop or start the local PostgreSQL cluster with Debian's pg_ctlcluster (the machine's own service)."""
    import os
    import subprocess

    versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
    if not versions:
        raise ConfigError("--outage-s needs a local PostgreSQL managed by pg_ctlcluster (/etc/postgresql)")
    command = ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", action]
    subprocess.run(
        [*command, *(["-m", "fast"] if action == "stop" else [])], check=True, capture_output=True, timeout=120
    )


def bench_load(
    runs: int = 100,
    seconds: float = 10.0,
    model_latency_ms: float = 20.0,
    store: str | None = None,
    outage_s: float = 0.0,
) -> dict[str, Any]:
    """``runs`` agents at once through one Overseer and one store, each starting run after run for ``seconds``.

    With ``outage_s``, the PostgreSQL server behind ``store`` is stopped two seconds in and started again
    ``outage_s`` later; the agents keep running (records spill to disk meanwhile). Afterwards every step is
    counted in the store: records lost and duplicated must both be zero.
    """
    import asyncio
    import threading

    from overseer import AuditStore

    steps_per_run = 3 * TURNS + 1
    delay = model_latency_ms / 1000
    with tempfile.TemporaryDirectory() as tmp:
        url = store or f"sqlite:///{Path(tmp) / 'load.db'}"
        if outage_s and not url.startswith("postgresql"):
            raise ConfigError("--outage-s stops PostgreSQL: give --store postgresql://...")
        from overseer import Telemetry

        telemetry = Telemetry(store=url, spill_dir=Path(tmp) / "spill")
        overseer = Overseer("permissive", scorers=[ConstantScorer(1.0)], telemetry=telemetry)
        agent = create_agent(
            ScriptedChatModel(turns=_script(), delay_s=delay), _tools(), middleware=[OverseerMiddleware(overseer)]
        )
        prefix = f"load-{time.time_ns()}"
        latencies: list[float] = []
        started_runs = 0
        outage: dict[str, float] = {}

        def cut_power() -> None:
            time.sleep(2.0)
            outage["stopped_at"] = time.perf_counter()
            _pg_cluster("stop")
            time.sleep(outage_s)
            _pg_cluster("start")
            outage["restarted_at"] = time.perf_counter()

        async def worker(w: int, deadline: float) -> None:
            nonlocal started_runs
            k = 0
            while time.perf_counter() < deadline:
                started_runs += 1
                config: RunnableConfig = {"configurable": {"thread_id": f"{prefix}-{w}-{k}"}}
                t0 = time.perf_counter()
                await agent.ainvoke({"messages": [HumanMessage("Check the status of orders A0 to A3")]}, config)
                latencies.append((time.perf_counter() - t0) * 1000 / steps_per_run)
                k += 1

        power = threading.Thread(target=cut_power, daemon=True) if outage_s else None
        begin = time.perf_counter()
        if power is not None:
            power.start()
        duration = max(seconds, outage_s + 6.0) if outage_s else seconds
        asyncio.run(asyncio.wait_for(_gather(worker, runs, begin + duration), timeout=duration + 600))
        wall = time.perf_counter() - begin
        if power is not None:
            power.join()
        overseer.flush()
        stats = dict(overseer.telemetry.audit.exporter.stats) if overseer.telemetry.audit else {}
        overseer.close()
        check = AuditStore(url)
        try:
            stored = [s for s in check.list_steps(limit=None) if s.trajectory_id.startswith(prefix)]
        finally:
            check.close()
    expected = started_runs * steps_per_run
    distinct = {(s.trajectory_id, s.index) for s in stored}
    ordered = sorted(latencies)
    return {
        "benchmark": "load",
        "python": platform.python_version(),
        "store": url.split("://")[0],
        "concurrent_runs": runs,
        "runs_completed": started_runs,
        "steps_per_run": steps_per_run,
        "model_latency_ms": model_latency_ms,
        "scorer": "constant",
        "wall_s": round(wall, 2),
        "steps_per_s": round(expected / wall, 1),
        "run_ms_per_step_p50": round(statistics.median(ordered), 3),
        "run_ms_per_step_p99": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 3),
        "oversight_ms_p50": _pct([s.latency_ms for s in stored if s.latency_ms is not None], 0.5),
        "oversight_ms_p99": _pct([s.latency_ms for s in stored if s.latency_ms is not None], 0.99),
        "outage_s": round(outage.get("restarted_at", 0) - outage.get("stopped_at", 0), 1) if outage_s else 0,
        "records_spilled": stats.get("spilled", 0),
        "records_expected": expected,
        "records_stored": len(distinct),
        "records_lost": expected - len(distinct),
        "records_duplicated": len(stored) - len(distinct),
    }


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


async def _gather(worker: Any, n: int, deadline: float) -> None:
    import asyncio

    await asyncio.gather(*(worker(w, deadline) for w in range(n)))
