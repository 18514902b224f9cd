"""Step scorers: the contract, the built-in scorers with their policy specs, the composite, and the registry.

A scorer type is a spec (a policy entry's ``type`` and options) that builds a :class:`StepScorer`; third parties add
types through the ``overseer.scorers`` entry-point group (see :mod:`overseer.scorers._spec`).
"""

from overseer.scorers._base import BaseScorer, ScoreRequest, StepScorer
from overseer.scorers._composite import CompositeScorer, ScoreOutcome
from overseer.scorers._constant import ConstantScorer, ConstantScorerSpec
from overseer.scorers._python import PythonScorerSpec, resolve_factory
from overseer.scorers._registry import build_scorer, build_scorers
from overseer.scorers._rules import RULE_CHECKS, PatternSpec, RulesConfig, RulesScorer, RulesScorerSpec
from overseer.scorers._spec import BUILTIN_SCORER_TYPES, BaseScorerSpec, PluginScorerSpec, scorer_types, spec_class

__all__ = [
    "BUILTIN_SCORER_TYPES",
    "RULE_CHECKS",
    "BaseScorer",
    "BaseScorerSpec",
    "CompositeScorer",
    "ConstantScorer",
    "ConstantScorerSpec",
    "PatternSpec",
    "PluginScorerSpec",
    "PythonScorerSpec",
    "RulesConfig",
    "RulesScorer",
    "RulesScorerSpec",
    "ScoreOutcome",
    "ScoreRequest",
    "StepScorer",
    "build_scorer",
    "build_scorers",
    "resolve_factory",
    "scorer_types",
    "spec_class",
]
