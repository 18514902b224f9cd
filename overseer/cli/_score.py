"""``overseer score``: judge every step of stored trajectories as if replayed, one verdict per step."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import sys
import time
from pathlib import Path
from typing import IO

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from overseer._pipeline import Overseer
from overseer.batch import score_stream
from overseer.cli._common import action_text, err_console, handle_errors, safe
from overseer.engines import ENGINES
from overseer.exceptions import TrajectoryFormatError
from overseer.policy import load_policy
from overseer.readers import read_trajectories
from overseer.score import score_trajectories
from overseer.store import AuditStore, default_store_url
from overseer.verdict import ACTIONS


def _count_lines(path: Path) -> int:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


@click.command("score")
@click.argument("trajectories", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "native", "openai"]),
    default="auto",
    show_default=True,
    help="The trajectory format; auto decides per line.",
)
@click.option(
    "--policy",
    "policy",
    default="default",
    show_default=True,
    help="A policy file or a shipped policy's name.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write verdicts (JSON Lines) here; '-' for stdout.",
)
@click.option(
    "--store", "store_url", help="Audit store URL [default: $OVERSEER_STORE or sqlite:///.overseer/audit.db]."
)
@click.option("--no-store", is_flag=True, help="Do not record to an audit store.")
@click.option("--skip-invalid", is_flag=True, help="Report unreadable lines and carry on.")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1024),
    default=16,
    show_default=True,
    help="Trajectories judged at once.",
)
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="local",
    show_default=True,
    help="Where to judge: this process, worker processes on this machine, or a Ray cluster (RAY_ADDRESS).",
)
@click.option("--workers", type=click.IntRange(1, 4096), default=2, show_default=True, help="Workers (not for local).")
@click.option(
    "--partition-size", type=click.IntRange(1), default=64, show_default=True, help="Trajectories per partition."
)
@click.option(
    "--checkpoint",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep finished partitions here; the same job run again skips them.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or summary.")
@handle_errors
def score(
    trajectories: Path,
    fmt: str,
    policy: str,
    out: Path | None,
    store_url: str | None,
    no_store: bool,
    skip_invalid: bool,
    concurrency: int,
    engine: str,
    workers: int,
    partition_size: int,
    checkpoint: Path | None,
    quiet: bool,
) -> None:
    """Score every step of the TRAJECTORIES file as if replayed, each with its real history.

    Writes one verdict per step (JSON Lines, in input order) and records every decision in the audit store. With
    --engine processes or ray, partitions of trajectories go to workers that each load the models once and record
    their own decisions; with --checkpoint, a job run again skips the partitions it finished.
    """
    skipped: list[TrajectoryFormatError] = []

    def report(err: TrajectoryFormatError) -> None:
        skipped.append(err)
        err_console.print(Text("skipped ", style="yellow") + safe(str(err)))

    store = None if no_store else (store_url or default_store_url())
    partitioned = engine != "local" or checkpoint is not None
    overseer = None if partitioned else Overseer(policy, store=store)
    reader = read_trajectories(trajectories, fmt, skip_invalid=skip_invalid, on_error=report)  # type: ignore[arg-type]
    show = not quiet and err_console.is_terminal
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        sink: IO[str] | None = None
        if out is not None:
            sink = sys.stdout if str(out) == "-" else stack.enter_context(open(out, "w", encoding="utf-8"))
        progress = Progress(
            TextColumn("scoring"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            disable=not show,
            transient=True,
        )
        stack.enter_context(progress)
        task = progress.add_task("score", total=_count_lines(trajectories) if show else None)
        advance = lambda n: progress.advance(task, n)  # noqa: E731
        if overseer is not None:
            try:
                done = asyncio.run(score_stream(overseer, reader, sink, concurrency=concurrency, on_done=advance))
            finally:
                overseer.close()
        else:
            with contextlib.ExitStack() as opening:
                opened = opening.enter_context(AuditStore(store)) if store is not None else None
                done = score_trajectories(
                    reader, load_policy(policy), store=opened, out=sink, engine=engine, workers=workers,
                    partition_size=partition_size, concurrency=concurrency, checkpoint=checkpoint, on_done=advance,
                )  # fmt: skip
        actions, rules, n = done.actions, done.rules, done.trajectories
    elapsed = time.perf_counter() - started
    if quiet:
        return
    steps = sum(actions.values())
    summary = Table(title=f"{n} trajectories, {steps} steps in {elapsed:.1f} s", show_header=True)
    summary.add_column("action")
    summary.add_column("steps", justify="right")
    summary.add_column("share", justify="right")
    for action in ACTIONS:  # sanitize included
        if actions[action]:
            summary.add_row(action_text(action), str(actions[action]), f"{actions[action] / steps:.1%}")
    err_console.print(summary)
    if rules:
        by_rule = Table(title="decisions by rule")
        by_rule.add_column("rule")
        by_rule.add_column("steps", justify="right")
        for rule, count in rules.most_common():
            by_rule.add_row(safe(rule), str(count))
        err_console.print(by_rule)
    if skipped:
        err_console.print(Text(f"{len(skipped)} unreadable line(s) skipped", style="yellow"))
    if done.resumed_partitions:
        err_console.print(f"{done.resumed_partitions} partition(s) taken from the checkpoint, not judged again")
    if overseer is None:
        if store is not None:
            err_console.print(safe(f"audit: recorded by the {engine} workers in {store!r}"))
        return
    audit = overseer.telemetry.audit
    if audit is not None:
        stats = audit.exporter.stats
        where = overseer.telemetry.store
        line = f"audit: {stats['written'] + stats['replayed']} records in {where!r}"
        if audit.exporter.spill.pending():
            line += f"; {audit.exporter.spill.count()} waiting in {audit.exporter.spill.directory} for the store"
        err_console.print(safe(line))
