"""The injection detector: which characters of a tool's output are an instruction addressed to the agent.

The runtime only: the model (loaded once per process, torch imported when it loads), its scorer and its policy
entry. The lab (document composer, sources, training, the unseen-source evaluation) lives in
:mod:`overseer.lab.detector` and is never imported from here.
"""

from __future__ import annotations

from overseer.detector._model import (
    DELTA_FILE,
    FROZEN_PREFIX,
    Detection,
    InjectionModel,
    build_encoder,
    default_detector_path,
    load_base_weights,
    load_detector,
    load_tagger,
    minilm_path,
)
from overseer.detector._scorer import DetectorScorer, build_scorer
from overseer.detector._spec import DetectorScorerSpec

__all__ = [
    "DELTA_FILE",
    "FROZEN_PREFIX",
    "Detection",
    "DetectorScorer",
    "DetectorScorerSpec",
    "InjectionModel",
    "build_encoder",
    "build_scorer",
    "default_detector_path",
    "load_base_weights",
    "load_detector",
    "load_tagger",
    "minilm_path",
]
