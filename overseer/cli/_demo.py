"""``overseer demo``: an agent under oversight, offline, with the default policy and an embedded audit store."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from overseer.cli._common import action_text, console, handle_errors, safe
from overseer.store import default_store_url


@click.command("demo")
@click.option("--policy", default="default", show_default=True, help="A policy file or a shipped policy's name.")
@click.option(
    "--store", "store_url", help="Audit store URL [default: $OVERSEER_STORE or sqlite:///.overseer/audit.db]."
)
@handle_errors
def demo(policy: str, store_url: str | None) -> None:
    """Run a scripted agent with real tools under oversight: benign steps pass, a hijacked call is stopped."""
    from overseer._demo import SCENARIOS, run_demo
    from overseer._pipeline import Overseer

    url = store_url or default_store_url()
    with Overseer(policy, store=url) as overseer:
        console.print(
            Text.assemble(("overseer demo", "bold"), f"  policy {overseer.policy.id}, scorers {overseer.scorer.id}")
        )
        results = run_demo(overseer)
    for result in results:
        task = SCENARIOS[result.scenario][0]
        table = Table(title=f"{result.scenario}: {task}", title_justify="left", show_lines=False)
        for column in ("#", "kind", "step", "action", "rule / reason"):
            table.add_column(column, overflow="fold")
        for verdict, text in result.verdicts:
            reason = Text("") if verdict.action == "allow" else safe(f"{verdict.rule}: {verdict.reason}", 160)
            table.add_row(str(verdict.index), verdict.kind, safe(text, 90), action_text(verdict.action), reason)
        console.print(table)
        effects = [f"email to {m['to']}" for m in result.world.sent] + [f"ran `{c}`" for c in result.world.commands]
        console.print(Text("  side effects that happened: ", style="dim") + safe(", ".join(effects) or "none"))
        console.print(Text(f"  overseer audit show {result.trajectory_id}", style="dim"))
    console.print(Text.assemble("audit trail: ", (url, "bold"), "  (`overseer audit list` to read it)"))
