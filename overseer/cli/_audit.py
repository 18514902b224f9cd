"""``overseer audit``: read the audit store."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from overseer.cli._common import TimeParam, action_text, console, fail, handle_errors, safe
from overseer.steps import REVIEW_LABELS, Observation, ToolCall
from overseer.store import AuditStore, StoredStep, default_store_url
from overseer.store.export import export_rows, step_json, trajectory_json, write_export
from overseer.verdict import ACTIONS

store_option = click.option(
    "--store", "store_url", help="Audit store URL [default: $OVERSEER_STORE or sqlite:///.overseer/audit.db]."
)


@click.group("audit")
def audit_group() -> None:
    """Read the audit store: list decisions, show a trajectory."""


def _open(url: str | None) -> AuditStore:
    return AuditStore(url or default_store_url())


def _what(step: StoredStep, limit: int | None = 80) -> Text:
    s = step.step
    if isinstance(s, ToolCall):
        return safe(f"{s.tool}({s.args_json()})", limit)
    if isinstance(s, Observation):
        return safe(s.content, limit)
    return safe(s.text(), limit)


@audit_group.command("list")
@click.option(
    "--action",
    "actions",
    multiple=True,
    type=click.Choice(ACTIONS),
    help="Only these actions (repeatable). Default: every action.",
)
@click.option("--rule", help="Only steps decided by this rule.")
@click.option("--agent", help="Only this agent's steps.")
@click.option("--tool", help="Only steps of this tool.")
@click.option("--trajectory", "trajectory_id", help="Only this trajectory's steps.")
@click.option("--since", type=TimeParam(), help="From this time (ISO, or an age: 30m, 2h, 7d).")
@click.option("--until", type=TimeParam(), help="Before this time.")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="JSON Lines instead of a table.")
@store_option
@handle_errors
def list_steps(
    actions: tuple[str, ...],
    rule: str | None,
    agent: str | None,
    tool: str | None,
    trajectory_id: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    as_json: bool,
    store_url: str | None,
) -> None:
    """List recorded decisions, newest first."""
    store = _open(store_url)
    steps = store.list_steps(
        actions=actions or None,
        rule=rule,
        agent=agent,
        tool=tool,
        trajectory_id=trajectory_id,
        since=since,
        until=until,
        limit=limit,
    )
    if as_json:
        for step in steps:
            click.echo(json.dumps(step_json(step), ensure_ascii=False))
        return
    table = Table(title=f"{len(steps)} decision(s) in {store!r}", expand=True)
    table.add_column("when", no_wrap=True)
    table.add_column("step", overflow="fold", ratio=2)
    table.add_column("what", overflow="fold", ratio=3)
    table.add_column("action", no_wrap=True)
    table.add_column("rule: reason", overflow="fold", ratio=4)
    for step in steps:
        where = safe(f"{step.trajectory_id}#{step.index}")
        where.append(f" {step.kind}", style="dim")
        decision = safe(step.rule or "(default)", 40)
        decision.append(": ")
        decision.append_text(safe(step.reason, 120))
        table.add_row(
            step.created_at.strftime("%m-%d %H:%M:%S"), where, _what(step, 60), action_text(step.action), decision
        )
    console.print(table)
    if not steps:
        console.print("nothing matched; `overseer demo` or `overseer score` records decisions here")


@audit_group.command("show")
@click.argument("ident")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of tables.")
@click.option("--full", is_flag=True, help="Do not shorten long steps.")
@store_option
@handle_errors
def show(ident: str, as_json: bool, full: bool, store_url: str | None) -> None:
    """Show a trajectory (by its id, or by the id of one of its steps) with every step, score and decision."""
    store = _open(store_url)
    found = store.get_trajectory(ident)
    if found is None and (step := store.get_step(ident)) is not None:
        found = store.get_trajectory(step.trajectory_id)
    if found is None:
        fail(f"no trajectory or step {ident!r} in {store!r}; `overseer audit list` shows what is there")
        return
    trajectory, steps = found
    reviews = store.list_reviews(trajectory_id=trajectory.id)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "trajectory": trajectory_json(trajectory),
                    "steps": [step_json(s) for s in steps],
                    "reviews": [r.model_dump(mode="json") for r in reviews],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    console.print(Text.assemble(("trajectory ", "bold"), safe(trajectory.id), f"  [{trajectory.status}]"))
    console.print(Text.assemble(("task: ", "bold"), safe(trajectory.task or "(unknown)")))
    details = [
        f"agent: {trajectory.agent}" if trajectory.agent else "",
        f"policy: {trajectory.policy}" if trajectory.policy else "",
    ]
    if any(details):
        console.print(safe("  ".join(d for d in details if d)))
    table = Table(show_lines=True)
    for column in ("#", "kind", "step", "scores", "action", "rule / reason"):
        table.add_column(column, overflow="fold")
    for step in steps:
        scores = Text()
        for s in step.scores:
            style = "red" if s.value < 0.5 else ""
            scores.append(f"{s.name} {s.value:.2f}\n", style=style)
        decision = safe(step.rule or "(default)")
        decision.append("\n")
        decision.append_text(safe(step.reason, None if full else 300))
        if step.halt:
            decision.append("\nrun halted", style="bold red")
        for review in (r for r in reviews if r.step_id == step.id):
            decision.append(f"\nreview: {review.label} by ", style="bold")
            decision.append_text(safe(review.reviewer))
            if review.comment:
                decision.append_text(safe(f": {review.comment}", 200))
        table.add_row(
            str(step.index),
            step.kind,
            _what(step, None if full else 400),
            scores,
            action_text(step.action),
            decision,
        )
    console.print(table)


@audit_group.command("queue")
@click.option(
    "--action",
    "actions",
    multiple=True,
    type=click.Choice(["flag", "sanitize", "block", "escalate", "resample"]),
    help="Only these actions (repeatable). Default: flag, block, escalate.",
)
@click.option("--rule", help="Only steps decided by this rule.")
@click.option("--agent", help="Only this agent's steps.")
@click.option("--since", type=TimeParam(), help="From this time (ISO, or an age: 30m, 2h, 7d).")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="JSON Lines instead of a table.")
@store_option
@handle_errors
def queue(
    actions: tuple[str, ...],
    rule: str | None,
    agent: str | None,
    since: datetime | None,
    limit: int,
    as_json: bool,
    store_url: str | None,
) -> None:
    """Flagged, blocked and escalated steps that nobody has reviewed yet, oldest first."""
    with _open(store_url) as store:
        steps = store.list_steps(
            actions=actions or ("flag", "sanitize", "block", "escalate"),
            rule=rule,
            agent=agent,
            since=since,
            limit=limit,
            newest_first=False,
            unreviewed=True,
        )
    if as_json:
        for step in steps:
            click.echo(json.dumps(step_json(step), ensure_ascii=False))
        return
    table = Table(title=f"{len(steps)} step(s) waiting for review", expand=True)
    table.add_column("step id", no_wrap=True)
    table.add_column("where", overflow="fold", ratio=2)
    table.add_column("what", overflow="fold", ratio=3)
    table.add_column("action", no_wrap=True)
    table.add_column("rule: reason", overflow="fold", ratio=4)
    for step in steps:
        table.add_row(
            step.id[:12],
            safe(f"{step.trajectory_id}#{step.index}"),
            _what(step, 60),
            action_text(step.action),
            safe(f"{step.rule}: {step.reason}", 160),
        )
    console.print(table)
    if steps:
        console.print("record a judgement: overseer audit review STEP_ID --label good|bad|approve|reject --comment ...")


@audit_group.command("review")
@click.argument("step_id")
@click.option(
    "--label",
    required=True,
    type=click.Choice(list(REVIEW_LABELS)),
    help="; ".join(f"{k}: {v}" for k, v in REVIEW_LABELS.items()),
)
@click.option("--comment", help="Why.")
@click.option(
    "--reviewer", default=lambda: os.environ.get("USER", "reviewer"), show_default="$USER", help="Who is reviewing."
)
@click.option("--automated", is_flag=True, help="The reviewer is a program, not a person.")
@store_option
@handle_errors
def review(
    step_id: str, label: str, comment: str | None, reviewer: str, automated: bool, store_url: str | None
) -> None:
    """Record a review of STEP_ID (its full id, or a unique prefix of 8+ characters). Reviews never overwrite."""
    from overseer.steps import Review

    with _open(store_url) as store:
        step = store.get_step(step_id) or _by_prefix(store, step_id)
        if step is None:
            fail(f"no step {step_id!r} in {store!r}; `overseer audit queue` lists the steps waiting for review")
            return
        record = Review(
            trajectory_id=step.trajectory_id,
            step_id=step.id,
            index=step.index,
            reviewer=reviewer,
            reviewer_kind="automated" if automated else "human",
            label=label,
            comment=comment,
        )
        store.add_review(record)
    console.print(Text.assemble("recorded ", (label, "bold"), f" for {step.trajectory_id}#{step.index} by {reviewer}"))


def _by_prefix(store: AuditStore, prefix: str) -> StoredStep | None:
    if len(prefix) < 8:
        return None
    matches = [s for s in store.list_steps(limit=None) if s.id.startswith(prefix)]
    return matches[0] if len(matches) == 1 else None


@audit_group.command("export")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "parquet"]), default="jsonl", show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--action", "actions", multiple=True, type=click.Choice(ACTIONS), help="Only these actions.")
@click.option("--since", type=TimeParam(), help="From this time.")
@store_option
@handle_errors
def export(fmt: str, out: Path, actions: tuple[str, ...], since: datetime | None, store_url: str | None) -> None:
    """Export every decision with its scores, reviews and provenance (JSONL, CSV, or Parquet with pyarrow)."""
    with _open(store_url) as store:
        rows = export_rows(store, actions=actions, since=since)
    write_export(rows, fmt, out)
    console.print(f"{len(rows)} decision(s) -> {out}")
