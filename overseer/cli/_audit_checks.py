"""``overseer audit checkpoint|verify|rescore|report``: prove the store intact, re-judge it, report on it."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from overseer.cli._audit import _open, audit_group, store_option
from overseer.cli._common import TimeParam, action_text, console, fail, handle_errors, progress_bar, safe


@audit_group.command("checkpoint")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the checkpoint (JSON) here.")
@store_option
@handle_errors
def checkpoint_command(out: Path | None, store_url: str | None) -> None:
    """Print (and write) a checkpoint root to keep outside the database; verify --checkpoint proves against it."""
    with _open(store_url) as store:
        cp = store.checkpoint()
    if out is not None:
        out.write_text(json.dumps(cp, indent=1) + "\n")
    console.print(f"root {cp['root']}  ({len(cp['trajectories'])} trajectories, {cp['records']} chained records)")


@audit_group.command("verify")
@click.option("--trajectory", "trajectory_id", help="Check one trajectory (default: all).")
@click.option(
    "--checkpoint",
    "checkpoint_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Also prove that everything this checkpoint saw is still there, unchanged (truncation, deletion).",
)
@click.option("--root", help="The checkpoint root you kept elsewhere (the file must match it).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per problem (and a summary line).")
@store_option
@handle_errors
def verify(
    trajectory_id: str | None, checkpoint_file: Path | None, root: str | None, as_json: bool, store_url: str | None
) -> None:
    """Check the hash chains of the stored steps and reviews; exit 1 and name every record that does not fit."""
    with _open(store_url) as store:
        checked, problems = store.verify(trajectory_id)
        if checkpoint_file is not None:
            try:
                cp = json.loads(checkpoint_file.read_text())
            except ValueError as err:
                fail(f"{checkpoint_file}: not a checkpoint: {err}")
                return
            problems = [*problems, *store.verify_checkpoint(cp, root)]
    if as_json:
        for p in problems:
            click.echo(json.dumps({"trajectory_id": p.trajectory_id, "record": p.record, "problem": p.problem}))
        click.echo(json.dumps({"checked": checked, "problems": len(problems)}))
        if problems:
            raise SystemExit(1)
        return
    if not problems:
        console.print(Text.assemble(("ok: ", "bold green"), f"{checked} chained record(s) verified"))
        return
    table = Table(title=f"{len(problems)} problem(s) in {checked} chained record(s)")
    for column in ("trajectory", "record", "problem"):
        table.add_column(column, overflow="fold")
    for p in problems:
        table.add_row(safe(p.trajectory_id), safe(p.record), safe(p.problem))
    console.print(table)
    raise SystemExit(1)


@audit_group.command("rescore")
@click.option("--policy", required=True, help="The policy to judge with: a file or a shipped name.")
@click.option(
    "--scorer",
    "overrides",
    multiple=True,
    metavar="NAME.KEY=VALUE",
    help="Change a scorer of that policy, e.g. prm.model=./new-model (repeatable).",
)
@click.option("--trajectory", "trajectory_ids", multiple=True, help="Only this trajectory (repeatable).")
@click.option("--since", type=TimeParam(), help="Only trajectories started from this time.")
@click.option("--limit", type=click.IntRange(1), help="At most this many trajectories.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document: the summary and every change.")
@click.option(
    "--engine",
    type=click.Choice(["local", "processes", "ray"]),
    default="local",
    show_default=True,
    help="Where partitions are judged: this process, --workers processes, or a Ray cluster ($RAY_ADDRESS, else local).",
)
@click.option("--workers", type=click.IntRange(1), default=1, show_default=True, help="Processes or Ray actors.")
@click.option(
    "--partition-size", type=click.IntRange(1), default=64, show_default=True, help="Trajectories per partition."
)
@click.option(
    "--checkpoint",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep finished partitions in this folder; the same job run again skips them.",
)
@store_option
@handle_errors
def rescore_cmd(
    policy: str,
    overrides: tuple[str, ...],
    trajectory_ids: tuple[str, ...],
    since: datetime | None,
    limit: int | None,
    as_json: bool,
    engine: str,
    workers: int,
    partition_size: int,
    checkpoint: Path | None,
    store_url: str | None,
) -> None:
    """Judge stored trajectories again under another policy or model; report the steps whose decision would change.

    The recorded decisions are not touched: nothing is written to the store.
    """
    from overseer.policy import load_policy
    from overseer.rescore import override_scorers, rescore

    loaded = override_scorers(load_policy(policy), overrides) if overrides else load_policy(policy)
    with _open(store_url) as store, progress_bar("re-auditing", "trajectories") as advance:
        report = rescore(
            store,
            loaded,
            trajectory_ids=trajectory_ids or None,
            since=since,
            limit=limit,
            engine=engine,
            workers=workers,
            partition_size=partition_size,
            checkpoint=checkpoint,
            on_progress=advance,
        )
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
        return
    if report.changes:
        table = Table(title=f"{len(report.changes)} step(s) would be decided differently under {report.policy}")
        for column in ("step", "what", "recorded", "now", "rule: reason"):
            table.add_column(column, overflow="fold")
        for c in report.changes:
            where = safe(f"{c.trajectory_id}#{c.index}")
            where.append(f" {c.kind}", style="dim")
            now = action_text(c.after)
            now.append(f"\n{c.change}", style="dim")
            table.add_row(
                where,
                safe(c.tool or "", 40),
                Text.assemble(action_text(c.before), safe(f"\n{c.before_rule or '(default)'}", 40)),
                now,
                Text.assemble(safe(c.after_rule or "(default)", 40), ": ", safe(c.after_reason, 160)),
            )
        console.print(table)
    summary = report.summary()
    console.print(
        Text.assemble(
            ("re-audit: ", "bold"),
            f"{summary['trajectories']} trajectories, {summary['steps']} steps under {report.policy}: ",
            (f"{summary['newly_blocked']} newly blocked", "red" if summary["newly_blocked"] else ""),
            ", ",
            (f"{summary['newly_allowed']} newly allowed", "green" if summary["newly_allowed"] else ""),
            f", {summary['changed'] - summary['newly_blocked'] - summary['newly_allowed']} otherwise changed",
            "; recorded decisions untouched",
        )
    )
    if report.resumed:
        console.print(f"resumed: {report.resumed} partition(s) taken from {checkpoint}, not judged again")
    for line in report.skipped:
        console.print(Text("note: ", style="yellow") + safe(line))


@audit_group.command("report")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The HTML file to write.")
@click.option("--since", type=TimeParam(), help="From this time (ISO, or an age: 30m, 2h, 7d).")
@click.option("--until", type=TimeParam(), help="Before this time.")
@click.option(
    "--trajectories", type=click.IntRange(0), default=10, show_default=True, help="Trajectories shown in full."
)
@store_option
@handle_errors
def report_cmd(
    out: Path, since: datetime | None, until: datetime | None, trajectories: int, store_url: str | None
) -> None:
    """Write an HTML report (PNG plots inside, opens offline): rates over time, rules, score curves, steps."""
    from overseer.report import write_report

    with _open(store_url) as store:
        write_report(store, out, since=since, until=until, trajectories=trajectories)
    console.print(f"report -> {out}")
