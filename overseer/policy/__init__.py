"""Policies in YAML: the models, the loader, and the engine that applies them."""

from overseer.policy._engine import Decision, PolicyEngine, TrajectoryContext
from overseer.policy._loader import (
    BUILTIN_POLICIES,
    builtin_policy_path,
    load_policy,
    policy_from_dict,
    policy_from_file,
    policy_from_text,
)
from overseer.policy._model import (
    ArgsFrom,
    ConstantScorerSpec,
    Policy,
    PrmScorerSpec,
    PythonScorerSpec,
    RemotePrmScorerSpec,
    ResampleSpec,
    Rule,
    RulesScorerSpec,
    ScoreBound,
    ScorerSpec,
    StepMatch,
    StopSpec,
    When,
)

__all__ = [
    "BUILTIN_POLICIES",
    "ArgsFrom",
    "ConstantScorerSpec",
    "Decision",
    "Policy",
    "PolicyEngine",
    "PrmScorerSpec",
    "PythonScorerSpec",
    "RemotePrmScorerSpec",
    "ResampleSpec",
    "Rule",
    "RulesScorerSpec",
    "ScoreBound",
    "ScorerSpec",
    "StepMatch",
    "StopSpec",
    "TrajectoryContext",
    "When",
    "builtin_policy_path",
    "load_policy",
    "policy_from_dict",
    "policy_from_file",
    "policy_from_text",
]
