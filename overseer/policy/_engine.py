"""The policy engine: compiled once per policy, it turns a step's scores and its trajectory so far into a decision."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from overseer._regex import compile_linear
from overseer.patterns import (
    compact_identifier,
    globs,
    holds_value,
    identifier_values,
    json_strings,
    named_by,
    user_names,
    with_unmasked,
)
from overseer.policy._model import SEVERITY, ArgsFrom, ResampleSpec, StepMatch, When
from overseer.policy._policy import Policy
from overseer.steps import Message, Observation, Score, Step, ToolCall, ToolChange
from overseer.verdict import Action

__all__ = ["Decision", "PolicyEngine", "TrajectoryContext", "sanitize"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What the policy decided about one step."""

    action: Action
    rule: str | None
    reason: str
    halt: bool = False
    resample: ResampleSpec | None = None
    spans: tuple[tuple[int, int], ...] | None = None
    """For ``sanitize``: the character spans to remove (from the scores the rule's conditions name)."""


@dataclass(slots=True)
class _Seen:
    step: Step
    scores: Mapping[str, float]
    action: Action
    lowered: str
    spans: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    _within: dict[str, str] = field(default_factory=dict)

    def within(self, score: str) -> str:
        """The lowered text inside the spans that ``score`` marked (empty when it marked none), cut once per score."""
        found = self._within.get(score)
        if found is None:
            text = self.step.text()
            found = self._within[score] = with_unmasked(
                "\n".join(text[a:b].lower() for a, b in self.spans.get(score, ()))
            )
        return found

    def compact(self, score: str | None) -> str:
        """:meth:`within` (or the whole lowered text, ``score`` None) without spaces and separators, cut once."""
        key = f"compact:{score or ''}"
        found = self._within.get(key)
        if found is None:
            found = self._within[key] = compact_identifier(self.within(score) if score else self.lowered)
        return found


@dataclass(slots=True)
class TrajectoryContext:
    """The policy's memory of one trajectory: earlier steps with their scores and decisions, and counters."""

    task: str
    seen: list[_Seen] = field(default_factory=list)
    trusted: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    halted: bool = False
    names: set[str] = field(default_factory=set)
    """The names the user wrote (``user_names``), lower case: for ``args_from.named_by_user``."""

    def __post_init__(self) -> None:
        if not self.trusted:
            self.trusted.append(self.task.lower())
        if not self.names:
            self.names.update(user_names(self.task))

    def fork(self) -> TrajectoryContext:
        """A copy to decide hypothetical steps on (resampling candidates) without touching this one."""
        return TrajectoryContext(
            task=self.task,
            seen=list(self.seen),
            trusted=list(self.trusted),
            counts=self.counts.copy(),
            calls=self.calls.copy(),
            halted=self.halted,
            names=set(self.names),
        )

    def add(
        self,
        step: Step,
        scores: Mapping[str, float],
        action: Action,
        spans: Mapping[str, tuple[tuple[int, int], ...]] | None = None,
    ) -> None:
        """Remember a decided step (with the spans its scores marked, for ``args_from.in_spans_of``)."""
        # a masked address ("ana [at] mail [dot] com") is traced as the agent writes it (set EK)
        self.seen.append(_Seen(step, scores, action, with_unmasked(step.text().lower()), dict(spans or {})))
        self.counts[action] += 1
        if isinstance(step, Message) and step.role == "user":
            self.trusted.append(step.content.lower())
            self.names.update(user_names(step.content))
        elif isinstance(step, ToolCall):
            self.calls[step.text()] += 1


def _set(value: str | Sequence[str] | None) -> frozenset[str] | None:
    if value is None:
        return None
    return frozenset([value] if isinstance(value, str) else value)


def _fmt(value: float) -> str:
    return f"{value:.2f}"


class _Match:
    """A compiled :class:`StepMatch`."""

    def __init__(self, spec: StepMatch) -> None:
        self.kinds = _set(spec.kind)
        self.tool = globs(spec.tool)
        self.content = compile_linear(spec.content, ignore_case=True) if spec.content else None
        self.bounds = [(name, b.below, b.above) for name, b in (spec.score or {}).items()]
        self.actions = _set(spec.action)

    def test(self, step: Step, scores: Mapping[str, float], action: Action | None, why: list[str]) -> bool:
        if self.kinds is not None and step.kind not in self.kinds:
            return False
        if self.tool is not None:
            tool = step.tool if isinstance(step, (ToolCall, Observation, ToolChange)) else None
            if tool is None or self.tool.match(tool) is None:
                return False
        if self.actions is not None and (action is None or action not in self.actions):
            return False
        for name, below, above in self.bounds:
            value = scores.get(name)
            if value is None or (below is not None and not value < below) or (above is not None and not value > above):
                return False
            if below is not None:
                why.append(f"{name} {_fmt(value)} < {_fmt(below)}")
            if above is not None:
                why.append(f"{name} {_fmt(value)} > {_fmt(above)}")
        if self.content is not None:
            found = self.content.search(step.text())
            if found is None:
                return False
            why.append(f"text matches {found.group(0)[:60]!r}")
        return True


def _describe(index: int, step: Step) -> str:
    tool = f" of {step.tool}" if isinstance(step, Observation) and step.tool else ""
    tool = f" {step.tool}" if isinstance(step, (ToolCall, ToolChange)) else tool
    return f"step {index} ({step.kind}{tool})"


class _Rule:
    def __init__(self, name: str, when: When, action: Action, reason: str | None, resample: ResampleSpec | None):
        self.name = name
        self.action = action
        self.reason = reason
        self.resample = resample
        self.match = _Match(when)
        self.args = [(globs(k), compile_linear(v, ignore_case=True)) for k, v in (when.args or {}).items()]
        self.after = _Match(when.after) if when.after else None
        self.not_after = _Match(when.not_after) if when.not_after else None
        self.args_from: tuple[_Match, ArgsFrom] | None = (
            (_Match(when.args_from), when.args_from) if when.args_from else None
        )
        self.repeated = when.repeated
        self.sink = globs(when.args_from.args) if when.args_from else None
        self.score_names = tuple((when.score or {}).keys())

    def test(self, step: Step, scores: Mapping[str, float], ctx: TrajectoryContext) -> list[str] | None:
        why: list[str] = []
        if not self.match.test(step, scores, None, why):
            return None
        if self.args:
            if not isinstance(step, ToolCall):
                return None
            for key_glob, regex in self.args:
                hit = next(
                    (
                        (k, m)
                        for k, v in step.args.items()
                        if key_glob is not None and key_glob.match(k)
                        for m in [regex.search(v if isinstance(v, str) else repr(v))]
                        if m
                    ),
                    None,
                )
                if hit is None:
                    return None
                why.append(f"argument {hit[0]!r} matches {hit[1].group(0)[:60]!r}")
        if self.repeated is not None:
            if not isinstance(step, ToolCall):
                return None
            times = ctx.calls[step.text()]
            if times < self.repeated:
                return None
            why.append(f"the same call was made {times} time(s) before")
        if self.after is not None:
            found = next((i for i, s in enumerate(ctx.seen) if self.after.test(s.step, s.scores, s.action, [])), None)
            if found is None:
                return None
            why.append(f"after {_describe(found, ctx.seen[found].step)}")
        if self.not_after is not None:
            if any(self.not_after.test(s.step, s.scores, s.action, []) for s in ctx.seen):
                return None
            why.append("no earlier step matches `not_after`")
        if self.args_from is not None:
            origin = self._trace(step, ctx)
            if origin is None:
                return None
            why.append(origin)
        return why

    def _trace(self, step: Step, ctx: TrajectoryContext) -> str | None:
        assert self.args_from is not None
        match, spec = self.args_from
        if not isinstance(step, ToolCall):
            return None
        args = step.args
        if self.sink is not None:
            args = {k: v for k, v in args.items() if self.sink.match(k) is not None}
        values = identifier_values(args, spec.min_length, names=self.sink is not None)
        # what the user said, compacted once, where some value is an identifier written in groups
        trusted = [(t, compact_identifier(t) if any(v[0] == "~" for v in values) else "") for t in ctx.trusted]
        values = {v for v in values if not any(holds_value(v, t, compacted) for t, compacted in trusted)}
        if spec.named_by_user:  # "settle up with Jonas": jonas.weber@mail.example is whom the user named
            values = {v for v in values if not named_by(v, ctx.names)}
        if not values:
            return None
        grouped = any(v.startswith("~") for v in values)
        for i, seen in enumerate(ctx.seen):
            if seen.step is step or not values:
                continue
            # where a value first appeared is its origin: a value the agent had already used in a call of its
            # own, or read in a step that does not match, is not carried by a later step that echoes it (a
            # receipt that names the recipient the agent chose)
            here = {v for v in values if holds_value(v, seen.lowered, seen.compact(None) if grouped else "")}
            if not here:
                continue
            values -= here
            if not match.test(seen.step, seen.scores, seen.action, []):
                continue
            where = seen.within(spec.in_spans_of) if spec.in_spans_of else seen.lowered
            compacted = seen.compact(spec.in_spans_of) if grouped else ""
            within = {v for v in here if holds_value(v, where, compacted)}
            if spec.in_spans_of and within:
                within = {v for v in within if not _given_outside(v, args, spec.min_length, seen, where)}
            carried = sorted(v.lstrip("~") for v in within)
            if carried:
                shown = ", ".join(repr(v[:40]) for v in carried[:3])
                inside = f" inside the passage {spec.in_spans_of} marked" if spec.in_spans_of else ""
                return f"argument value {shown} first seen in {_describe(i, seen.step)}{inside}, not in the task"
        return None


def _given_outside(value: str, args: Mapping[str, object], min_length: int, seen: _Seen, where: str) -> bool:
    """Whether every argument that holds ``value`` is one the output gave outside the marked passage.

    An argument whose other part the output names only outside the passage is the one it gave there: the CI key
    "ssh-ed25519 AAAAC3...Hq2 ci@mybakery" shares its type, "ssh-ed25519", with the key a comment asks bots to add
    (set FZ); the passage planted the type, not the key.
    """
    # a value of its own (a key, an address), not text that quotes many (a post, a command): three words at most
    holders = [text for text in json_strings(args) if value in identifier_values({"_": text}, min_length)]
    if any(len(text.split()) > 3 for text in holders):
        return False
    return bool(holders) and all(
        any(
            part != value and holds_value(part, seen.lowered, "") and not holds_value(part, where, "")
            for part in identifier_values({"_": text}, min_length)
            if not part.startswith("~")
        )
        for text in holders
    )


class PolicyEngine:
    """Decides steps under one policy. Build it once; :meth:`decide` is cheap and has no side effects."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._rules = [_Rule(r.name, r.when, r.action, r.reason, r.resample) for r in policy.rules]

    def decide(
        self,
        step: Step,
        scores: Mapping[str, Score],
        ctx: TrajectoryContext,
        errors: Mapping[str, str] | None = None,
        *,
        resampled: int | None = None,
    ) -> Decision:
        """The decision for ``step`` given its scores, the trajectory so far and any scorer failures.

        ``resampled`` says that this step is the best of that many candidates already drawn: a ``resample``
        decision then becomes the rule's ``fallback``.
        """
        values = {name: s.value for name, s in scores.items()}
        decision = self._rules_decision(step, scores, values, ctx)
        if resampled is not None and decision.action == "resample" and decision.resample is not None:
            decision = Decision(
                decision.resample.fallback,
                decision.rule,
                f"{decision.reason}; no candidate of {resampled} passed, fallback {decision.resample.fallback}",
            )
        if errors:
            on_error = self.policy.on_scorer_error
            failed = "; ".join(f"{name}: {message}" for name, message in errors.items())
            if SEVERITY[on_error] > SEVERITY[decision.action]:
                decision = Decision(on_error, "on_scorer_error", f"scorer failed ({failed})")
            elif on_error != "allow":
                decision = Decision(
                    decision.action,
                    decision.rule,
                    f"{decision.reason}; scorer failed ({failed})",
                    resample=decision.resample,
                    spans=decision.spans,
                )
        return self._with_stop(decision, ctx)

    def _rules_decision(
        self, step: Step, scores: Mapping[str, Score], values: Mapping[str, float], ctx: TrajectoryContext
    ) -> Decision:
        for rule in self._rules:
            why = rule.test(step, values, ctx)
            if why is None:
                continue
            if rule.reason:
                reason = rule.reason.format_map(_Defaulting(tool=getattr(step, "tool", None) or "", kind=step.kind))
            else:
                tool = getattr(step, "tool", None)
                subject = f"{step.kind} of {tool}" if tool else step.kind
                reason = "; ".join(why) or f"rule {rule.name} applies to this {subject}"
                explanations = [
                    f"{name}: {s.explanation}"
                    for name, s in scores.items()
                    if s.explanation and any(part.startswith(name + " ") for part in why)
                ]
                if explanations:
                    reason += " [" + "; ".join(explanations) + "]"
            spans = _spans(scores, rule.score_names) if rule.action == "sanitize" else None
            return Decision(rule.action, rule.name, reason, resample=rule.resample, spans=spans)
        return Decision(self.policy.default_action, None, "no rule matched")

    def _with_stop(self, decision: Decision, ctx: TrajectoryContext) -> Decision:
        stop = self.policy.stop
        if stop is None:
            return decision
        if ctx.halted:
            return Decision(decision.action, decision.rule, decision.reason, True, decision.resample, decision.spans)
        counts = ctx.counts.copy()
        counts[decision.action] += 1
        limits = (
            ("block", "blocked", stop.after_blocked),
            ("flag", "flagged", stop.after_flagged),
            ("escalate", "escalated", stop.after_escalated),
        )
        for action, done, limit in limits:
            if limit is not None and counts[action] >= limit:
                reason = f"{decision.reason}; stop: {counts[action]} step(s) {done}, limit {limit}"
                return Decision(decision.action, decision.rule, reason, True, decision.resample, decision.spans)
        return decision

    def commit(self, step: Step, scores: Mapping[str, Score], decision: Decision, ctx: TrajectoryContext) -> None:
        """Record a decided step in the trajectory's context."""
        ctx.add(
            step,
            {name: s.value for name, s in scores.items()},
            decision.action,
            {name: s.spans for name, s in scores.items() if s.spans},
        )
        if decision.halt:
            ctx.halted = True


def _spans(scores: Mapping[str, Score], names: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """The merged spans that the named scores carry (empty: none of them says where; sanitize then removes all)."""
    found = sorted(span for name in names if (s := scores.get(name)) is not None for span in (s.spans or ()))
    merged: list[list[int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((a, b) for a, b in merged)


def sanitize(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with every span replaced by a short notice; no spans: the whole text is withheld."""
    if not spans:
        return (
            f"[overseer: this tool output ({len(text)} characters) was withheld: it addresses the AI with instructions]"
        )
    out, last = [], 0
    for start, end in sorted(spans):
        start, end = max(start, last), min(end, len(text))
        if start >= end:
            continue
        out.append(text[last:start])
        out.append(f"[overseer: removed {end - start} characters of instructions addressed to the AI]")
        last = end
    out.append(text[last:])
    return "".join(out)


class _Defaulting(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
