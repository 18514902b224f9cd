"""``overseer bench``: benchmarks that print JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click

from overseer.cli._common import console, handle_errors


@click.group("bench")
def bench_group() -> None:
    """Measure overseer on this machine (JSON out)."""


@bench_group.command("pipeline")
@click.option("--steps", type=click.IntRange(100), default=2000, show_default=True, help="Steps to time.")
@click.option("--concurrency", type=click.IntRange(1), default=32, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON.")
@handle_errors
def pipeline(steps: int, concurrency: int, as_json: bool) -> None:
    """Per-step pipeline overhead with a constant scorer: latency p50/p99, throughput at 1 and N trajectories."""
    from overseer.bench.pipeline import bench_pipeline

    result = bench_pipeline(steps=steps, concurrency=concurrency)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        console.print_json(json.dumps(result))


@bench_group.command("rescore")
@click.option("--policy", default="default", show_default=True, help="The policy the re-audit judges with.")
@click.option("--trajectories", type=click.IntRange(8), default=300, show_default=True, help="Runs of 4 steps.")
@click.option("--workers", type=click.IntRange(1), default=2, show_default=True, help="Processes and Ray actors.")
@click.option(
    "--engine",
    "engines",
    multiple=True,
    type=click.Choice(["local", "processes", "ray"]),
    help="Only these engines (repeatable) [default: all].",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON.")
@handle_errors
def rescore_bench(policy: str, trajectories: int, workers: int, engines: tuple[str, ...], as_json: bool) -> None:
    """Re-audit steps/s in one process, in worker processes and on a local Ray cluster; 10M-step projection."""
    from overseer.bench.rescore import bench_rescore

    result = bench_rescore(policy, trajectories, workers, engines or ("local", "processes", "ray"))
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        console.print_json(json.dumps(result))


@bench_group.command("agent")
@click.option("--runs", type=click.IntRange(5), default=40, show_default=True, help="Runs of each agent.")
@click.option(
    "--model-latency-ms",
    type=click.FloatRange(0),
    default=0.0,
    show_default=True,
    help="Make the scripted model sleep this long per call (0: framework cost only).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON.")
@handle_errors
def agent(runs: int, model_latency_ms: float, as_json: bool) -> None:
    """The same scripted agent with and without oversight (constant scorer): wall time per step and the ratio."""
    from importlib.metadata import entry_points

    from overseer.exceptions import MissingDependencyError

    found = {ep.name: ep for ep in entry_points(group="overseer.bench")}
    try:
        bench_agent = found["agent"].load()
    except (KeyError, ImportError):
        raise MissingDependencyError("overseer bench agent", "langgraph") from None
    result = bench_agent(runs=runs, model_latency_ms=model_latency_ms)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        console.print_json(json.dumps(result))


@bench_group.command("load")
@click.option("--runs", type=click.IntRange(1), default=100, show_default=True, help="Agent runs at once.")
@click.option(
    "--seconds", type=click.FloatRange(1), default=10.0, show_default=True, help="Keep starting runs this long."
)
@click.option("--model-latency-ms", type=click.FloatRange(0), default=20.0, show_default=True)
@click.option("--store", "store_url", help="Audit store URL [default: a fresh SQLite file].")
@click.option(
    "--outage-s",
    type=click.FloatRange(0),
    default=0.0,
    help="Stop the local PostgreSQL (pg_ctlcluster) 2 s in, for this long; needs --store postgresql://...",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON.")
@handle_errors
def load(
    runs: int, seconds: float, model_latency_ms: float, store_url: str | None, outage_s: float, as_json: bool
) -> None:
    """Many scripted LangChain agents at once through one Overseer and one store: steps/s, p99, records lost."""
    from importlib.metadata import entry_points

    from overseer.exceptions import MissingDependencyError

    found = {ep.name: ep for ep in entry_points(group="overseer.bench")}
    try:
        bench_load = found["load"].load()
    except (KeyError, ImportError):
        raise MissingDependencyError("overseer bench load", "langgraph") from None
    result = bench_load(
        runs=runs, seconds=seconds, model_latency_ms=model_latency_ms, store=store_url, outage_s=outage_s
    )
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        console.print_json(json.dumps(result))
    if result["records_lost"] or result["records_duplicated"]:
        raise SystemExit(1)


@bench_group.command("mcp")
@click.option("--calls", type=click.IntRange(10), default=200, show_default=True, help="Timed calls per setting.")
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON.")
@handle_errors
def mcp(calls: int, as_json: bool) -> None:
    """One MCP tools/call directly and through `overseer mcp proxy` (rules only, default policy): p50 / p99."""
    from importlib.metadata import entry_points

    from overseer.exceptions import MissingDependencyError

    found = {ep.name: ep for ep in entry_points(group="overseer.bench")}
    try:
        bench_mcp = found["mcp"].load()
    except (KeyError, ImportError):
        raise MissingDependencyError("overseer bench mcp", "mcp") from None
    result = bench_mcp(calls=calls)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        console.print_json(json.dumps(result))


@bench_group.command("prm")
@click.option(
    "--model", default="default", show_default=True, help="default, a model directory, or an id in the cache."
)
@click.option("--steps", type=click.IntRange(5), default=50, show_default=True, help="Steps per trajectory.")
@click.option("--trajectories", type=click.IntRange(1), default=16, show_default=True, help="Concurrent trajectories.")
@click.option(
    "--slide-keep",
    type=click.FloatRange(0.05, 0.95),
    default=0.25,
    show_default=True,
    help="Share of the window kept when it slides (the policy key slide_keep).",
)
@click.option(
    "--repeats",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="Interleaved runs of one trajectory, incremental and re-encoded (medians are reported).",
)
@click.option(
    "--long-steps",
    type=click.IntRange(30),
    default=500,
    show_default=True,
    help="Steps of the long trajectory whose early and late per-step costs are compared.",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON.")
@handle_errors
def prm(
    model: str, steps: int, trajectories: int, slide_keep: float, repeats: int, long_steps: int, as_json: bool
) -> None:
    """The PRM: batch-1 step latency (lean and transformers), steps/s batched, incremental vs re-encoding."""
    from overseer.bench.prm import bench_prm

    result = bench_prm(
        model=model, steps=steps, trajectories=trajectories, slide_keep=slide_keep, repeats=repeats,
        long_steps=long_steps,
    )  # fmt: skip
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        console.print_json(json.dumps(result))


def _ints(value: str) -> list[int]:
    try:
        out = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r}: a comma-separated list of whole numbers, such as 1,16,64") from None
    if not out or min(out) < 1:
        raise click.BadParameter(f"{value!r}: give at least one number, each 1 or more")
    return out


@bench_group.command("serve")
@click.option(
    "--arch",
    "archs",
    default="default",
    show_default=True,
    help="Comma-separated: default, tiny, qwen2-0.5b, qwen2-7b (all but default: random weights from a config).",
)
@click.option(
    "--concurrency", default="1,16,64,256", show_default=True, help="Concurrent trajectories, comma-separated."
)
@click.option(
    "--mode",
    "modes",
    default="padded,padded_transformers,one_by_one,reencode",
    show_default=True,
    help="Which ways to score, comma-separated.",
)
@click.option("--steps", type=click.IntRange(6), default=40, show_default=True, help="Steps per trajectory.")
@click.option(
    "--budget-s",
    type=click.FloatRange(0.1),
    default=6.0,
    show_default=True,
    help="Seconds per cell (each stops there).",
)
@click.option("--max-batch", type=click.IntRange(1), default=256, show_default=True, help="The batcher's size bound.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@click.option("--profile", is_flag=True, help="Add the ten costliest operations of a padded run per architecture.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also rewrite this file with the JSON so far after every cell (kept if the run is cut off).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON.")
@handle_errors
def serve(
    archs: str, concurrency: str, modes: str, steps: int, budget_s: float, max_batch: int, device: str,
    profile: bool, out: Path | None, as_json: bool,
) -> None:  # fmt: skip
    """The PRM serving many trajectories: steps/s and p50 / p99 per step, padded, one by one and re-encoded."""
    from overseer.bench.serve import bench_serve, write_report

    result = bench_serve(
        archs=[a.strip() for a in archs.split(",") if a.strip()], concurrency=_ints(concurrency),
        modes=[m.strip() for m in modes.split(",") if m.strip()], steps=steps, budget_s=budget_s,
        max_batch=max_batch, device=device, profile=profile, report=write_report(out) if out else None,
    )  # fmt: skip
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        console.print_json(json.dumps(result))


@bench_group.command("detector")
@click.option("--model", default="default", show_default=True, help="default, or a detector directory.")
@click.option("--repeats", type=click.IntRange(5), default=30, show_default=True, help="Timed calls per length.")
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON.")
@handle_errors
def detector(model: str, repeats: int, as_json: bool) -> None:
    """The injection detector on one tool output at a time: p50 / p99 per output length (tokens), this CPU."""
    from overseer.bench.detector import bench_detector

    result = bench_detector(model, repeats)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        console.print_json(json.dumps(result))
