"""The policy entries of the PRM scorers: ``type: prm`` (a model in this process) and ``type: remote-prm``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from overseer.scorers import BaseScorerSpec, StepScorer

__all__ = ["PrmScorerSpec", "RemotePrmScorerSpec"]


class PrmScorerSpec(BaseScorerSpec):
    """The process reward model scorer (needs the ``prm`` extra)."""

    type: Literal["prm"]
    """Always ``prm``."""
    model: str = "default"
    """``default`` (the model that ships), a local directory, or a Hugging Face id already in the cache."""
    format: Literal["auto", "token-classification", "qwen-prm", "math-shepherd"] = "auto"
    """How to read scores: TRL PRMTrainer / overseer token classification, Qwen2.5-Math-PRM, Math-Shepherd."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """``auto`` takes a GPU in half precision where there is one."""
    step_tag: str | None = None
    """The text after every step where scores are read (default: the format's own, or the model's config)."""
    good_token: str = "+"
    """Math-Shepherd: the token that means a good step."""
    bad_token: str = "-"
    """Math-Shepherd: the token that means a bad step."""
    max_task_tokens: int = Field(default=256, ge=8)
    """Budget for the task; longer tasks are cut (and the cut reported)."""
    max_step_tokens: int = Field(default=192, ge=8)
    """Budget for a plan, call, message or answer."""
    max_observation_tokens: int = Field(default=256, ge=8)
    """Budget for a tool's output."""
    incremental: bool = True
    """Reuse the key/value cache of earlier steps (causal backbones only)."""
    slide_keep: float = Field(default=0.25, gt=0.0, lt=1.0)
    """When the window is full, the share of it that the rebuilt cache keeps (the task and the latest steps)."""
    batch_size: int | None = Field(default=None, ge=1)
    """The largest batch the micro-batcher forms (``null``: 16 on a CPU, 256 on a GPU, where throughput kept growing
    with the batch: 1,662 steps/s at batches of about 30 and 2,420 at about 125 on an H200, ``overseer bench
    serve``)."""
    max_wait_ms: float = Field(default=0.0, ge=0.0)
    """How long a step that arrives when the model is idle waits for others to share its batch (0: not at all).
    While a batch runs, arriving steps queue and run together next, whatever this is."""
    pad_incremental: bool | None = None
    """Run the incremental steps of a batch as one padded pass (``null``: on a GPU only; on a CPU, padding rows of
    unequal length cost more than running them one after another)."""
    cpu_precision: Literal["auto", "float32", "bfloat16", "int8"] = "auto"
    """On a CPU, the matrix products of the lean per-step path (the default PRM's family): ``bfloat16`` reads half
    the bytes per step (faster where the CPU has bfloat16 instructions, AVX512-BF16 or AMX; slower where it has
    none); scores move by up to about a hundredth (``overseer bench prm`` reports both). ``int8`` reads a quarter
    (weights quantised per output channel, activations per step, through PyTorch's dynamic quantised linear, which
    PyTorch has marked for removal in a future release; any x86 CPU), scores moving by up to about a hundredth.
    ``auto``: int8 where this PyTorch has that linear, else bfloat16 where the CPU has bfloat16 instructions, else
    float32."""
    trust_remote_code: bool = False
    """Allow the model's own code to run (Qwen2.5-Math-PRM needs it)."""
    allow_download: bool = False
    """Fetch a Hugging Face id that is not in the local cache (never in tests)."""
    required: bool = True
    """When ``false``, a missing ``prm`` extra or model leaves this scorer out with a warning (the rules that read
    its score then match nothing) instead of refusing to start."""

    def produces(self, name: str) -> frozenset[str]:
        """One score, named as the policy names the scorer."""
        return frozenset({name})

    def build(self, name: str) -> StepScorer:
        """Load the model (once per process) and make its scorer."""
        from overseer.prm._scorer import build_scorer

        return build_scorer(name, self)


class RemotePrmScorerSpec(BaseScorerSpec):
    """A PRM served by vLLM, through its pooling API (needs the ``remote`` extra)."""

    type: Literal["remote-prm"]
    """Always ``remote-prm``."""
    url: str = Field(pattern=r"^https?://")
    """The server's base URL (``/pooling`` is added)."""
    model: str
    """The served model's name."""
    step_tag: str = "<extra_0>"
    """The text after every step where the server pools."""
    good_index: int = Field(default=1, ge=0)
    """Which of a pooled pair means "good"."""
    timeout_s: float = Field(default=10.0, gt=0)
    """Per-request timeout."""
    retries: int = Field(default=2, ge=0)
    """Retries on connection errors, timeouts and 5xx answers."""
    api_key_env: str | None = None
    """An environment variable holding a bearer token."""

    def produces(self, name: str) -> frozenset[str]:
        """One score, named as the policy names the scorer."""
        return frozenset({name})

    def build(self, name: str) -> StepScorer:
        """A client of the served model."""
        from overseer.prm.remote import from_spec

        return from_spec(name, self)
