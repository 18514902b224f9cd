"""The policy file's models. Every key is documented here; the JSON Schema is generated from these classes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from overseer._regex import RegexError, compile_linear
from overseer.detector import DetectorScorerSpec
from overseer.prm import PrmScorerSpec, RemotePrmScorerSpec
from overseer.scorers import (
    ConstantScorerSpec,
    PluginScorerSpec,
    PythonScorerSpec,
    RulesScorerSpec,
)
from overseer.steps import StepKind
from overseer.verdict import Action

__all__ = [
    "ConstantScorerSpec",
    "DetectorScorerSpec",
    "PrmScorerSpec",
    "PythonScorerSpec",
    "RedactSpec",
    "RemotePrmScorerSpec",
    "ResampleSpec",
    "Rule",
    "RulesScorerSpec",
    "ScoreBound",
    "ScorerSpec",
    "StepMatch",
    "StopSpec",
    "When",
]

_STRICT = ConfigDict(frozen=True, extra="forbid")
Globs: TypeAlias = str | list[str]
Kinds: TypeAlias = StepKind | list[StepKind]
Actions: TypeAlias = Action | list[Action]
NonResample: TypeAlias = Literal["allow", "flag", "block", "escalate"]
Sink: TypeAlias = Literal["user", "tool_output", "injected_tool_output"]

SEVERITY: dict[str, int] = {"allow": 0, "flag": 1, "sanitize": 2, "resample": 3, "escalate": 4, "block": 5}
"""How severe each action is, for combining two decisions."""


def _check_regex(value: str | None) -> str | None:
    if value is not None:
        try:
            compile_linear(value)
        except RegexError as err:
            raise ValueError(
                f"invalid regular expression {value!r}: {err} (patterns run in linear time with RE2: "
                "no look-around or back-references)"
            ) from None
    return value


class ScoreBound(BaseModel):
    """A bound on one named score. ``below: 0.2`` holds when the score is < 0.2; ``above`` when it is >."""

    model_config = _STRICT

    below: float | None = Field(default=None, ge=0.0, le=1.0)
    """Holds when the score is strictly below this value."""
    above: float | None = Field(default=None, ge=0.0, le=1.0)
    """Holds when the score is strictly above this value."""

    @model_validator(mode="after")
    def _one_bound(self) -> ScoreBound:
        if self.below is None and self.above is None:
            raise ValueError("give 'below', 'above', or both")
        return self


class StepMatch(BaseModel):
    """Conditions on one step; all given conditions must hold. Also used for earlier steps (``after``)."""

    model_config = _STRICT

    kind: Kinds | None = None
    """The step kind, or a list of kinds."""
    tool: Globs | None = None
    """Glob(s) on the tool name (tool calls and observations)."""
    content: str | None = None
    """A regular expression searched (case-insensitively) in the step's text."""
    score: dict[str, ScoreBound] | None = None
    """Bounds on named scores; a score the step did not receive never matches."""
    action: Actions | None = None
    """The action decided for the step (meaningful for earlier steps in ``after`` / ``args_from``)."""

    @field_validator("content")
    @classmethod
    def _content_regex(cls, value: str | None) -> str | None:
        return _check_regex(value)


class ArgsFrom(StepMatch):
    """A tool call whose arguments carry a value first seen in an earlier step that matches these conditions."""

    min_length: int = Field(default=5, ge=1)
    """Ignore argument values shorter than this (so that small words and numbers do not match)."""
    in_spans_of: str | None = None
    """Only count a value found inside the spans that this score (say ``detector``) marked in the earlier step:
    a recipient taken from the injected passage itself, not from the rest of an output that also carries one."""
    args: Globs | None = None
    """Only trace the values of these arguments (globs on the argument name: the sinks, such as ``recipient``,
    ``to``, ``url``, ``iban``, ``*account*``); all arguments when absent."""
    named_by_user: bool = False
    """A value that holds, as one of its words, a name the user wrote (a capitalised word of the task or a user
    message, three letters or more) counts as given by the user: after "Settle up with Jonas",
    ``jonas.weber@mail.example`` read in Jonas's message is whom the user meant, not a planted target; after
    "apply to Fjord Analytics", so is ``jobs@fjord-analytics.example`` (an address's domain counts, a mail
    provider's does not)."""


class When(StepMatch):
    """When a rule applies: conditions on the step and on the trajectory so far. All must hold."""

    args: dict[str, str] | None = None
    """Argument-name glob -> regular expression searched in that argument's value (as text or JSON)."""
    args_from: ArgsFrom | None = None
    """The call's arguments carry a value that first appeared in an earlier matching step, and not in the
    task or a user message (for example: a recipient read from an untrusted web page)."""
    after: StepMatch | None = None
    """An earlier step of the trajectory matches these conditions."""
    not_after: StepMatch | None = None
    """No earlier step of the trajectory matches these conditions (``{kind: observation}``: the agent has read no
    tool output yet, so no tool output can have asked for this step)."""
    repeated: int | None = Field(default=None, ge=1)
    """The same tool call (same tool, same arguments) was already made at least this many times."""

    @model_validator(mode="after")
    def _no_action(self) -> When:
        if self.action is not None:
            raise ValueError("'action' applies to earlier steps only: use it inside 'after' or 'args_from'")
        return self

    @field_validator("args")
    @classmethod
    def _arg_regexes(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for regex in (value or {}).values():
            _check_regex(regex)
        return value


class ResampleSpec(BaseModel):
    """How to resample: draw candidates, keep the best-scored one that passes."""

    model_config = _STRICT

    candidates: int = Field(default=4, ge=2, le=32)
    """How many candidates to draw in all."""
    keep: Literal["best"] = "best"
    """Which candidate to keep."""
    score: str | None = None
    """The score that ranks candidates (by default the lowest of each candidate's scores)."""
    fallback: NonResample = "block"
    """What applies when no candidate passes."""


class Rule(BaseModel):
    """A rule: when its conditions hold, its action applies. Rules are tried in order; the first match wins."""

    model_config = _STRICT

    name: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$")
    """A unique name, recorded with every decision it makes."""
    description: str | None = None
    """What the rule is for."""
    when: When = Field(default_factory=When)
    """The conditions (an empty ``when`` matches every step)."""
    action: Action
    """What to do with a matching step."""
    reason: str | None = None
    """The reason to record; by default one is written from what matched. May use ``{tool}`` and ``{kind}``."""
    resample: ResampleSpec | None = None
    """For ``action: resample``: how (defaults apply when absent)."""

    @model_validator(mode="after")
    def _sanitize_observations(self) -> Rule:
        kinds = self.when.kind
        if self.action == "sanitize" and kinds != "observation" and kinds != ["observation"]:
            raise ValueError(
                "'action: sanitize' removes passages from tool output: give it 'when: {kind: observation}'"
            )
        return self

    @model_validator(mode="after")
    def _resample_spec(self) -> Rule:
        if self.resample is not None and self.action != "resample":
            raise ValueError("'resample' is only valid with 'action: resample'")
        if self.action == "resample" and self.resample is None:
            object.__setattr__(self, "resample", ResampleSpec())
        return self


class StopSpec(BaseModel):
    """The trajectory-level stop: halt the run once too many steps were blocked, flagged or escalated."""

    model_config = _STRICT

    after_blocked: int | None = Field(default=None, ge=1)
    """Halt once this many steps were blocked."""
    after_flagged: int | None = Field(default=None, ge=1)
    """Halt once this many steps were flagged."""
    after_escalated: int | None = Field(default=None, ge=1)
    """Halt once this many steps were escalated."""
    message: str = "The run was stopped by the oversight policy."
    """What the run's final message says."""

    @model_validator(mode="after")
    def _one_counter(self) -> StopSpec:
        if self.after_blocked is None and self.after_flagged is None and self.after_escalated is None:
            raise ValueError("give at least one of after_blocked, after_flagged, after_escalated")
        return self


def _scorer_type(value: Any) -> str:
    """Which spec validates a ``scorers`` entry: a built-in type by its name, any other type as a plug-in."""
    kind = value.get("type") if isinstance(value, Mapping) else getattr(value, "type", None)
    return kind if kind in _BUILTIN_SPECS else "plugin"


_BUILTIN_SPECS = ("rules", "prm", "remote-prm", "detector", "constant", "python")

ScorerSpec: TypeAlias = Annotated[
    Annotated[RulesScorerSpec, Tag("rules")]
    | Annotated[PrmScorerSpec, Tag("prm")]
    | Annotated[RemotePrmScorerSpec, Tag("remote-prm")]
    | Annotated[DetectorScorerSpec, Tag("detector")]
    | Annotated[ConstantScorerSpec, Tag("constant")]
    | Annotated[PythonScorerSpec, Tag("python")]
    | Annotated[PluginScorerSpec, Tag("plugin")],
    Discriminator(_scorer_type),
]
"""One entry of a policy's ``scorers``: a built-in type, or a type that a plug-in registers (validated by its
own spec class, found through the ``overseer.scorers`` entry-point group)."""


class RedactSpec(BaseModel):
    """What to mask before anything is stored or exported (the audit store, spans, exports)."""

    model_config = _STRICT

    secrets: bool = True
    """API keys, tokens, private keys, passwords inside URLs."""
    cards: bool = True
    """Payment card numbers (13-19 digits that pass the Luhn check)."""
    emails: bool = False
    """E-mail addresses."""
    phones: bool = False
    """Phone numbers in international form (+ and 8-15 digits)."""
    arg_names: list[str] = Field(
        default_factory=lambda: [
            "*password*",
            "*passwd*",
            "*secret*",
            "*token*",
            "*api_key*",
            "*apikey*",
            "authorization",
            "cookie",
            "cvv",
            "cvc",
            "ssn",
            "pin",
        ]
    )
    """Argument (and JSON key) names whose values are masked whole; globs, case-insensitive."""
    patterns: dict[str, str] = Field(default_factory=dict)
    """Your own: a label -> a regular expression whose matches are masked."""
    scorers_see: Literal["original", "redacted"] = "original"
    """What the scorers get: the original steps (default), or the masked ones (for a scorer outside your trust
    boundary, such as a remote model)."""

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: dict[str, str]) -> dict[str, str]:
        for label, regex in value.items():
            try:
                compile_linear(regex)
            except RegexError as err:
                raise ValueError(f"pattern {label!r} is not a regular expression RE2 can run: {err}") from None
        return value
