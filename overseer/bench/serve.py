"""``overseer bench serve``: the PRM serving many trajectories at once, on a GPU where there is one.

For each architecture (the default model, or a larger family built from a config with random weights: speed depends
on the architecture, not on the weights), at each number of concurrent trajectories, three ways to score a step:

- ``padded``: incremental, the batch's new steps in one padded forward pass over their caches (for the default
  model's family, :meth:`overseer.prm._lean.LeanBert.batch`);
- ``padded_transformers``: the same pass through transformers' forward (what ``padded`` was before the lean one);
- ``one_by_one``: incremental, the batch's steps one after another;
- ``reencode``: no cache, each step's whole window encoded again (batched).

Each cell runs under a time budget: the trajectories start a few steps apart, each scores its steps in order and
stops at the budget, and steps/s is the steps scored over the time taken. p50 / p99 are per step as a caller sees
them (waiting in the micro-batcher included).
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from overseer.bench.prm import synthetic_trajectory
from overseer.exceptions import ConfigError, MissingDependencyError
from overseer.prm import PrmScorer, RenderConfig, StepModel, default_model_path, load_step_model, require_torch
from overseer.scorers import ScoreRequest
from overseer.steps import Step

__all__ = ["ARCHITECTURES", "MODES", "bench_serve", "built_model", "write_report"]

MODES = ("padded", "padded_transformers", "one_by_one", "reencode")

ARCHITECTURES: dict[str, dict[str, Any]] = {
    # a toy of the default model's family (a BERT built as a decoder), for tests and quick checks
    "tiny": {
        "model_type": "bert", "vocab_size": 30522, "hidden_size": 32, "intermediate_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 512, "is_decoder": True,
    },
    # Qwen2.5-0.5B's shapes
    "qwen2-0.5b": {
        "model_type": "qwen2", "vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864,
        "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
        "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": True,
    },
    # Qwen2.5-7B's shapes
    "qwen2-7b": {
        "model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
        "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": False,
    },
}  # fmt: skip
"""Architectures built from a config with random weights (the default model's tokenizer feeds them all)."""


def _default_render() -> RenderConfig:
    config = json.loads((default_model_path() / "config.json").read_text())
    block = config.get("overseer", {})
    render = {k: v for k, v in block.get("render", {}).items() if k in RenderConfig.__dataclass_fields__}
    return RenderConfig(step_tag=block.get("step_tag", "[SEP]"), **render)


def _tokenizer() -> Any:
    import transformers

    return transformers.PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_file=str(default_model_path() / "tokenizer.json"),
        pad_token="[PAD]", sep_token="[SEP]", cls_token="[CLS]", unk_token="[UNK]", mask_token="[MASK]",
    )  # fmt: skip


def built_model(arch: str, device: str = "auto") -> tuple[StepModel, str]:
    """A step model of ``arch`` on ``device``, and what its weights are.

    ``default`` is the shipped model where its backbone is installed, else its architecture with random weights;
    the other names are :data:`ARCHITECTURES`, random weights in half precision on a GPU (float32 on a CPU).
    """
    torch = require_torch()
    import transformers

    target = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    if target == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: cuda was asked for, but torch sees no CUDA device")
    if arch == "default":
        try:
            return load_step_model("default", device=target), "the shipped default PRM"
        except MissingDependencyError as err:  # the backbone package is missing: the same shapes, the same speed
            reason = f"random weights in the default's architecture ({err})"
        values = json.loads((default_model_path() / "config.json").read_text())
        values.pop("overseer", None)
        values.pop("dtype", None)  # float32, as saved; it runs in half precision on a GPU, as load_step_model does
    elif arch in ARCHITECTURES:
        values = dict(ARCHITECTURES[arch])
        reason = "random weights"
    else:
        raise ConfigError(f"unknown architecture {arch!r}; use default or one of {', '.join(ARCHITECTURES)}")
    kind = values.pop("model_type")
    config = transformers.AutoConfig.for_model(kind, **values)
    config.num_labels = 1
    dtype = torch.float16 if target == "cuda" else torch.float32
    before = torch.get_default_dtype()
    torch.manual_seed(0)
    torch.set_default_dtype(dtype)
    try:
        with torch.device(target):  # built where it runs: a 7B model never passes through host memory
            built = transformers.AutoModelForTokenClassification.from_config(config)  # type: ignore[no-untyped-call]
            model = built.to(dtype).eval()
    finally:
        torch.set_default_dtype(before)
    step_model = StepModel(
        model=model, tokenizer=_tokenizer(), format="token-classification", heads=("prm",),
        render=_default_render(), device=target, causal=True,
        max_length=int(config.max_position_embeddings), model_id=arch, digest="random",
    )  # fmt: skip
    return step_model, reason


def _pct(samples: Sequence[float]) -> dict[str, float]:
    if len(samples) < 2:
        return {"p50_ms": round(samples[0], 2) if samples else 0.0, "p99_ms": round(samples[0], 2) if samples else 0.0}
    q = statistics.quantiles(sorted(samples), n=100, method="inclusive")
    return {"p50_ms": round(q[49], 2), "p99_ms": round(q[98], 2)}


async def _cell(
    scorer: PrmScorer, task: str, runs: list[list[Step]], budget_s: float, prefix: str
) -> tuple[int, float, list[float]]:
    """Every run in ``runs`` concurrently, each stopping at the budget: (steps, seconds, per-step latencies)."""
    latencies: list[float] = []
    started = time.perf_counter()
    deadline = started + budget_s

    async def one(k: int, steps: list[Step]) -> None:
        for i, step in enumerate(steps):
            if time.perf_counter() > deadline:
                break
            t = time.perf_counter()
            request = ScoreRequest(trajectory_id=f"{prefix}{k}", task=task, history=tuple(steps[:i]), step=step)
            await scorer.score([request])
            latencies.append((time.perf_counter() - t) * 1000)
        await scorer.end_trajectory(f"{prefix}{k}")

    outcomes = await asyncio.gather(*(one(k, steps) for k, steps in enumerate(runs)), return_exceptions=True)
    for outcome in outcomes:  # every trajectory has stopped before a failure is raised
        if isinstance(outcome, BaseException):
            raise outcome
    return len(latencies), time.perf_counter() - started, latencies


def _scorer(model: StepModel, mode: str, concurrency: int, max_batch: int) -> PrmScorer:
    size = min(concurrency, max_batch)
    model.lean_padded = mode != "padded_transformers"
    if mode == "reencode":
        return PrmScorer(model, batch_size=size, max_wait_ms=0, incremental=False)
    return PrmScorer(model, batch_size=size, max_wait_ms=0, pad_incremental=mode.startswith("padded"))


def bench_serve(
    archs: Sequence[str] = ("default",),
    concurrency: Sequence[int] = (1, 16, 64, 256),
    modes: Sequence[str] = MODES,
    steps: int = 40,
    budget_s: float = 6.0,
    max_batch: int = 256,
    device: str = "auto",
    profile: bool = False,
    report: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Steps/s and per-step p50 / p99 for each architecture, concurrency and mode (see the module docstring).

    ``report`` is called with the result so far after every cell (to keep what was measured if a run is cut off).
    ``profile`` adds the ten costliest operations of a few padded batches of each architecture at the largest
    concurrency.
    """
    torch = require_torch()
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ConfigError(f"unknown mode(s) {', '.join(unknown)}; use {', '.join(MODES)}")
    task, trajectory = synthetic_trajectory(steps)
    result: dict[str, Any] = {
        "benchmark": "serve",
        "torch": torch.__version__,
        "python": platform.python_version(),
        "steps_per_trajectory": steps,
        "budget_s_per_cell": budget_s,
        "max_batch": max_batch,
        "architectures": {},
    }
    for arch in archs:
        t0 = time.perf_counter()
        model, weights = built_model(arch, device)
        cuda = model.device == "cuda"
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            result["device"] = torch.cuda.get_device_name()
        else:
            result["device"] = "cpu"
            result["torch_threads"] = torch.get_num_threads()
        params = sum(p.numel() for p in model.model.parameters())
        entry: dict[str, Any] = {
            "weights": weights, "parameters_m": round(params / 1e6, 1), "max_length": model.max_length,
            "load_s": round(time.perf_counter() - t0, 1), "cells": {},
        }  # fmt: skip
        result["architectures"][arch] = entry

        async def measure(model: StepModel = model, entry: dict[str, Any] = entry, cuda: bool = cuda) -> None:
            # warm-up: every path once (kernels chosen, allocator primed)
            for mode in modes:
                await _cell(_scorer(model, mode, 4, max_batch), task, [trajectory[:6]] * 4, 30.0, f"warm-{mode}")
            for c in concurrency:
                runs = [trajectory[k % 5 :] for k in range(c)]  # not in step: each starts a few steps further in
                row: dict[str, Any] = {}
                for mode in modes:
                    scorer = _scorer(model, mode, c, max_batch)
                    try:
                        done, seconds, latencies = await _cell(scorer, task, runs, budget_s, f"{mode}{c}-")
                    except torch.OutOfMemoryError:  # this cell does not fit: say so, and go on with the next
                        row[mode] = {"error": "out of GPU memory"}
                        continue
                    finally:
                        await scorer.aclose()
                        if cuda:
                            torch.cuda.empty_cache()
                    row[mode] = {
                        "steps_per_s": round(done / seconds, 1), "steps": done, **_pct(latencies),
                        "mean_batch": round(statistics.fmean(scorer.batches), 1) if scorer.batches else 0,
                    }  # fmt: skip
                rate = {mode: row[mode].get("steps_per_s") for mode in row}
                inc = rate.get("padded") or rate.get("one_by_one")
                if inc and rate.get("reencode"):
                    row["incremental_over_reencode"] = round(inc / rate["reencode"], 2)
                if rate.get("padded") and rate.get("one_by_one"):
                    row["padded_over_one_by_one"] = round(rate["padded"] / rate["one_by_one"], 2)
                if rate.get("padded") and rate.get("padded_transformers"):
                    row["lean_over_transformers"] = round(rate["padded"] / rate["padded_transformers"], 2)
                entry["cells"][str(c)] = row
                if report is not None:
                    report(result)
            if profile and "padded" in modes:
                entry["profile_padded"] = _profile(model, task, trajectory, max(concurrency), max_batch)

        asyncio.run(measure())
        if cuda:
            entry["peak_gpu_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 1)
        del model
        if cuda:
            torch.cuda.empty_cache()
        if report is not None:
            report(result)
    return result


def _profile(model: StepModel, task: str, trajectory: list[Step], concurrency: int, max_batch: int) -> Any:
    """The ten costliest operations (by self time on the device, else on the CPU) over a few padded batches.

    The batches run on this thread (the profiler sees the thread that starts it): step *i* of ``concurrency``
    trajectories at a time, as the micro-batcher would hand them over when every trajectory is in step.
    """
    torch = require_torch()
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if model.device == "cuda" else [])
    scorer = _scorer(model, "padded", concurrency, max_batch)
    size = min(concurrency, max_batch)

    def batches(prefix: str, count: int) -> int:
        done = 0
        for i in range(count):
            requests = [
                ScoreRequest(trajectory_id=f"{prefix}{k}", task=task, history=tuple(trajectory[:i]), step=trajectory[i])
                for k in range(size)
            ]
            scorer._run_batch(requests)
            done += len(requests)
        return done

    batches("warm-", 3)
    # where a batch's wall time goes on the host, without the profiler (which slows every operation): the scorer's
    # parts timed on this thread, each batch's steps rendered, prepared, scored (to the probabilities on the host)
    # and finished
    spent: dict[str, float] = {"render": 0.0, "prepare": 0.0, "model": 0.0, "finish": 0.0}
    for part, name in (("render", "_render_new"), ("prepare", "_prepare"), ("finish", "_finish")):
        setattr(scorer, name, _timed(getattr(scorer, name), spent, part))
    model_call = model.score_continuations
    model.score_continuations = _timed(model_call, spent, "model")  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        timed = batches("split-", 8)
        wall = time.perf_counter() - started
    finally:
        model.score_continuations = model_call  # type: ignore[method-assign]
        for name in ("_render_new", "_prepare", "_finish"):
            delattr(scorer, name)
    split = {f"{part}_ms": round(seconds * 1000 / 8, 2) for part, seconds in spent.items()}
    split["other_ms"] = round((wall - sum(spent.values())) * 1000 / 8, 2)
    split["wall_ms"] = round(wall * 1000 / 8, 2)
    split["steps_per_s"] = round(timed / wall, 1)
    with profile(activities=activities) as prof:
        started = time.perf_counter()
        done = batches("prof-", 8)
        if model.device == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
    key = "self_device_time_total" if model.device == "cuda" else "self_cpu_time_total"
    averages = prof.key_averages()
    events = sorted(averages, key=lambda e: getattr(e, key, 0), reverse=True)[:10]
    return {
        "batch": size,
        "per_batch_unprofiled": split,
        "steps": done,
        "seconds_profiled": round(seconds, 3),
        "by": key,
        "total_ms": round(sum(getattr(e, key, 0) for e in averages) / 1000, 1),
        "host_ms": round(sum(e.self_cpu_time_total for e in averages) / 1000, 1),
        "top": [
            {
                "op": e.key,
                "calls": e.count,
                "ms": round(getattr(e, key, 0) / 1000, 1),
                "cpu_ms": round(e.self_cpu_time_total / 1000, 1),
            }
            for e in events
        ],
    }


def _timed(fn: Callable[..., Any], spent: dict[str, float], part: str) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[part] += time.perf_counter() - t

    return timed


def write_report(path: Path) -> Callable[[dict[str, Any]], None]:
    """A ``report`` callback that rewrites ``path`` with the result so far."""

    def report(result: dict[str, Any]) -> None:
        path.write_text(json.dumps(result, indent=2))

    return report
