"""Build the scorers a policy names: each entry's spec builds its own scorer (see :mod:`overseer.scorers._spec`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from overseer.exceptions import ConfigError
from overseer.scorers._base import StepScorer
from overseer.scorers._spec import BaseScorerSpec

__all__ = ["build_scorer", "build_scorers"]

log = logging.getLogger("overseer")


def build_scorer(name: str, spec: BaseScorerSpec) -> StepScorer:
    """The scorer for one entry of a policy's ``scorers`` mapping (raises ConfigError when it cannot be made)."""
    return spec.build(name)


def build_scorers(specs: Mapping[str, BaseScorerSpec]) -> list[StepScorer]:
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
