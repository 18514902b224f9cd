"""What the policy decided about a step: the :class:`Verdict`, and the actions it can carry."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from overseer.steps import StepKind

__all__ = ["ACTIONS", "Action", "Verdict"]

Action: TypeAlias = Literal["allow", "flag", "sanitize", "block", "resample", "escalate"]
"""What a policy decides about a step."""

ACTIONS: tuple[Action, ...] = ("allow", "flag", "sanitize", "block", "resample", "escalate")

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Verdict(BaseModel):
    """What the policy decided about one step, with the provenance of the decision."""

    model_config = _FROZEN

    trajectory_id: str
    """The trajectory the step belongs to."""
    index: int = Field(ge=0)
    """The step's 0-based position in its trajectory."""
    step_id: str
    """The step's id."""
    kind: StepKind
    """The step's kind."""
    tool: str | None = None
    """The tool, for tool calls and observations."""
    call_id: str | None = None
    """The call id, for tool calls and observations."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Every score the step received, by name."""
    action: Action
    """What the policy decided."""
    rule: str | None = None
    """The rule that decided, or ``None`` for the policy's default action."""
    reason: str
    """Why, in words."""
    policy: str
    """The policy as ``name@<sha256 prefix>``."""
    scorer: str
    """The scorers as ``name@version`` joined by ``+``."""
    halt: bool = False
    """Whether the trajectory-level stop fired: the run should end here."""
    candidates: int | None = None
    """For ``resample``: how many candidates to draw."""
    fallback: Action | None = None
    """For ``resample``: what applies when no candidate passes."""
    errors: dict[str, str] = Field(default_factory=dict)
    """Scorers that failed on this step, with their error."""
    spans: tuple[tuple[int, int], ...] | None = None
    """For ``sanitize``: the character spans of the observation that were removed, as [start, end)."""
    sanitized: str | None = None
    """For ``sanitize``: the observation as the model should read it (each span replaced by a short notice)."""

    def to_record(self) -> dict[str, Any]:
        """The verdict in the stable JSON Lines format (see the README)."""
        return {
            "trajectory_id": self.trajectory_id,
            "index": self.index,
            "kind": self.kind,
            "tool": self.tool,
            "call_id": self.call_id,
            "scores": self.scores,
            "action": self.action,
            "rule": self.rule,
            "reason": self.reason,
            "policy": self.policy,
            "scorer": self.scorer,
            "halt": self.halt,
            **({"spans": [list(s) for s in self.spans]} if self.spans is not None else {}),
        }
