r"""Rendering a trajectory for a process reward model: one template, a step tag after every step.

The template (the same for training and scoring)::

    Task: <task>\n                          head (the tokenizer's BOS or CLS token first, where it has one)
    Plan: <text><TAG>                        one segment per step, in order
    Call: <tool> <arguments as JSON><TAG>
    Result from <tool>: <output><TAG>
    User: <text><TAG>                         (also Assistant: / System: for other messages)
    Answer: <text><TAG>

``<TAG>`` is the model's step tag (``\n`` for TRL PRMTrainer models, ``<extra_0>`` for Qwen2.5-Math-PRM,
`` ки`` for Math-Shepherd, ``[SEP]`` for overseer's own BERT-based model); a step's score is read at the last
token of its tag. Segments are tokenized one by one, so a step's tokens never depend on what follows it (which is
what lets a causal model score step *n* from the cached keys and values of steps 1..n-1).

With ``provenance`` on (a model trained with it says so in its configuration), a call's segment also says where
each identifier in its arguments first appeared, so that a window that has slid past the output a value came from
still knows its origin::

    Call: send_money {"recipient": "UK12...", "amount": 98.7} (recipient: from read_file output with instructions
    to the AI; amount: from the task)<TAG>

The origins, most telling first, per argument: an output that addresses the AI (the rules' ``injection`` patterns
found a passage in it, or overseer's notice says a passage was removed from it), an output, not seen before, an
earlier call or plan of the agent's, the user (a user message), the task. Prose is not traced, only identifiers
(:func:`overseer.patterns.identifier_values`: addresses, URLs, account numbers, paths, amounts).

Long texts are cut to a token budget, keeping the beginning and the end (injected instructions often come last),
with a marker in the text; every cut is reported with the step's score, never made silently. When a tool's
output holds an instruction-like passage (the rules scorer's ``injection`` patterns) in the part a cut would drop,
the cut keeps that passage too: beginning, passage and end, a third of the budget each.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from overseer._text import clean_str
from overseer.patterns import compact_identifier, find_injection, holds_value, identifier_values
from overseer.steps import FinalAnswer, Message, Observation, Plan, Step, ToolCall, ToolChange

__all__ = ["RenderConfig", "Renderer", "Segment", "origins_note"]


@dataclass(frozen=True, slots=True)
class RenderConfig:
    """How steps become tokens."""

    step_tag: str = "\n"
    """Appended after every step; the score is read at its last token."""
    max_task_tokens: int = 256
    """Budget for the task."""
    max_step_tokens: int = 192
    """Budget for a plan, a call, a message or an answer."""
    max_observation_tokens: int = 256
    """Budget for a tool's output."""
    provenance: bool = False
    """Whether a call's segment says where each identifier in its arguments first appeared."""


@dataclass(frozen=True, slots=True)
class Segment:
    """The tokens of the head or of one step; for a step, the score is read at ``ids[-1]``."""

    ids: tuple[int, ...]
    cut: str | None = None
    """What was cut to fit the budget, in words (``None`` when nothing was)."""


def step_text(step: Step) -> str:
    """A step's text in the template, without its tag."""
    if isinstance(step, Plan):
        return f"Plan: {step.content}"
    if isinstance(step, ToolCall):
        return f"Call: {step.tool} {step.args_json()}"
    if isinstance(step, Observation):
        return f"Result from {step.tool}: {step.content}" if step.tool else f"Result: {step.content}"
    if isinstance(step, Message):
        return f"{step.role.capitalize()}: {step.content}"
    if isinstance(step, FinalAnswer):
        return f"Answer: {step.content}"
    if isinstance(step, ToolChange):
        return f"Tool {step.tool} changed its description: {step.after}"
    raise TypeError(f"not a step: {step!r}")


_NOTICE = "[overseer: "  # what sanitising leaves in an output (overseer.policy's sanitize)
_SEVERITY = {"flagged": 5, "output": 4, "new": 3, "agent": 2, "user": 1, "task": 0}
_MAX_NOTES = 4


@functools.lru_cache(maxsize=4096)
def _lowered(text: str) -> str:
    # a step's text is lowered once, not at every later call (a string's hash is kept on the string itself)
    return clean_str(text).lower()


@functools.lru_cache(maxsize=4096)
def _compacted(lowered: str) -> str:
    return compact_identifier(lowered)


def _origin(value: str, task: str, history: Sequence[Step]) -> tuple[str, str]:
    """(class, words) for where ``value`` (lowered, as :func:`identifier_values` gives it) first appeared."""
    grouped = value.startswith("~")
    lowered = _lowered(task)
    if holds_value(value, lowered, _compacted(lowered) if grouped else ""):
        return "task", "from the task"
    for step in history:
        lowered = _lowered(step.content if isinstance(step, (Observation, Message, Plan)) else step.text())
        if not holds_value(value, lowered, _compacted(lowered) if grouped else ""):
            continue
        if isinstance(step, Message):
            return ("user", "from the user") if step.role == "user" else ("agent", f"from a {step.role} message")
        if isinstance(step, Observation):
            tool = f"{step.tool} output" if step.tool else "a tool output"
            if _NOTICE in step.content or find_injection(step.content) is not None:
                return "flagged", f"from {tool} with instructions to the AI"
            return "output", f"from {tool}"
        return "agent", "from an earlier call" if isinstance(step, ToolCall) else "from the agent's own words"
    return "new", "not seen before"


def origins_note(task: str, history: Sequence[Step], args: Mapping[str, Any]) -> str:
    """Where each argument's identifiers first appeared, in words (empty when no argument holds one)."""
    notes: list[tuple[int, str]] = []
    for name, value in sorted(args.items()):  # in the order the call's JSON shows them
        values = identifier_values({name: value}, 4)
        if not values:
            continue
        found = max((_origin(v, task, history) for v in sorted(values)), key=lambda o: _SEVERITY[o[0]])
        notes.append((_SEVERITY[found[0]], f"{name}: {found[1]}"))
    if not notes:
        return ""
    kept = sorted(sorted(range(len(notes)), key=lambda i: -notes[i][0])[:_MAX_NOTES])  # most telling, in order
    return " (" + "; ".join(notes[i][1] for i in kept) + ")"


def _plain_backend(tokenizer: Any) -> Any:
    """A private copy of a fast tokenizer's Rust backend, with no truncation and no padding (``None`` if not fast).

    The ``transformers`` call adds about a quarter to the encoding itself (87 against 68 us for a short step on the
    2-core development CPU), and the host's work is what bounds the padded pass on a GPU. The backend called directly
    gives the same ids once the truncation and padding saved in ``tokenizer.json`` are off, as the call turns them
    off itself (``tests/prm/test_prm_scorer.py`` compares the two).
    """
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    if backend is None:
        return None
    from tokenizers import Tokenizer

    plain = Tokenizer.from_str(backend.to_str())
    plain.no_truncation()
    plain.no_padding()
    return plain


class Renderer:
    """Turns a task and steps into token segments with a tokenizer (a ``transformers`` tokenizer)."""

    def __init__(self, tokenizer: Any, config: RenderConfig | None = None) -> None:
        self.tokenizer = tokenizer
        self.config = config or RenderConfig()
        self._backend = _plain_backend(tokenizer)
        self._heads: dict[str, Segment] = {}
        self.tag_ids = tuple(self._encode(self.config.step_tag))
        if not self.tag_ids:
            raise ValueError(f"the step tag {self.config.step_tag!r} encodes to no token with this tokenizer")
        self._marker = tuple(self._encode(" ... "))
        start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.cls_token_id
        self._start = () if start is None else (int(start),)

    def _encode(self, text: str) -> list[int]:
        # tokenizers refuse lone surrogates: what an agent saw may hold any code point
        if self._backend is not None:
            return list(self._backend.encode(clean_str(text), add_special_tokens=False).ids)
        ids: list[int] = self.tokenizer(clean_str(text), add_special_tokens=False, verbose=False)["input_ids"]
        return ids

    def _fit(
        self, ids: list[int], budget: int, what: str, salient: int | None = None
    ) -> tuple[tuple[int, ...], str | None]:
        if len(ids) <= budget:
            return tuple(ids), None
        keep = budget - len(self._marker)
        head, tail = keep - keep // 3, keep // 3
        cut = f"{what} cut from {len(ids)} to {budget} tokens"
        if salient is not None and head <= salient < len(ids) - tail:
            # an instruction-like passage in the middle: beginning, passage, end
            keep = budget - 2 * len(self._marker)
            head = tail = keep // 3
            start = min(max(head, salient - 4), len(ids) - tail - (keep - head - tail))
            middle = ids[start : start + keep - head - tail]
            kept = (*ids[:head], *self._marker, *middle, *self._marker, *ids[len(ids) - tail :])
            return kept, f"{cut}, keeping an instruction-like passage from token {salient}"
        return (*ids[:head], *self._marker, *ids[len(ids) - tail :]), cut

    def _salient(self, text: str) -> tuple[list[int], int | None]:
        """Tokens of ``text``, and the index of the token where an instruction-like passage starts (if any)."""
        text = clean_str(text)
        span = find_injection(text) if getattr(self.tokenizer, "is_fast", False) else None  # (offsets: fast ones)
        if span is None:
            return self._encode(text), None
        encoded = self.tokenizer(text, add_special_tokens=False, verbose=False, return_offsets_mapping=True)
        ids: list[int] = encoded["input_ids"]
        at = next((i for i, (_, end) in enumerate(encoded["offset_mapping"]) if end > span[0]), None)
        return ids, at

    def head(self, task: str) -> Segment:
        """The head segment: start token and task (remembered for the latest tasks: every step asks for it)."""
        found = self._heads.get(task)
        if found is None:
            ids, cut = self._fit(self._encode(f"Task: {task}\n"), self.config.max_task_tokens, "task")
            found = Segment((*self._start, *ids), cut)
            if len(self._heads) >= 1024:
                self._heads.pop(next(iter(self._heads)))  # the oldest
            self._heads[task] = found
        return found

    def step(self, step: Step, task: str = "", history: Sequence[Step] = ()) -> Segment:
        """One step's segment, ending with the step tag.

        ``task`` and ``history`` (the steps before it) matter only to a call under ``provenance``.
        """
        if isinstance(step, Observation):
            tokens, salient = self._salient(step_text(step))
            ids, cut = self._fit(tokens, self.config.max_observation_tokens, step.kind, salient)
        else:
            ids, cut = self._fit(self._encode(self._text(step, task, history)), self.config.max_step_tokens, step.kind)
        return Segment((*ids, *self.tag_ids), cut)

    def steps(self, items: Sequence[tuple[Step, str, Sequence[Step]]]) -> list[Segment]:
        """:meth:`step` for many (step, task, history) at once: the same segments, the texts encoded in one call.

        For the padded pass on a GPU, where the host's work bounds a batch: the tokenizer's backend encodes the
        batch's texts on all cores. An observation with an instruction-like passage takes :meth:`step`'s path.
        """
        out: list[Segment | None] = [None] * len(items)
        texts: list[str] = []
        where: list[int] = []
        for i, (step, task, history) in enumerate(items):
            if isinstance(step, Observation):
                text = clean_str(step_text(step))
                if self._backend is None or find_injection(text) is not None:
                    out[i] = self.step(step, task, history)
                    continue
            else:
                text = clean_str(self._text(step, task, history))
            texts.append(text)
            where.append(i)
        if texts:
            encoded = (
                [list(e.ids) for e in self._backend.encode_batch(texts, add_special_tokens=False)]
                if self._backend is not None
                else [self._encode(t) for t in texts]
            )
            for i, ids in zip(where, encoded, strict=True):
                step = items[i][0]
                budget = (
                    self.config.max_observation_tokens if isinstance(step, Observation) else self.config.max_step_tokens
                )
                kept, cut = self._fit(ids, budget, step.kind)
                out[i] = Segment((*kept, *self.tag_ids), cut)
        return [segment for segment in out if segment is not None]

    def text(self, task: str, steps: list[Step]) -> str:
        """The whole rendering as text (for reading and debugging; models get :meth:`head` and :meth:`step`)."""
        return f"Task: {task}\n" + "".join(
            self._text(s, task, steps[:i]) + self.config.step_tag for i, s in enumerate(steps)
        )

    def _text(self, step: Step, task: str, history: Sequence[Step]) -> str:
        """A step's text in the template; a call's followed by its origins under ``provenance``."""
        if isinstance(step, ToolCall) and self.config.provenance:
            return step_text(step) + origins_note(task, history, step.args)
        return step_text(step)
