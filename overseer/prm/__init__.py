"""The process reward model for agent trajectories: rendering, loading, and the scorer (the ``prm`` extra).

``build_scorer`` is what a policy's ``scorers: {prm: {type: prm, ...}}`` entry calls.
"""

from __future__ import annotations

from typing import Any

from overseer.prm._model import StepModel, default_model_path, load_step_model, minilm_path
from overseer.prm._render import RenderConfig, Renderer, Segment, step_text
from overseer.prm._scorer import MicroBatcher, PrmScorer

__all__ = [
    "MicroBatcher",
    "PrmScorer",
    "RenderConfig",
    "Renderer",
    "Segment",
    "StepModel",
    "build_scorer",
    "default_model_path",
    "load_step_model",
    "minilm_path",
    "step_text",
]


def build_scorer(name: str, spec: Any) -> PrmScorer:
    """The PRM scorer for a policy's ``type: prm`` entry (a :class:`~overseer.policy.PrmScorerSpec`)."""
    model = load_step_model(
        spec.model,
        format=spec.format,
        device=spec.device,
        step_tag=spec.step_tag,
        good_token=spec.good_token,
        bad_token=spec.bad_token,
        trust_remote_code=spec.trust_remote_code,
        allow_download=spec.allow_download,
    )
    given = spec.model_fields_set
    defaults = model.render
    render = RenderConfig(
        step_tag=defaults.step_tag,
        max_task_tokens=spec.max_task_tokens if "max_task_tokens" in given else defaults.max_task_tokens,
        max_step_tokens=spec.max_step_tokens if "max_step_tokens" in given else defaults.max_step_tokens,
        max_observation_tokens=(
            spec.max_observation_tokens if "max_observation_tokens" in given else defaults.max_observation_tokens
        ),
    )
    return PrmScorer(
        model,
        name=name,
        batch_size=spec.batch_size,
        max_wait_ms=spec.max_wait_ms,
        incremental=spec.incremental,
        render=render,
        slide_keep=spec.slide_keep,
        pad_incremental=spec.pad_incremental,
    )
