"""``overseer demo``: an agent under oversight, offline, with the default policy and an embedded audit store.

The agent comes from an adapter (the LangGraph one registers itself under the ``overseer.demo`` entry point),
so the core imports no agent framework.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from overseer.cli._common import action_text, console, handle_errors, safe
from overseer.exceptions import MissingDependencyError
from overseer.store import AuditStore, default_store_url


def _load_demo() -> Any:
    found = {ep.name: ep for ep in entry_points(group="overseer.demo")}
    if "langgraph" not in found:
        raise MissingDependencyError("overseer demo", "langgraph")
    try:
        return found["langgraph"].load()
    except ImportError:
        raise MissingDependencyError("overseer demo", "langgraph") from None


@click.group("demo", invoke_without_command=True)
@click.option("--policy", default="default", show_default=True, help="A policy file or a shipped policy's name.")
@click.option(
    "--store", "store_url", help="Audit store URL [default: $OVERSEER_STORE or sqlite:///.overseer/audit.db]."
)
@click.pass_context
@handle_errors
def demo(ctx: click.Context, policy: str, store_url: str | None) -> None:
    """Run a LangGraph agent with real tools under oversight: benign steps pass, a hijacked call is stopped.

    `overseer demo mcp` shows the same through the MCP proxy.
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"policy": policy, "store": store_url}
        return
    from overseer._pipeline import Overseer

    run_demo = _load_demo()
    url = store_url or default_store_url()
    with Overseer(policy, store=url) as overseer:
        console.print(
            Text.assemble(("overseer demo", "bold"), f"  policy {overseer.policy.id}, scorers {overseer.scorer.id}")
        )
        runs = run_demo(overseer)
    with AuditStore(url) as store:
        for run in runs:
            found = store.get_trajectory(run.trajectory_id)
            steps = found[1] if found else []
            table = Table(title=f"{run.scenario}: {run.task}", title_justify="left")
            for column in ("#", "kind", "step", "action", "rule: reason"):
                table.add_column(column, overflow="fold")
            for step in steps:
                reason = Text("") if step.action == "allow" else safe(f"{step.rule}: {step.reason}", 160)
                table.add_row(str(step.index), step.kind, safe(step.step.text(), 90), action_text(step.action), reason)
            console.print(table)
            console.print(
                Text("  side effects that happened: ", style="dim") + safe(", ".join(run.world.effects()) or "none")
            )
            console.print(Text(f"  overseer audit show {run.trajectory_id}", style="dim"))
    console.print(Text.assemble("audit trail: ", (url, "bold"), "  (`overseer audit list` to read it)"))


@demo.command("mcp")
@click.pass_context
@handle_errors
def demo_mcp(ctx: click.Context) -> None:
    """An MCP client session through `overseer mcp proxy`, offline: the injected e-mail is cut, the planted send refused."""
    found = {ep.name: ep for ep in entry_points(group="overseer.mcp")}
    try:
        run_mcp_demo = found["demo"].load()
    except (KeyError, ImportError):
        raise MissingDependencyError("overseer demo mcp", "mcp") from None
    options = ctx.obj or {}
    url = options.get("store") or default_store_url()
    console.print(Text.assemble(("overseer demo mcp", "bold"), f"  policy {options.get('policy', 'default')}"))
    got = run_mcp_demo(options.get("policy", "default"), url)
    console.print(Text("  tools the client was shown: ", style="dim") + safe(", ".join(got["tools"])))
    table = Table(title="what the MCP client got back", title_justify="left")
    for column in ("call", "answer"):
        table.add_column(column, overflow="fold")
    for call in got["calls"]:
        answer = Text("refused: ", style="bold red") if call["is_error"] else Text("")
        table.add_row(safe(f"{call['tool']} {call['arguments']}", 70), answer + safe(call["text"], 400))
    console.print(table)
    console.print(Text.assemble("audit trail: ", (url, "bold"), "  (`overseer audit list` to read it)"))
