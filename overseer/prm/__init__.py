"""The process reward model for agent trajectories: rendering, loading, and the scorer (the ``prm`` extra).

The runtime only: what serves a step. The training lab (data readers, generator, training, labelling, evaluation)
lives in :mod:`overseer.lab.prm` and is never imported from here.
"""

from __future__ import annotations

from overseer.prm._model import (
    FROZEN_PREFIXES,
    StepModel,
    default_model_path,
    load_delta_model,
    load_step_model,
    minilm_path,
    quiet_transformers,
    require_torch,
    write_overseer_config,
)
from overseer.prm._render import RenderConfig, Renderer, Segment, step_text
from overseer.prm._scorer import MicroBatcher, PrmScorer, build_scorer
from overseer.prm._spec import PrmScorerSpec, RemotePrmScorerSpec

__all__ = [
    "FROZEN_PREFIXES",
    "MicroBatcher",
    "PrmScorer",
    "PrmScorerSpec",
    "RemotePrmScorerSpec",
    "RenderConfig",
    "Renderer",
    "Segment",
    "StepModel",
    "build_scorer",
    "default_model_path",
    "load_delta_model",
    "load_step_model",
    "minilm_path",
    "quiet_transformers",
    "require_torch",
    "step_text",
    "write_overseer_config",
]
