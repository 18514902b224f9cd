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
from langchain_core.tools import BaseTool, tool

from overseer import Overseer
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
