"""``overseer mcp proxy``: guard any MCP server for any MCP client.

The proxy itself lives in the MCP adapter (``adapters/overseer_mcp``, the ``mcp`` extra), which registers itself under
the ``overseer.mcp`` entry point, so the core imports no protocol SDK.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import click

from overseer.cli._common import handle_errors
from overseer.exceptions import MissingDependencyError


def _load(name: str) -> Any:
    found = {ep.name: ep for ep in entry_points(group="overseer.mcp")}
    if name not in found:
        raise MissingDependencyError("overseer mcp", "mcp")
    try:
        return found[name].load()
    except ImportError:
        raise MissingDependencyError("overseer mcp", "mcp") from None


@click.group("mcp")
def mcp_group() -> None:
    """Guard MCP servers: every tool call and result judged, tool descriptions pinned."""


@mcp_group.command("proxy", context_settings={"ignore_unknown_options": True})
@click.option("--policy", default="default", show_default=True, help="A policy file or a shipped policy's name.")
@click.option(
    "--store", "store_url", help="Audit store URL [default: $OVERSEER_STORE or sqlite:///.overseer/audit.db]."
)
@click.option("--no-store", is_flag=True, help="Keep no audit trail (the verdicts still apply).")
@click.option("--task", help="The user's task, when you know it (the protocol does not carry it).")
@click.option(
    "--call-timeout",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds to wait for the server.",
)
@click.option(
    "--escalation-timeout",
    default=300.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds an escalated call waits for `overseer audit review STEP --label approve|reject` (then refused).",
)
@click.argument("server", nargs=-1, required=True, type=click.UNPROCESSED)
@handle_errors
def proxy(
    policy: str,
    store_url: str | None,
    no_store: bool,
    task: str | None,
    call_timeout: float,
    escalation_timeout: float,
    server: tuple[str, ...],
) -> None:
    """Serve SERVER (a command and its arguments, after --) over stdio, with every tool call judged first.

    Configure the MCP client to launch `overseer mcp proxy -- SERVER ...` instead of `SERVER ...`. A refused call
    reaches the client as a tool error that says why; the server never sees it.
    """
    import anyio

    from overseer.store import default_store_url

    serve_stdio = _load("stdio")
    store = None if no_store else (store_url or default_store_url())
    anyio.run(
        lambda: serve_stdio(
            server[0],
            list(server[1:]),
            policy=policy,
            store=store,
            task=task,
            call_timeout_s=call_timeout,
            escalation_timeout_s=escalation_timeout,
        )
    )
