"""``overseer bench detector``: the injection detector on one tool output at a time, per output length."""

from __future__ import annotations

import time
from typing import Any

from overseer.detector import load_detector

__all__ = ["bench_detector"]


def bench_detector(model: str = "default", repeats: int = 30) -> dict[str, Any]:
    """p50 / p99 of one ``detect`` call per output length (32 to 512 tokens), on this machine's CPU."""
    loaded = load_detector(model)
    sentence = "Order 48213 shipped on Monday; please confirm the delivery address with the courier. "
    rows = []
    for tokens in (32, 64, 128, 256, 512):
        text = sentence * 40
        ids = loaded.tokenizer(text, add_special_tokens=False)["input_ids"][:tokens]
        text = loaded.tokenizer.decode(ids)
        loaded.detect([text])  # warm-up
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            loaded.detect([text])
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        rows.append(
            {
                "tokens": tokens,
                "p50_ms": round(times[len(times) // 2], 2),
                "p99_ms": round(times[int(0.99 * (len(times) - 1))], 2),
            }
        )
    import torch

    return {"model": model, "digest": loaded.digest, "threads": torch.get_num_threads(), "lengths": rows}
