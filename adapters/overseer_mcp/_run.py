"""Run the proxy over stdio: the client launches ``overseer mcp proxy -- SERVER ...`` instead of the server."""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.stdio import stdio_server

from overseer import Overseer
from overseer_mcp._proxy import UNKNOWN_TASK, McpGuard, build_server

__all__ = ["serve_stdio"]


async def serve_stdio(
    command: str,
    args: list[str],
    *,
    policy: Any = "default",
    store: Any = None,
    task: str | None = None,
    call_timeout_s: float = 60.0,
    escalation_timeout_s: float = 300.0,
) -> None:
    """Launch the upstream server, then serve the guarded copy of it on this process's stdin and stdout.

    The upstream inherits this process's environment and working directory (a client configured to launch the
    proxy instead of the server needs no other change). A call the upstream does not answer within
    ``call_timeout_s`` is answered to the client as a failed call. An escalated call waits up to
    ``escalation_timeout_s`` for a person's decision in ``store`` (given as a URL).
    """
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    with Overseer(policy, store=store) as overseer:
        async with Client(params, read_timeout_seconds=call_timeout_s) as upstream:
            guard = McpGuard(
                overseer,
                upstream,
                task or UNKNOWN_TASK,
                store=store if isinstance(store, str) else None,
                escalation_timeout_s=escalation_timeout_s,
            )
            server = build_server(guard)
            try:
                async with stdio_server() as (read_stream, write_stream):
                    await server.run(read_stream, write_stream, server.create_initialization_options())
            finally:
                with anyio.CancelScope(shield=True):
                    await guard.aclose()
