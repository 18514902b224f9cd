"""``overseer mcp proxy``: guard any MCP server for any MCP client.

The proxy itself lives in the MCP adapter (``adapters/overseer_mcp``, the ``mcp`` extra), which registers itself under
the ``overseer.mcp`` entry point, so the core imports no protocol SDK.
"""

from __future__ import annotations

import dataclasses
import json
from importlib.metadata import entry_points
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from overseer.cli._common import console, err_console, fail, handle_errors, safe
from overseer.exceptions import MissingDependencyError
from overseer.store import AuditStore, default_store_url

store_option = click.option(
    "--store", "store_url", help="Audit store URL [default: $OVERSEER_STORE or sqlite:///.overseer/audit.db]."
)


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
@click.option("--upstream", metavar="URL", help="A streamable-HTTP MCP server to guard (instead of a SERVER command).")
@click.option(
    "--listen",
    metavar="WHERE",
    help="Serve over stdio, or streamable HTTP at PORT or HOST:PORT (path /mcp) [default: stdio for a SERVER "
    "command, 127.0.0.1:8766 for --upstream].",
)
@click.option(
    "--token",
    envvar="OVERSEER_MCP_TOKEN",
    help="Bearer token every HTTP client must send [env OVERSEER_MCP_TOKEN]; generated when listening beyond loopback.",
)
@click.option("--policy", default="default", show_default=True, help="A policy file or a shipped policy's name.")
@store_option
@click.option(
    "--no-store", is_flag=True, help="Keep no audit trail and no pins across sessions (verdicts still apply)."
)
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
@click.argument("server", nargs=-1, type=click.UNPROCESSED)
@handle_errors
def proxy(
    upstream: str | None,
    listen: str | None,
    token: str | None,
    policy: str,
    store_url: str | None,
    no_store: bool,
    task: str | None,
    call_timeout: float,
    escalation_timeout: float,
    server: tuple[str, ...],
) -> None:
    """Guard an MCP server: SERVER (a command and its arguments, after --) or --upstream URL.

    Configure the MCP client to launch `overseer mcp proxy -- SERVER ...` instead of `SERVER ...`, or to connect to
    the URL the proxy prints. Every tool call is judged before the server sees it and every result before the client
    does; a refused call reaches the client as a tool error that says why. Tools are pinned: one whose description
    changes is withheld until `overseer mcp accept`.
    """
    import os

    import anyio

    if bool(server) == bool(upstream):
        fail("give the server to guard: either a command after -- or --upstream URL, not both")
    run = _load("proxy")
    where = run.parse_listen(listen if listen is not None else ("127.0.0.1:8766" if upstream else None))
    if where is not None and not run.is_loopback(where[0]) and not token:
        token = run.new_token()
        err_console.print(f"listening beyond loopback: clients must send Authorization: Bearer {token}")
    target: Any = upstream
    if server:
        from mcp import StdioServerParameters

        target = StdioServerParameters(command=server[0], args=list(server[1:]), env=dict(os.environ))
    store = None if no_store else (store_url or default_store_url())
    anyio.run(
        lambda: run.serve(
            target,
            listen=where,
            token=token,
            policy=policy,
            store=store,
            task=task,
            call_timeout_s=call_timeout,
            escalation_timeout_s=escalation_timeout,
            on_ready=run.announce_on_stderr,
        )
    )


@mcp_group.command("pins")
@click.option("--server", help="Only this server's tools.")
@click.option("--tool", help="Only this tool.")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines instead of a table.")
@store_option
@handle_errors
def pins(server: str | None, tool: str | None, as_json: bool, store_url: str | None) -> None:
    """What MCP servers told the model about their tools: every version seen, when, and whether it was accepted."""
    store = AuditStore(store_url or default_store_url())
    try:
        found = store.tool_pins(server, tool)
    finally:
        store.close()
    if as_json:
        for p in found:
            row = dataclasses.asdict(p)
            row["first_seen"] = p.first_seen.isoformat() if p.first_seen else None
            row["last_seen"] = p.last_seen.isoformat() if p.last_seen else None
            click.echo(json.dumps(row, ensure_ascii=False, default=str))
        return
    table = Table(title=f"{len(found)} tool version(s) in {store!r}", expand=True)
    for name, kw in [("server", {"ratio": 2}), ("tool", {"ratio": 2}), ("pin", {"no_wrap": True}),
                     ("status", {"no_wrap": True}), ("first seen", {"no_wrap": True}),
                     ("last seen", {"no_wrap": True}), ("description", {"ratio": 5})]:  # fmt: skip
        table.add_column(name, overflow="fold", **kw)  # type: ignore[arg-type]
    for p in found:
        status = Text(p.status, style="red" if p.status == "refused" else "green")
        table.add_row(
            safe(p.server, 40),
            safe(p.tool, 40),
            p.pin,
            status,
            p.first_seen.strftime("%m-%d %H:%M") if p.first_seen else "",
            p.last_seen.strftime("%m-%d %H:%M") if p.last_seen else "",
            safe(p.description or "", 160),
        )
    console.print(table)
    if not found:
        console.print("no tools seen yet; `overseer mcp proxy` pins the tools of the servers it guards")


@mcp_group.command("accept")
@click.argument("tool")
@click.option("--server", required=True, help="The server that lists the tool (as `overseer mcp pins` shows it).")
@click.option("--pin", help="The version to accept [default: the newest refused one].")
@store_option
@handle_errors
def accept(tool: str, server: str, pin: str | None, store_url: str | None) -> None:
    """Accept a changed tool the policy withheld: later sessions list it again, pinned as it is now."""
    store = AuditStore(store_url or default_store_url())
    try:
        accepted = store.accept_tool_pin(server, tool, pin)
    finally:
        store.close()
    console.print(Text.assemble("accepted ", (f"{server} / {tool}", "bold"), f" at pin {accepted.pin}"))
