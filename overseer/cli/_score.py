"""``overseer score``: judge every step of stored trajectories as if replayed, one verdict per step."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import sys
import time
from collections import Counter, deque
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from overseer._pipeline import Overseer
from overseer.cli._common import action_text, err_console, handle_errors, safe
from overseer.exceptions import TrajectoryFormatError
from overseer.readers import read_trajectories
from overseer.steps import Trajectory
from overseer.store import default_store_url
from overseer.verdict import ACTIONS, Verdict


async def _judge(overseer: Overseer, trajectory: Trajectory, trajectory_id: str) -> list[Verdict]:
    metadata = {**trajectory.metadata, "mode": trajectory.metadata.get("mode", "replay")}  # judged, not enforced
    handle = overseer.trajectory(trajectory.task, id=trajectory_id, metadata=metadata)
    async with handle:
        return [await handle.ajudge(step) for step in trajectory.steps]


async def score_file(
    overseer: Overseer,
    trajectories: Iterator[Trajectory],
    out: IO[str] | None,
    *,
    concurrency: int = 16,
    on_done: Any = None,
) -> tuple[Counter[str], Counter[str], int]:
    """Judge every trajectory (``concurrency`` at a time), writing verdicts in input order.

    Returns the count of steps by action, by rule, and the number of trajectories.
    """
    actions: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    window: deque[asyncio.Task[list[Verdict]]] = deque()
    seen: Counter[str] = Counter()
    n = 0

    def emit(verdicts: list[Verdict]) -> None:
        for verdict in verdicts:
            actions[verdict.action] += 1
            if verdict.rule:
                rules[verdict.rule] += 1
            if out is not None:
                out.write(json.dumps(verdict.to_record(), ensure_ascii=False) + "\n")
        if on_done is not None:
            on_done()

    store = overseer.telemetry.store

    def taken(trajectory_id: str) -> bool:
        """A run of this id is already in the store: a re-run is a new run (``id#2``), never a duplicate."""
        if store is None:
            return False
        try:
            return store.has_trajectory(trajectory_id)
        except Exception:  # a store that is down now: its records spill; ids are checked when it answers
            return False

    for trajectory in trajectories:
        seen[trajectory.id] += 1
        trajectory_id = trajectory.id if seen[trajectory.id] == 1 else f"{trajectory.id}#{seen[trajectory.id]}"
        while taken(trajectory_id):
            seen[trajectory.id] += 1
            trajectory_id = f"{trajectory.id}#{seen[trajectory.id]}"
        window.append(asyncio.create_task(_judge(overseer, trajectory, trajectory_id)))
        n += 1
        while len(window) >= concurrency or (window and window[0].done()):
            emit(await window.popleft())
    while window:
        emit(await window.popleft())
    return actions, rules, n


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
    quiet: bool,
) -> None:
    """Score every step of the TRAJECTORIES file as if replayed, each with its real history.

    Writes one verdict per step (JSON Lines) and records every decision in the audit store.
    """
    skipped: list[TrajectoryFormatError] = []

    def report(err: TrajectoryFormatError) -> None:
        skipped.append(err)
        err_console.print(Text("skipped ", style="yellow") + safe(str(err)))

    store = None if no_store else (store_url or default_store_url())
    overseer = Overseer(policy, store=store)
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
        try:
            actions, rules, n = asyncio.run(
                score_file(overseer, reader, sink, concurrency=concurrency, on_done=lambda: progress.advance(task))
            )
        finally:
            overseer.close()
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
    audit = overseer.telemetry.audit
    if audit is not None:
        stats = audit.exporter.stats
        where = overseer.telemetry.store
        line = f"audit: {stats['written'] + stats['replayed']} records in {where!r}"
        if audit.exporter.spill.pending():
            line += f"; {audit.exporter.spill.count()} waiting in {audit.exporter.spill.directory} for the store"
        err_console.print(safe(line))
