"""The policy file's models. Every key is documented here; the JSON Schema is generated from these classes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from overseer._regex import RegexError, compile_linear
from overseer.scorers._rules import RulesConfig
from overseer.steps import Action, StepKind

__all__ = [
    "ConstantScorerSpec",
    "DetectorScorerSpec",
    "Policy",
    "PrmScorerSpec",
    "PythonScorerSpec",
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


class When(StepMatch):
    """When a rule applies: conditions on the step and on the trajectory so far. All must hold."""

    args: dict[str, str] | None = None
    """Argument-name glob -> regular expression searched in that argument's value (as text or JSON)."""
    args_from: ArgsFrom | None = None
    """The call's arguments carry a value that first appeared in an earlier matching step, and not in the
    task or a user message (for example: a recipient read from an untrusted web page)."""
    after: StepMatch | None = None
    """An earlier step of the trajectory matches these conditions."""
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


class RulesScorerSpec(RulesConfig):
    """The built-in rules scorer."""

    type: Literal["rules"]
    """Always ``rules``."""


class PrmScorerSpec(BaseModel):
    """The process reward model scorer (needs the ``prm`` extra)."""

    model_config = _STRICT

    type: Literal["prm"]
    """Always ``prm``."""
    model: str = "default"
    """``default`` (the model that ships), a local directory, or a Hugging Face id already in the cache."""
    format: Literal["auto", "token-classification", "qwen-prm", "math-shepherd"] = "auto"
    """How to read scores: TRL PRMTrainer / overseer token classification, Qwen2.5-Math-PRM, Math-Shepherd."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """``auto`` takes a GPU in half precision where there is one."""
    step_tag: str | None = None
    """The text after every step where scores are read (default: the format's own, or the model's config)."""
    good_token: str = "+"
    """Math-Shepherd: the token that means a good step."""
    bad_token: str = "-"
    """Math-Shepherd: the token that means a bad step."""
    max_task_tokens: int = Field(default=256, ge=8)
    """Budget for the task; longer tasks are cut (and the cut reported)."""
    max_step_tokens: int = Field(default=192, ge=8)
    """Budget for a plan, call, message or answer."""
    max_observation_tokens: int = Field(default=256, ge=8)
    """Budget for a tool's output."""
    incremental: bool = True
    """Reuse the key/value cache of earlier steps (causal backbones only)."""
    slide_keep: float = Field(default=0.25, gt=0.0, lt=1.0)
    """When the window is full, the share of it that the rebuilt cache keeps (the task and the latest steps)."""
    batch_size: int = Field(default=16, ge=1)
    """The largest batch the micro-batcher forms."""
    max_wait_ms: float = Field(default=2.0, ge=0.0)
    """How long the micro-batcher waits to fill a batch."""
    pad_incremental: bool | None = None
    """Run the incremental steps of a batch as one padded pass (``null``: on a GPU only; on a CPU, padding rows of
    unequal length cost more than running them one after another)."""
    trust_remote_code: bool = False
    """Allow the model's own code to run (Qwen2.5-Math-PRM needs it)."""
    allow_download: bool = False
    """Fetch a Hugging Face id that is not in the local cache (never in tests)."""
    required: bool = True
    """When ``false``, a missing ``prm`` extra or model leaves this scorer out with a warning (the rules that read
    its score then match nothing) instead of refusing to start."""


class RemotePrmScorerSpec(BaseModel):
    """A PRM served by vLLM, through its pooling API (needs the ``remote`` extra)."""

    model_config = _STRICT

    type: Literal["remote-prm"]
    """Always ``remote-prm``."""
    url: str = Field(pattern=r"^https?://")
    """The server's base URL (``/pooling`` is added)."""
    model: str
    """The served model's name."""
    step_tag: str = "<extra_0>"
    """The text after every step where the server pools."""
    good_index: int = Field(default=1, ge=0)
    """Which of a pooled pair means "good"."""
    timeout_s: float = Field(default=10.0, gt=0)
    """Per-request timeout."""
    retries: int = Field(default=2, ge=0)
    """Retries on connection errors, timeouts and 5xx answers."""
    api_key_env: str | None = None
    """An environment variable holding a bearer token."""


class DetectorScorerSpec(BaseModel):
    """The injection detector: which characters of a tool's output address the agent (needs the ``prm`` extra)."""

    model_config = _STRICT

    type: Literal["detector"]
    """Always ``detector``."""
    model: str = "default"
    """``default`` (the detector that ships in ``overseer/detector/default``) or a directory trained by
    ``overseer detector train``."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Where it runs (``auto``: the CPU; the model is small)."""
    threshold: float | None = Field(default=None, gt=0.0, lt=1.0)
    """Token probability above which a character belongs to a detected span (default: the model's own, 0.5)."""
    max_chars: int = Field(default=200_000, ge=1)
    """Outputs longer than this are not scanned; they score 0 (fail closed: a rule on the score treats the whole
    output as suspect)."""
    required: bool = True
    """When ``false``, a missing ``prm`` extra or model leaves this scorer out with a warning."""


class ConstantScorerSpec(BaseModel):
    """A scorer that gives every step the same score (for tests and benchmarks)."""

    model_config = _STRICT

    type: Literal["constant"]
    """Always ``constant``."""
    value: float = Field(default=1.0, ge=0.0, le=1.0)
    """The score."""


class PythonScorerSpec(BaseModel):
    """A scorer of your own: ``factory`` is ``module:callable``, called with ``options`` as keyword arguments."""

    model_config = _STRICT

    type: Literal["python"]
    """Always ``python``."""
    factory: str = Field(pattern=r"^[\w.]+:[\w.]+$")
    """``package.module:callable`` returning a StepScorer."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the factory."""


ScorerSpec: TypeAlias = Annotated[
    RulesScorerSpec | PrmScorerSpec | RemotePrmScorerSpec | DetectorScorerSpec | ConstantScorerSpec | PythonScorerSpec,
    Field(discriminator="type"),
]


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


def _default_scorers() -> dict[str, ScorerSpec]:
    return {"rules": RulesScorerSpec(type="rules")}


class Policy(BaseModel):
    """An oversight policy: which scorers judge each step, and the rules that turn their scores into actions."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra={"title": "overseer policy"})

    version: Literal[1] = 1
    """The policy format's version."""
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """The policy's name, recorded with every decision."""
    description: str | None = None
    """What the policy is for."""
    extends: str | None = None
    """A shipped policy (``default``, ``strict``, ``permissive``) or a file, relative to this one, to build on.
    This policy's keys replace the base's; its rules come first, and replace base rules of the same name."""
    scorers: dict[str, ScorerSpec] = Field(default_factory=_default_scorers)
    """The scorers, by name. All run concurrently on every step."""
    scorer_timeout_s: float = Field(default=10.0, gt=0.0)
    """How long a scorer may take on one step before it counts as failed."""
    on_scorer_error: NonResample = "block"
    """What to do when a scorer fails or times out: fail closed (``block``) unless you say otherwise. The
    decision is the more severe of this and what the rules decide from the scores that did arrive."""
    default_action: NonResample = "allow"
    """What to do when no rule matches."""
    rules: list[Rule] = Field(default_factory=list)
    """The rules, tried in order; the first match wins."""
    stop: StopSpec | None = None
    """The trajectory-level stop."""
    redact: RedactSpec | None = None
    """Masking of secrets and personal data before anything is stored or exported (none when absent)."""

    @model_validator(mode="after")
    def _unique_rule_names(self) -> Policy:
        seen: set[str] = set()
        for rule in self.rules:
            if rule.name in seen:
                raise ValueError(f"rule name {rule.name!r} is used twice")
            seen.add(rule.name)
        return self

    @cached_property
    def digest(self) -> str:
        """The SHA-256 of the policy's canonical JSON (what it means, not how the file is laid out)."""
        canonical = json.dumps(self.model_dump(mode="json", exclude={"extends"}), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def id(self) -> str:
        """``name@<first 12 hex digits of the digest>``, as recorded with each decision."""
        return f"{self.name}@{self.digest[:12]}"

    @classmethod
    def from_file(cls, path: str | Path) -> Policy:
        """Load and validate a YAML policy file (raises :class:`~overseer.exceptions.PolicyError`)."""
        from overseer.policy._loader import policy_from_file

        return policy_from_file(path)

    @classmethod
    def from_text(cls, text: str, *, source: str = "<string>") -> Policy:
        """Load and validate a policy from YAML text."""
        from overseer.policy._loader import policy_from_text

        return policy_from_text(text, source=source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Policy:
        """Validate a policy given as a dict."""
        from overseer.policy._loader import policy_from_dict

        return policy_from_dict(data)
