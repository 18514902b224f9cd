"""The threads the models run on: one per model, each with its own share of the CPU's cores.

The shipped policy runs two models on every observation (the detector and the PRM), concurrently, each on a
thread of its own. Left alone, each would start torch's intra-op threads for every core, and on a small CPU the
two would fight over the same cores. Measured on the 2-core development machine (default policy, the PRM bench's
50-step trajectory, 3 interleaved runs each): an observation step took p50 44-49 ms with two torch threads per
model and 35-38 ms with one; a tool call (the PRM alone) 21 ms either way, give or take one. So a model thread
sets its own torch thread count when it starts: ``$OVERSEER_TORCH_THREADS`` when set, else half the cores (at least
one). The setting is made on overseer's model threads only; the caller's threads keep theirs.

A process given one core (a re-audit worker that Ray or ``--engine processes`` gives one CPU) runs all its models on
one shared thread, one after another: two model threads there would use two cores while the scheduler counts one, and
two such workers on a 2-core machine then fought over the cores (`overseer bench rescore --json`: 2 Ray actors
re-audited 1.27 and 1.52 times as fast as one; with the shared thread, 2.06 and 1.74).
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ModelExecutor", "cpu_precision", "model_executor", "model_threads", "settle_heap", "share_cores"]

T = TypeVar("T")

_SHARE: list[int] = []
_ONE_CORE: list[ModelExecutor] = []


def share_cores(cores: int) -> None:
    """This process has ``cores`` cores to itself (a re-audit worker beside others): its models split those.

    With one core, the models take turns on one shared thread (:func:`model_executor`).
    """
    _SHARE[:] = [max(1, cores)]


def model_threads() -> int:
    """How many torch intra-op threads each model thread uses: the variable, else half this process's cores."""
    given = os.environ.get("OVERSEER_TORCH_THREADS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    cores = _SHARE[0] if _SHARE else (os.cpu_count() or 1)
    return max(1, cores // 2)


def cpu_precision(requested: str, int8: bool = False) -> str:
    """``auto`` resolved: ``int8``, ``bfloat16`` or ``float32``, by model and machine.

    ``int8`` for a model whose int8 path keeps its decisions (``int8=True``: the PRM's lean path), where this
    PyTorch still has its dynamic quantised linear; else ``bfloat16`` where the CPU has native bfloat16
    (AVX512-BF16, AMX); else ``float32``. Any other value comes back as it is. On the development CPU (AVX512-BF16) the detector and the PRM ran about
    1.7 to 2.4 times faster with their matrix products in bfloat16, and the whole unseen-source evaluation gave the
    same count in every cell (see the detector's card); the PRM in int8 ran faster still (1.4x bfloat16 at p50 and
    p99) with the same counts. Without native instructions bfloat16 is emulated and slower, so float32 stays there;
    int8 runs on any x86 CPU. The detector stays off int8: its decisions moved (17 of the 324 everyday outputs).
    The CPU's flags are read once per process.
    """
    if requested != "auto":
        return requested
    if int8 and _int8_available():
        return "int8"
    return _native_bf16()


@functools.cache
def _int8_available() -> bool:
    """Whether this PyTorch has the dynamic quantised linear (marked for removal in a future release)."""
    try:
        import torch

        return hasattr(torch.ops.quantized, "linear_dynamic") and hasattr(torch.ops.quantized, "linear_prepack")
    except Exception:  # any failure (no torch, no quantized ops) means no int8 path
        return False


@functools.cache
def _native_bf16() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = next((line for line in handle if line.startswith("flags")), "").split()
    except OSError:
        return "float32"
    return "bfloat16" if "avx512_bf16" in flags or "amx_bf16" in flags else "float32"


def _init() -> None:
    try:
        import torch
    except ImportError:  # a scorer without torch has nothing to set
        return
    torch.set_num_threads(model_threads())


class ModelExecutor(concurrent.futures.ThreadPoolExecutor):
    """A model's thread, which says when it last showed life: the start or end of a job.

    A step queued behind other steps' work on a busy model is not a stuck scorer. The pipeline's deadline reads
    :meth:`progress` to tell the two apart (``overseer.scorers._composite``): while jobs keep starting and ending,
    a queued step waits its turn; a job that runs past the deadline, and every step behind it, still fails.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._progress = time.monotonic()
        self._lock = threading.Lock()

    def progress(self) -> float:
        """``time.monotonic()`` when a job last started or ended on this thread (or the thread was made)."""
        with self._lock:
            return self._progress

    def _mark(self) -> None:
        now = time.monotonic()
        with self._lock:
            self._progress = max(self._progress, now)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        """Run ``fn`` on the model's thread, marking progress when it starts and when it ends."""

        def job() -> T:
            self._mark()
            try:
                return fn(*args, **kwargs)
            finally:
                self._mark()

        return super().submit(job)


class _SharedExecutor(ModelExecutor):
    """The one model thread of a one-core process: every model's work, in turn. It lives as long as the process."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """A model that closes lets the thread go on serving the others (it ends with the process)."""


def model_executor(name: str) -> ModelExecutor:
    """A one-thread executor for one model, its torch threads set when the thread starts.

    In a process given one core (:func:`share_cores`), every model gets the same one (see the module docstring).
    """
    if _SHARE and _SHARE[0] == 1:
        if not _ONE_CORE:
            _ONE_CORE.append(_SharedExecutor(1, thread_name_prefix="overseer-models", initializer=_init))
        return _ONE_CORE[0]
    return ModelExecutor(1, thread_name_prefix=name, initializer=_init)


def settle_heap() -> None:
    """After a model loads: collect, then freeze what is alive, so later full collections skip the models' objects.

    Loading the default detector and PRM leaves some 400,000 objects tracked by Python's cyclic collector (torch,
    transformers and their modules). A full collection walks all of them: about 200 ms on the development CPU, and it
    lands on whatever step is being judged (the default policy's step p99 on the PRM benchmark's trajectory went from
    about 22 ms to over 120 ms when it did; 0.3 ms per full collection once frozen). Objects alive now are never
    collected as cycles afterwards (``gc.freeze``); reference counting still frees them. ``OVERSEER_GC_FREEZE=0``
    leaves the collector alone.
    """
    import gc

    if os.environ.get("OVERSEER_GC_FREEZE", "").strip() == "0":
        return
    gc.collect()
    gc.freeze()
