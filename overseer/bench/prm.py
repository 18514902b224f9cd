"""``overseer bench prm``: the step scorer's latency, throughput, and the saving of incremental scoring."""

from __future__ import annotations

import asyncio
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from overseer._threads import cpu_precision
from overseer.prm import (
    PrmScorer,
    default_model_path,
    load_step_model,
    minilm_path,
    require_torch,
    write_overseer_config,
)
from overseer.scorers import ScoreRequest
from overseer.steps import FinalAnswer, Observation, Plan, Step, ToolCall

__all__ = ["bench_prm", "synthetic_trajectory"]


def synthetic_trajectory(steps: int) -> tuple[str, list[Step]]:
    """A plausible agent trajectory of ``steps`` steps (plans, calls, observations of everyday lengths)."""
    out: list[Step] = []
    i = 0
    while len(out) < steps - 1:
        out.append(Plan(content=f"I need the status of order A{i:04d} before I can answer the customer."))
        out.append(
            ToolCall(
                tool="get_order", args={"order_id": f"A{i:04d}", "fields": ["status", "eta", "items"]}, call_id=f"c{i}"
            )
        )
        out.append(
            Observation(
                tool="get_order",
                call_id=f"c{i}",
                content=(
                    f'{{"order_id": "A{i:04d}", "status": "shipped", "eta": "2026-12-0{i % 9 + 1}", '
                    f'"items": [{{"sku": "SKU-{i}", "qty": 2}}], "carrier": "DHL", "notes": "left the warehouse"}}'
                ),
            )
        )
        i += 1
    return "Tell the customer where each of their orders is.", [*out[: steps - 1], FinalAnswer(content="All shipped.")]


def _base_for_timing(directory: Path) -> str:
    """The default model's architecture with an untrained head, when the default model is not built yet."""
    import transformers

    base = minilm_path()
    assert base is not None
    config = transformers.AutoConfig.from_pretrained(base, local_files_only=True)
    config.is_decoder, config.num_labels = True, 1
    model = transformers.AutoModelForTokenClassification.from_pretrained(base, config=config, local_files_only=True)
    model.save_pretrained(directory)
    transformers.BertTokenizer.from_pretrained(base, local_files_only=True).save_pretrained(directory)
    write_overseer_config(directory, format="token-classification", step_tag="[SEP]", heads=["prm"])
    return str(directory)


async def _one(scorer: PrmScorer, task: str, steps: list[Step], trajectory_id: str) -> list[float]:
    latencies = []
    for i, step in enumerate(steps):
        start = time.perf_counter()
        await scorer.score([ScoreRequest(trajectory_id=trajectory_id, task=task, history=tuple(steps[:i]), step=step)])
        latencies.append((time.perf_counter() - start) * 1000)
    await scorer.end_trajectory(trajectory_id)
    return latencies


def policy_steps(task: str, steps: list[Step], repeats: int = 3, policy: Any = "default") -> dict[str, Any]:
    """Per-step latency of a whole policy (the default: rules, the detector and the PRM, as shipped; no store).

    On ``steps``: p50 / p99 by step kind over ``repeats`` runs after a warm-up run.
    """
    from overseer import Overseer

    by_kind: dict[str, list[float]] = {}
    with Overseer(policy, store=None) as overseer:
        for r in range(repeats + 1):
            with overseer.trajectory(task, id=f"policy-{r}") as run:
                for step in steps:
                    started = time.perf_counter()
                    run.judge(step)
                    if r:  # the first run warms up
                        by_kind.setdefault(step.kind, []).append((time.perf_counter() - started) * 1000)
    every = [t for samples in by_kind.values() for t in samples]
    return {"all": _pct(every), **{kind: _pct(samples) for kind, samples in sorted(by_kind.items())}}


def _pct(samples: list[float]) -> dict[str, float]:
    q = statistics.quantiles(sorted(samples), n=100, method="inclusive")
    return {"p50_ms": round(q[49], 2), "p99_ms": round(q[98], 2), "mean_ms": round(statistics.fmean(samples), 2)}


def bench_prm(
    model: str = "default",
    steps: int = 50,
    trajectories: int = 16,
    slide_keep: float = 0.25,
    repeats: int = 3,
    long_steps: int = 500,
) -> dict[str, Any]:
    """Measure the PRM scorer on this machine (all figures from one run).

    The single-trajectory figures are the medians of ``repeats`` interleaved runs (incremental, then re-encoding).
    """
    torch = require_torch()
    note = None
    with tempfile.TemporaryDirectory() as tmp:
        if model == "default" and not (default_model_path() / "config.json").is_file():
            model, note = (
                _base_for_timing(Path(tmp) / "base"),
                "default model not built: its architecture, untrained head",
            )
        step_model = load_step_model(model)
        task, trajectory = synthetic_trajectory(steps)
        tokens = sum(len(step_model.tokenizer(s.text(), add_special_tokens=False)["input_ids"]) for s in trajectory)

        async def run() -> dict[str, Any]:
            single = PrmScorer(step_model, batch_size=1, max_wait_ms=0, slide_keep=slide_keep)
            reencode = PrmScorer(step_model, batch_size=1, max_wait_ms=0, incremental=False)
            # the same steps through transformers' forward pass, where the lean path replaces it (the earlier path),
            # and through the lean path with bfloat16 and with int8 matrix products (`cpu_precision`)
            plain = half = quarter = None
            if step_model.lean is not None:
                plain = PrmScorer(
                    load_step_model(model, lean=False), batch_size=1, max_wait_ms=0, slide_keep=slide_keep
                )
                await _one(plain, task, trajectory, "warm-up")
                half_model = load_step_model(model, cpu_precision="bfloat16")
                half = PrmScorer(half_model, batch_size=1, max_wait_ms=0, slide_keep=slide_keep)
                await _one(half, task, trajectory, "warm-up")
                int8_model = load_step_model(model, cpu_precision="int8")
                quarter = PrmScorer(int8_model, batch_size=1, max_wait_ms=0, slide_keep=slide_keep)
                await _one(quarter, task, trajectory, "warm-up")
            await _one(single, task, trajectory, "warm-up")
            single.stats.clear()
            latency: list[float] = []
            plain_latency: list[float] = []
            half_latency: list[float] = []
            int8_latency: list[float] = []
            incremental_runs, reencode_runs = [], []
            for r in range(repeats):  # interleaved, so that a busy moment of the machine hits both alike
                started = time.perf_counter()
                latency += await _one(single, task, trajectory, f"inc{r}")
                incremental_runs.append(time.perf_counter() - started)
                started = time.perf_counter()
                await _one(reencode, task, trajectory, f"full{r}")
                reencode_runs.append(time.perf_counter() - started)
                if plain is not None and half is not None and quarter is not None:
                    plain_latency += await _one(plain, task, trajectory, f"plain{r}")
                    half_latency += await _one(half, task, trajectory, f"half{r}")
                    int8_latency += await _one(quarter, task, trajectory, f"int8{r}")
            # is a step's cost flat along a long trajectory? (the window slides: the cost of a slide is in the tail)
            _, long_run = synthetic_trajectory(long_steps)
            longer = PrmScorer(step_model, batch_size=1, max_wait_ms=0, slide_keep=slide_keep)
            along = await _one(longer, task, long_run, "long")
            early, late = along[10:20], along[long_steps - 10 :]
            incremental_s = statistics.median(incremental_runs)
            reencode_s = statistics.median(reencode_runs)
            # concurrent trajectories that are not in step with each other: each starts a few steps further in
            mixed = [trajectory[i % 5 :] for i in range(trajectories)]
            total = sum(len(t) for t in mixed)

            async def concurrent(scorer: PrmScorer, prefix: str) -> float:
                started = time.perf_counter()
                await asyncio.gather(*(_one(scorer, task, t, f"{prefix}{i}") for i, t in enumerate(mixed)))
                return time.perf_counter() - started

            def pooled(**kw: Any) -> PrmScorer:
                return PrmScorer(step_model, batch_size=trajectories, max_wait_ms=5, slide_keep=slide_keep, **kw)

            batched = pooled()
            batched_s = await concurrent(batched, "b")
            padded = pooled(pad_incremental=True)
            padded_s = await concurrent(padded, "p")
            windowed = pooled(incremental=False)
            windowed_s = await concurrent(windowed, "w")
            return {
                "batch_1_incremental": _pct(latency),
                "batch_1_incremental_path": "lean" if plain is not None else "transformers",
                **(
                    {
                        "batch_1_incremental_transformers": _pct(plain_latency),
                        "lean_speedup_p50": round(_pct(plain_latency)["p50_ms"] / _pct(latency)["p50_ms"], 2),
                        "batch_1_incremental_lean_bfloat16": _pct(half_latency),
                        "bfloat16_speedup_p50": round(_pct(latency)["p50_ms"] / _pct(half_latency)["p50_ms"], 2),
                        "batch_1_incremental_lean_int8": _pct(int8_latency),
                        "int8_speedup_p50": round(_pct(latency)["p50_ms"] / _pct(int8_latency)["p50_ms"], 2),
                    }
                    if plain is not None
                    else {}
                ),
                f"per_step_ms_along_{long_steps}_steps": {
                    "steps_10_to_19_p50": round(statistics.median(early), 2),
                    f"steps_{long_steps - 10}_to_{long_steps - 1}_p50": round(statistics.median(late), 2),
                    "all_p50": round(statistics.median(along), 2),
                    "all_p99": _pct(along)["p99_ms"],
                    "window_slides": longer.stats["slides"],
                    "tokens_fed": longer.stats["tokens"],
                },
                "steps_per_s_batch_1": round(steps / incremental_s, 1),
                f"steps_per_s_{trajectories}_trajectories": {
                    "incremental": round(total / batched_s, 1),
                    "incremental_padded": round(total / padded_s, 1),
                    "batched_reencode": round(total / windowed_s, 1),
                    "pad_incremental_default": batched.pad_incremental,
                },
                "mean_batch_size_incremental": round(statistics.fmean(batched.batches), 2),
                "mean_batch_size_reencode": round(statistics.fmean(windowed.batches), 2),
                f"trajectory_{steps}_steps": {
                    "incremental_s": round(incremental_s, 3),
                    "reencode_s": round(reencode_s, 3),
                    "reencode_over_incremental": round(reencode_s / incremental_s, 2),
                    "ratio_per_repeat": [round(f / i, 2) for i, f in zip(incremental_runs, reencode_runs, strict=True)],
                    "repeats": repeats,
                    "tokens_fed_incremental": single.stats["tokens"] // repeats,
                    "tokens_fed_reencode": reencode.stats["tokens"] // repeats,
                    "window_slides": single.stats["slides"] // repeats,
                    "slide_keep": slide_keep,
                },
            }

        result = asyncio.run(run())
        if model == "default":
            result["default_policy_per_step"] = policy_steps(task, trajectory, repeats)
            exact = {
                "version": 1, "name": "default-float32", "extends": "default",
                "scorers": {
                    "detector": {"type": "detector", "model": "default", "required": False, "cpu_precision": "float32"},
                    "prm": {"type": "prm", "model": "default", "required": False, "cpu_precision": "float32"},
                },
            }  # fmt: skip
            result["default_policy_per_step_float32"] = policy_steps(task, trajectory, repeats, exact)
            # `auto` runs the PRM in int8 (where PyTorch has it); the same policy with the PRM as `auto` chose before
            half = {
                "version": 1, "name": "default-bfloat16-prm", "extends": "default",
                "scorers": {"prm": {"type": "prm", "model": "default", "required": False, "cpu_precision": cpu_precision("auto")}},
            }  # fmt: skip
            result["default_policy_per_step_prm_without_int8"] = policy_steps(task, trajectory, repeats, half)
            result["cpu_precision_auto_here"] = {
                "prm": cpu_precision("auto", int8=True),
                "detector": cpu_precision("auto"),
            }
    return {
        "benchmark": "prm",
        "model": note or step_model.model_id,
        "device": step_model.device,
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "max_length": step_model.max_length,
        "causal": step_model.causal,
        "trajectory_tokens": tokens,
        **result,
    }
