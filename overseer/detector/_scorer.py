"""The detector as a scorer: every observation gets ``<name>`` = 1 - P(it holds an instruction for the agent).

The score carries the character spans of the passages found, which a ``sanitize`` rule removes before the model
reads the output. Other step kinds get no score from this scorer (a rule on ``detector`` never matches them).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from overseer._threads import cpu_precision, model_executor
from overseer.patterns import json_strings
from overseer.scorers import BaseScorer, ScoreRequest
from overseer.steps import Observation, Score, ToolCall

__all__ = ["DetectorScorer", "build_scorer"]


def _quote(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_WORDS = re.compile(r"[^\W_]+")
# words a tool's answer puts around what it echoes ("Shared <file> with <address> as editor.", "Sent to <address>")
_GLUE = frozenset(
    re.findall(
        r"\w+",
        """
        the and with for from into onto your you this that was were has have been are its not now all any our their
        will can successfully success done completed complete ok okay status result true false null none
        """,
    )
)


def _words(text: str) -> list[str]:
    return [w for w in _WORDS.findall(text.lower()) if len(w) >= 3 and w not in _GLUE]


def echo_of(call: ToolCall) -> Callable[[str], bool]:
    """A predicate: whether a span of the answer to ``call`` only repeats what the call sent.

    What the call sent: its tool's name, its argument names and values; a few common words may stand around them.
    Such a span is the tool's receipt of the agent's own call ("Shared 'handover.md' with tomasz@... as editor."),
    not an instruction from a third party: the detector marked it at 0.00 in set O, and a receipt that names a
    recipient made the next call to that recipient look planted. A passage that asks for anything brings words of
    its own; at most one in five (and at least one) may be new.
    """
    sent: set[str] = set()  # filled on the first span asked about: most outputs have none
    stems: list[str] = []
    filled = False

    def echoes(span: str) -> bool:
        nonlocal filled
        words = _words(span)
        if len(words) < 2:
            return False
        if not filled:
            filled = True
            sent.update(w for text in [call.tool, *call.args, *json_strings(call.args)] for w in _words(text))
            stems.extend(w[:-1] for w in _words(call.tool) if len(w) >= 4)  # "share" also names "shared", "sharing"
        new = [w for w in words if w not in sent and not any(w.startswith(stem) for stem in stems)]
        return len(new) <= max(1, len(words) // 5)

    return echoes


def _call_of(request: ScoreRequest) -> ToolCall | None:
    """The call an observation answers: the one with its ``call_id``, else the last call if the tool matches."""
    step = request.step
    assert isinstance(step, Observation)
    for earlier in reversed(request.history):
        if isinstance(earlier, ToolCall):
            if step.call_id is not None and earlier.call_id == step.call_id:
                return earlier
            if step.call_id is None:
                return earlier if earlier.tool == step.tool or step.tool is None else None
    return None


class DetectorScorer(BaseScorer):
    """Scores observations with an :class:`~overseer.detector._model.InjectionModel`."""

    def __init__(
        self, model: Any, *, name: str = "detector", max_chars: int = 200_000, threshold: float | None = None
    ) -> None:
        self.model = model
        self.threshold = threshold
        self.name = name
        self.max_chars = max_chars
        self.version = f"minilm-tagger@{model.digest}"
        self._executor = model_executor("overseer-detector")

    def _score(self, text: str, detection: Any) -> Score:
        value = round(1.0 - float(detection.score), 6)
        if not detection.spans:
            return Score(name=self.name, value=value, scorer=self.id)
        first = detection.spans[0]
        more = f" (+{len(detection.spans) - 1} more)" if len(detection.spans) > 1 else ""
        return Score(
            name=self.name,
            value=value,
            scorer=self.id,
            label="addressed-to-agent",
            explanation=f"instruction addressed to the agent at characters {first[0]}-{first[1]}{more}: "
            f"{_quote(text[first[0] : first[1]])!r}",
            spans=tuple(detection.spans),
        )

    def progress(self) -> float:
        """When the model's thread last started or ended a job (``time.monotonic()``).

        A step waiting behind other steps' outputs is queued, not stuck (see ``overseer.scorers._composite``).
        """
        return self._executor.progress()

    def _detect(
        self, texts: list[str], ignore: list[Callable[[str], bool] | None], abandoned: threading.Event
    ) -> list[Any]:
        return list(self.model.detect(texts, self.threshold, ignore, abandoned=abandoned))

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        """Score the observations among ``requests`` in one pass (off the event loop's thread)."""
        out: list[dict[str, Score]] = [{} for _ in requests]
        todo = [(i, r.step.content) for i, r in enumerate(requests) if isinstance(r.step, Observation)]
        too_long = [i for i, text in todo if len(text) > self.max_chars]
        for i in too_long:  # fail closed on what cannot be scanned in time: the whole text is suspect
            out[i][self.name] = Score(
                name=self.name, value=0.0, scorer=self.id, label="too-long",
                explanation=f"output of {len(requests[i].step.content)} characters is over the {self.max_chars} scanned",  # type: ignore[union-attr]
            )  # fmt: skip
        # lone surrogates (which no tokenizer takes) become U+FFFD, one for one: the offsets stay valid
        todo = [
            (i, text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))
            for i, text in todo
            if len(text) <= self.max_chars and text.strip()
        ]
        if todo:
            texts = [text for _, text in todo]
            calls = [_call_of(requests[i]) for i, _ in todo]
            ignore = [echo_of(call) if call is not None else None for call in calls]
            abandoned = threading.Event()
            try:
                found = await asyncio.get_running_loop().run_in_executor(
                    self._executor, self._detect, texts, ignore, abandoned
                )
            except asyncio.CancelledError:  # the caller gave up (its deadline): the model drops the job between
                abandoned.set()  # two batches of windows, so a long output cannot hold the steps queued behind it
                raise
            for (i, text), detection in zip(todo, found, strict=True):
                out[i][self.name] = self._score(text, detection)
        return out

    async def aclose(self) -> None:
        """Stop the model's thread."""
        self._executor.shutdown(wait=False)


def build_scorer(name: str, spec: Any) -> DetectorScorer:
    """The scorer for a policy's ``type: detector`` entry."""
    from overseer.detector._model import load_detector
    from overseer.exceptions import ConfigError, MissingDependencyError

    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        raise MissingDependencyError("the injection detector", "prm") from None
    try:
        model = load_detector(
            spec.model,
            device="cpu" if spec.device == "auto" else spec.device,
            cpu_precision=cpu_precision(spec.cpu_precision),
        )
    except (OSError, ValueError) as err:
        raise ConfigError(f"scorer {name!r}: cannot load detector {spec.model!r}: {err}") from None
    return DetectorScorer(model, name=name, max_chars=spec.max_chars, threshold=spec.threshold)
