"""``overseer bench mcp``: per-call latency through the proxy against the same server called directly."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

__all__ = ["bench_mcp"]

RULES_ONLY = "version: 1\nname: rules-only\nscorers: {rules: {type: rules}}\nrules: []\n"


def _quantiles(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 3),
    }


async def _time_calls(params: StdioServerParameters, calls: int) -> list[float]:
    async with Client(params, read_timeout_seconds=300) as client:
        await client.list_tools()
        for n in range(5):  # warm-up
            await client.call_tool("echo", {"text": f"warm {n}"})
        out = []
        for n in range(calls):
            start = time.perf_counter()
            await client.call_tool("echo", {"text": f"Meeting notes, item {n}: book the room for Thursday."})
            out.append((time.perf_counter() - start) * 1000)
        return out


async def bare_forwarder(command: list[str]) -> None:
    """The proxy's plumbing without the judging: the same SDK server and client, forwarding every call as is.

    Timed as a row of its own, it shows what the second hop costs by itself (``python -m overseer_mcp.bench --
    SERVER ...``).
    """
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.stdio import stdio_server

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, read_timeout_seconds=60) as upstream:

        async def list_tools(ctx: Any, p: Any) -> types.ListToolsResult:
            return await upstream.list_tools(cache_mode="refresh")

        async def call_tool(ctx: Any, p: types.CallToolRequestParams) -> types.CallToolResult:
            return await upstream.call_tool(p.name, dict(p.arguments or {}))

        server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def bench_mcp(calls: int = 200, policies: tuple[str, ...] = ("rules-only", "default")) -> dict[str, Any]:
    """p50 / p99 of one ``tools/call``: direct, through a bare SDK forwarder, through the proxy under each policy.

    The forwarder is the proxy's plumbing without judging (the second hop alone); no audit store is kept.
    """
    server = [sys.executable, "-m", "overseer_mcp.demo_server"]
    overseer = str(Path(sys.executable).with_name("overseer"))
    env = dict(os.environ)
    result: dict[str, Any] = {"calls": calls, "transport": "stdio", "store": "none"}
    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules-only.yaml"
        rules.write_text(RULES_ONLY)
        direct = anyio.run(_time_calls, StdioServerParameters(command=server[0], args=server[1:], env=env), calls)
        result["direct"] = _quantiles(direct)
        bare = [sys.executable, "-m", "overseer_mcp.bench", "--", *server]
        forwarded = anyio.run(_time_calls, StdioServerParameters(command=bare[0], args=bare[1:], env=env), calls)
        row = _quantiles(forwarded)
        row["added_p50_ms"] = round(row["p50_ms"] - result["direct"]["p50_ms"], 3)
        result["sdk-forwarder-no-judging"] = row
        for policy in policies:
            chosen = str(rules) if policy == "rules-only" else policy
            args = ["mcp", "proxy", "--no-store", "--policy", chosen, "--", *server]
            proxied = anyio.run(_time_calls, StdioServerParameters(command=overseer, args=args, env=env), calls)
            row = _quantiles(proxied)
            row["added_p50_ms"] = round(row["p50_ms"] - result["direct"]["p50_ms"], 3)
            row["judging_p50_ms"] = round(row["p50_ms"] - result["sdk-forwarder-no-judging"]["p50_ms"], 3)
            result[policy] = row
    return result


if __name__ == "__main__":
    anyio.run(bare_forwarder, sys.argv[sys.argv.index("--") + 1 :])
