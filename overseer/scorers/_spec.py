"""What a policy's ``scorers:`` entry is, and the registry of scorer types.

Each scorer type has a spec: a frozen pydantic model with a ``type`` discriminator, its options, and a ``build``
method that makes the scorer. The spec lives beside its scorer (``overseer.scorers``, ``overseer.prm``,
``overseer.detector``); the registry knows the types by dotted name only, so it imports none of them until a policy
asks. Third parties add types without changing overseer, through the ``overseer.scorers`` entry-point group::

    [project.entry-points."overseer.scorers"]
    toxicity = "my_package.scorers:ToxicitySpec"    # a BaseScorerSpec subclass with type: Literal["toxicity"]
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from pydantic import BaseModel, ConfigDict

from overseer.exceptions import ConfigError
from overseer.scorers._base import StepScorer

__all__ = ["BUILTIN_SCORER_TYPES", "BaseScorerSpec", "PluginScorerSpec", "resolve", "scorer_types", "spec_class"]

ENTRY_POINT_GROUP = "overseer.scorers"

BUILTIN_SCORER_TYPES: dict[str, str] = {
    "rules": "overseer.scorers:RulesScorerSpec",
    "constant": "overseer.scorers:ConstantScorerSpec",
    "python": "overseer.scorers:PythonScorerSpec",
    "prm": "overseer.prm:PrmScorerSpec",
    "remote-prm": "overseer.prm:RemotePrmScorerSpec",
    "detector": "overseer.detector:DetectorScorerSpec",
}
"""The scorer types that ship, by the dotted name of their spec class."""


class BaseScorerSpec(BaseModel):
    """One entry of a policy's ``scorers`` mapping: the scorer's type and its options."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    """The scorer type (``rules``, ``prm``, ``detector``, ... or a plug-in's)."""

    def produces(self, name: str) -> frozenset[str] | None:
        """The score names the scorer gives when the policy calls it ``name`` (``None``: not known in advance)."""
        return None

    def build(self, name: str) -> StepScorer:
        """The scorer this entry describes, named ``name`` (raises :class:`~overseer.exceptions.ConfigError`)."""
        raise ConfigError(f"scorer {name!r}: type {self.type!r} does not say how to build its scorer")


class PluginScorerSpec(BaseScorerSpec):
    """A scorer type that a plug-in registers (``overseer.scorers`` entry points); its own spec class validates it."""

    model_config = ConfigDict(
        frozen=True,
        extra="allow",
        json_schema_extra={"properties": {"type": {"type": "string", "not": {"enum": list(BUILTIN_SCORER_TYPES)}}}},
    )


def resolve(name: str, dotted: str) -> Any:
    """The object ``package.module:attr`` names (imported, not called); a ConfigError says why it cannot be."""
    module_name, _, attr = dotted.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as err:
        raise ConfigError(f"scorer {name!r}: cannot import {dotted!r}: {err}") from None
    return found


@cache
def scorer_types() -> dict[str, str]:
    """Every scorer type this installation knows: the built-in ones, then the ``overseer.scorers`` entry points."""
    types = dict(BUILTIN_SCORER_TYPES)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        types.setdefault(ep.name, ep.value)
    return types


def spec_class(type_name: str) -> type[BaseScorerSpec]:
    """The spec class of a scorer type (raises ConfigError for a type nobody registered)."""
    dotted = scorer_types().get(type_name)
    if dotted is None:
        known = ", ".join(sorted(scorer_types()))
        raise ConfigError(
            f"unknown scorer type {type_name!r} (known: {known}; a plug-in registers its type in the "
            f"{ENTRY_POINT_GROUP!r} entry-point group)"
        )
    found = resolve(type_name, dotted)
    if not (isinstance(found, type) and issubclass(found, BaseScorerSpec)):
        raise ConfigError(f"scorer type {type_name!r}: {dotted} is not a BaseScorerSpec subclass")
    return found
