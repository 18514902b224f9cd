"""Step scorers: the contract, the rules scorer, the composite, and the registry that builds them from a policy."""

from overseer.scorers._base import BaseScorer, ScoreRequest, StepScorer
from overseer.scorers._composite import CompositeScorer, ScoreOutcome
from overseer.scorers._rules import RULE_CHECKS, PatternSpec, RulesConfig, RulesScorer

__all__ = [
    "RULE_CHECKS",
    "BaseScorer",
    "CompositeScorer",
    "PatternSpec",
    "RulesConfig",
    "RulesScorer",
    "ScoreOutcome",
    "ScoreRequest",
    "StepScorer",
]
