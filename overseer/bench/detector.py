"""``overseer bench detector``: the injection detector on one tool output at a time, per output length."""

from __future__ import annotations

import time
from typing import Any

from overseer.detector import load_detector

__all__ = ["bench_detector"]


def bench_detector(model: str = "default", repeats: int = 30) -> dict[str, Any]:
    """p50 / p99 of one ``detect`` call per output length (32 to 4,096 tokens), float32 against bfloat16.

    Both precisions run interleaved in one run on this machine's CPU; ``auto_precision_here`` is what the scorers'
    ``cpu_precision: auto`` picks on it.
    """
    import torch

    from overseer._threads import cpu_precision

    models = {p: load_detector(model, cpu_precision=p) for p in ("float32", "bfloat16")}
    sentence = "Order 48213 shipped on Monday; please confirm the delivery address with the courier. "
    rows = []
    for tokens in (32, 128, 512, 4096):
        text = sentence * (tokens // 10 + 10)
        ids = models["float32"].tokenizer(text, add_special_tokens=False)["input_ids"][:tokens]
        text = models["float32"].tokenizer.decode(ids)
        times: dict[str, list[float]] = {p: [] for p in models}
        for loaded in models.values():
            loaded.detect([text])  # warm-up
        for _ in range(repeats if tokens <= 512 else max(5, repeats // 6)):
            for precision, loaded in models.items():
                started = time.perf_counter()
                loaded.detect([text])
                times[precision].append((time.perf_counter() - started) * 1000)
        row: dict[str, Any] = {"tokens": tokens}
        for precision, samples in times.items():
            samples.sort()
            row[precision] = {
                "p50_ms": round(samples[len(samples) // 2], 2),
                "p99_ms": round(samples[int(0.99 * (len(samples) - 1))], 2),
            }
        row["bfloat16_speedup_p50"] = round(row["float32"]["p50_ms"] / row["bfloat16"]["p50_ms"], 2)
        rows.append(row)
    return {
        "model": model,
        "digest": models["float32"].digest,
        "threads": torch.get_num_threads(),
        "auto_precision_here": cpu_precision("auto"),
        "lengths": rows,
    }
