"""The policy entry of the injection detector: ``type: detector``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from overseer.scorers import BaseScorerSpec, StepScorer

__all__ = ["DetectorScorerSpec"]


class DetectorScorerSpec(BaseScorerSpec):
    """The injection detector: which characters of a tool's output address the agent (needs the ``prm`` extra)."""

    type: Literal["detector"]
    """Always ``detector``."""
    model: str = "default"
    """``default`` (the detector that ships in ``overseer/detector/default``) or a directory trained by
    ``overseer detector train``."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Where it runs (``auto``: the CPU; the model is small)."""
    cpu_precision: Literal["auto", "float32", "bfloat16"] = "auto"
    """On a CPU, ``bfloat16`` runs the matrix products in bfloat16 (about twice as fast where the CPU has bfloat16
    instructions, AVX512-BF16 or AMX; slower where it has none); probabilities move by a few hundredths. ``auto``:
    bfloat16 where the CPU has those instructions, float32 elsewhere."""
    threshold: float | None = Field(default=None, gt=0.0, lt=1.0)
    """Token probability above which a character belongs to a detected span (default: the model's own, 0.5)."""
    max_chars: int = Field(default=200_000, ge=1)
    """Outputs longer than this are not scanned; they score 0 (fail closed: a rule on the score treats the whole
    output as suspect)."""
    required: bool = True
    """When ``false``, a missing ``prm`` extra or model leaves this scorer out with a warning."""

    def produces(self, name: str) -> frozenset[str]:
        """One score, named as the policy names the scorer."""
        return frozenset({name})

    def build(self, name: str) -> StepScorer:
        """Load the detector (once per process) and make its scorer."""
        from overseer.detector._scorer import build_scorer

        return build_scorer(name, self)
