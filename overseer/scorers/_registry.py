"""Build the scorers a policy names. The PRM scorer lives in ``overseer.prm`` (the ``prm`` extra)."""

from __future__ import annotations

import importlib
import logging
from typing import Any

from overseer.exceptions import ConfigError
from overseer.scorers._base import StepScorer
from overseer.scorers._rules import RulesConfig, RulesScorer

__all__ = ["build_scorer", "build_scorers", "resolve_factory"]

log = logging.getLogger("overseer")


def build_scorer(name: str, spec: Any) -> StepScorer:
    """The scorer for one entry of a policy's ``scorers`` mapping."""
    kind = spec.type
    if kind == "rules":
        scorer = RulesScorer(RulesConfig.model_validate(spec.model_dump(exclude={"type"})))
        return scorer
    if kind == "constant":
        from overseer.testing import ConstantScorer

        return ConstantScorer(spec.value, name=name)
    if kind == "python":
        factory = resolve_factory(name, spec.factory)
        try:
            built = factory(**spec.options)
        except Exception as err:  # third-party code: its failure is a configuration error, not a traceback
            raise ConfigError(f"scorer {name!r}: {spec.factory}(...) raised {type(err).__name__}: {err}") from None
        if not isinstance(built, StepScorer):
            raise ConfigError(f"scorer {name!r}: {spec.factory} returned {type(built).__name__}, not a StepScorer")
        return built
    if kind == "remote-prm":
        from overseer.prm.remote import from_spec

        return from_spec(name, spec)
    if kind == "detector":
        from overseer.detector._scorer import build_scorer as build_detector

        return build_detector(name, spec)
    if kind == "prm":
        try:
            prm = importlib.import_module("overseer.prm")
        except ModuleNotFoundError as err:
            if err.name == "overseer.prm":
                raise ConfigError(f"scorer {name!r}: this version of overseer has no PRM scorer yet") from None
            raise
        built_prm: StepScorer = prm.build_scorer(name, spec)
        return built_prm
    raise ConfigError(f"scorer {name!r}: unknown type {kind!r}")


def resolve_factory(name: str, dotted: str) -> Any:
    """The callable ``package.module:attr`` names (imported, not called); a ConfigError says why it cannot be."""
    module_name, _, attr = dotted.partition(":")
    try:
        factory: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            factory = getattr(factory, part)
    except (ImportError, AttributeError) as err:
        raise ConfigError(f"scorer {name!r}: cannot import {dotted!r}: {err}") from None
    if not callable(factory):
        raise ConfigError(f"scorer {name!r}: {dotted!r} is not callable")
    return factory


def build_scorers(specs: dict[str, Any]) -> list[StepScorer]:
    """The scorers for a policy's ``scorers`` mapping, in order (an optional one that cannot load is left out)."""
    scorers = []
    for name, spec in specs.items():
        try:
            scorers.append(build_scorer(name, spec))
        except ConfigError as err:
            if getattr(spec, "required", True):
                raise
            log.warning("scorer %r left out: %s (it is optional in this policy; its rules match nothing)", name, err)
    return scorers
