"""The PRM scorer: batched across concurrent trajectories, incremental for causal backbones.

**Batching.** Requests from every trajectory go through one :class:`MicroBatcher` (a size bound and a wait
bound); the model runs on one worker thread (torch releases the GIL), so the Overseer's loop never blocks on it.

**Incremental scoring.** For a causal backbone the score of step *n* depends only on the tokens before its tag,
so each trajectory keeps the model's key/value cache and the boundaries of the steps it holds (by step id). A
request reuses the longest cached prefix that matches its history, crops the rest (a resampling candidate that
was never committed), and feeds only the new steps: a whole trajectory costs about one pass. The cache is freed
when the trajectory ends. Bidirectional encoders are scored on a window instead: the task, as much recent
history as fits, and the step.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from overseer._threads import cpu_precision, model_executor
from overseer.exceptions import ConfigError
from overseer.prm._model import StepModel, load_step_model
from overseer.prm._render import RenderConfig, Renderer, Segment
from overseer.scorers import BaseScorer, ScoreRequest
from overseer.steps import Score

if TYPE_CHECKING:
    from overseer.prm._spec import PrmScorerSpec

__all__ = ["MicroBatcher", "PrmScorer", "build_scorer"]

T = TypeVar("T")
R = TypeVar("R")


class MicroBatcher(Generic[T, R]):
    """Collects items from concurrent callers into batches of at most ``size``.

    While a batch runs, arriving items queue and go together as the next batch the moment it ends (batching by
    load: a lone step never waits, concurrent ones share a pass). An item that arrives when nothing runs goes at
    once, or, with ``wait_s`` above zero, after waiting that long for company. ``fn`` runs on ``executor`` with the
    whole batch and returns one result per item.
    """

    def __init__(
        self, fn: Callable[[list[T]], list[R]], size: int, wait_s: float, executor: concurrent.futures.Executor
    ) -> None:
        self.fn = fn
        self.size = size
        self.wait_s = wait_s
        self.executor = executor
        self._pending: list[tuple[T, asyncio.Future[R]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._running = 0
        self.batches: list[int] = []
        """The size of every batch run so far."""

    async def submit(self, item: T) -> R:
        """Add an item to the next batch and wait for its result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        self._pending.append((item, future))
        if len(self._pending) >= self.size or (not self._running and self.wait_s <= 0):
            self._flush()
        elif not self._running and self._timer is None:
            self._timer = loop.call_later(self.wait_s, self._flush)
        return await future

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending[: self.size], self._pending[self.size :]
        if not batch:
            return
        self.batches.append(len(batch))
        self._running += 1
        done = asyncio.get_running_loop().run_in_executor(self.executor, self.fn, [item for item, _ in batch])

        def deliver(task: asyncio.Future[list[R]]) -> None:
            self._running -= 1
            error = task.exception()
            for i, (_, future) in enumerate(batch):
                if future.done():
                    continue  # the caller gave up (a timeout)
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(task.result()[i])
            if self._pending and not self._running:  # what queued while this batch ran goes now, together
                self._flush()

        done.add_done_callback(deliver)


@dataclass
class _State:
    """A trajectory's cached prefix: the cache, the head's length, and (step id, length after it) per step."""

    task: str
    cache: Any = None
    head: int = 0
    ends: list[tuple[str, int]] = field(default_factory=list)
    start: int = 0
    """The history index of the first step in the cache (past it when the window has slid)."""


@dataclass
class _Plan:
    """One incremental request, ready for the model: the state it updates, the tokens to feed, the cache."""

    state: _State
    ids: list[int]
    positions: list[int]
    cache: Any
    ends: list[tuple[str, int]]
    cuts: list[str]


class PrmScorer(BaseScorer):
    """Scores steps with a process reward model (see the module docstring)."""

    def __init__(
        self,
        model: StepModel,
        *,
        name: str = "prm",
        batch_size: int = 16,
        max_wait_ms: float = 2.0,
        incremental: bool = True,
        render: RenderConfig | None = None,
        slide_keep: float = 0.25,
        pad_incremental: bool | None = None,
    ) -> None:
        if not 0.0 < slide_keep < 1.0:
            raise ConfigError(f"slide_keep must be between 0 and 1, not {slide_keep}")
        self.model = model
        self.slide_keep = slide_keep
        """The share of the window a slide keeps (task and latest steps): less keeps less context, slides less."""
        self.renderer = Renderer(model.tokenizer, render or model.render)
        self.name = name
        self.version = f"{model.model_id}@{model.digest}"
        self.incremental = incremental and model.causal
        self.pad_incremental = model.device != "cpu" if pad_incremental is None else pad_incremental
        """Whether a batch's incremental steps run as one padded pass (default: on a GPU only)."""
        self._states: dict[str, _State] = {}
        self._segments: dict[str, dict[str, Segment]] = {}
        self._executor = model_executor("overseer-prm")
        self._batcher: MicroBatcher[ScoreRequest, dict[str, Score]] = MicroBatcher(
            self._run_batch, batch_size, max_wait_ms / 1000, self._executor
        )
        self.stats: Counter[str] = Counter()
        """``tokens``: tokens fed to the model; ``steps``: steps scored; ``recomputed``: cache misses."""

    @property
    def batches(self) -> list[int]:
        """The size of every batch the model ran."""
        return self._batcher.batches

    def progress(self) -> float:
        """When the model's thread last started or ended a job (``time.monotonic()``).

        A step waiting behind other trajectories' batches is queued, not stuck (see ``overseer.scorers._composite``).
        """
        return self._executor.progress()

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        """Score each request (they join whatever batch is forming)."""
        return list(await asyncio.gather(*(self._batcher.submit(r) for r in requests)))

    async def end_trajectory(self, trajectory_id: str) -> None:
        """Free the trajectory's cache."""
        await asyncio.get_running_loop().run_in_executor(self._executor, self._forget, trajectory_id)

    def _forget(self, trajectory_id: str) -> None:
        self._states.pop(trajectory_id, None)
        self._segments.pop(trajectory_id, None)

    def cached_trajectories(self) -> list[str]:
        """The trajectories whose caches are held (for tests and diagnostics)."""
        return list(self._states)

    def score_steps(
        self, task: str, steps: Sequence[Any], indices: Sequence[int] | None = None, trajectory_id: str = "offline"
    ) -> dict[int, dict[str, Score]]:
        """Score steps of one stored trajectory on the calling thread, as the live scorer would, step by step.

        ``indices``: the steps to score (default: all); each sees the steps before it as history. For offline
        work (evaluation, re-audit); the trajectory's cache is freed at the end.
        """
        wanted = range(len(steps)) if indices is None else sorted(set(indices))
        out: dict[int, dict[str, Score]] = {}
        try:
            for i in wanted:
                request = ScoreRequest(trajectory_id=trajectory_id, task=task, history=tuple(steps[:i]), step=steps[i])
                out[i] = self._run_batch([request])[0]
        finally:
            self._forget(trajectory_id)
        return out

    async def aclose(self) -> None:
        """Drop every cache and stop the worker thread."""
        self._states.clear()
        self._segments.clear()
        self._executor.shutdown(wait=False)

    # --- on the worker thread -------------------------------------------------------------------------------

    def _segment(self, request: ScoreRequest, at: int) -> Segment:
        """The segment of step ``at`` of the request's history followed by its step (its context: what precedes it)."""
        step = _step_at(request, at)
        known = self._segments.setdefault(request.trajectory_id, {})
        segment = known.get(step.id)
        if segment is None:
            segment = known[step.id] = self.renderer.step(step, request.task, request.history[:at])
        return segment

    def _scores(self, probs: Any, cuts: list[str]) -> dict[str, Score]:
        explanation = "; ".join(cuts) or None
        if len(self.model.heads) == 1:
            return {self.name: Score(name=self.name, value=float(probs[0]), scorer=self.id, explanation=explanation)}
        return {
            f"{self.name}.{head}": Score(
                name=f"{self.name}.{head}", value=float(p), scorer=self.id, explanation=explanation
            )
            for head, p in zip(self.model.heads, probs.tolist(), strict=True)
        }

    def _run_batch(self, requests: list[ScoreRequest]) -> list[dict[str, Score]]:
        with self.model.lock:
            if not self.incremental:
                return self._windowed(requests)
            if not self.pad_incremental:
                return [self._incremental(r) for r in requests]
            # one request per trajectory goes into one padded forward pass; a second request of the same
            # trajectory (resampling candidates) waits for the next pass, since it continues the same cache
            results: list[dict[str, Score] | None] = [None] * len(requests)
            pending = list(range(len(requests)))
            while pending:
                taken: dict[str, int] = {}
                for i in pending:
                    taken.setdefault(requests[i].trajectory_id, i)
                wave = list(taken.values())
                chosen = set(wave)
                pending = [i for i in pending if i not in chosen]
                self._render_new([requests[i] for i in wave])
                plans = [self._prepare(requests[i]) for i in wave]
                outputs = self.model.score_continuations([(p.ids, p.positions, p.cache) for p in plans])
                for i, plan, (probs, cache) in zip(wave, plans, outputs, strict=True):
                    results[i] = self._finish(requests[i], plan, probs, cache)
            return [r for r in results if r is not None]

    def _render_new(self, requests: list[ScoreRequest]) -> None:
        """Render the steps of ``requests`` not rendered yet in one call (:meth:`Renderer.steps`), for the padded pass.

        The new steps are the latest ones: each request's step and the history steps after the last one known.
        """
        todo: list[tuple[str, int, ScoreRequest]] = []
        for request in requests:
            known = self._segments.get(request.trajectory_id, {})
            at = len(request.history)
            last = max(-1, at - 32)  # a long history seen at once: its latest steps (a slide renders no more)
            while at > last and _step_at(request, at).id not in known:
                todo.append((request.trajectory_id, at, request))
                at -= 1
        if len(todo) < 2:
            return
        items = [(_step_at(r, at), r.task, r.history[:at]) for _, at, r in todo]
        for (trajectory_id, _, _), item, segment in zip(todo, items, self.renderer.steps(items), strict=True):
            self._segments.setdefault(trajectory_id, {})[item[0].id] = segment

    def _incremental(self, request: ScoreRequest) -> dict[str, Score]:
        plan = self._prepare(request)
        probs, cache = self.model.score_continuation(plan.ids, plan.positions, plan.cache)
        return self._finish(request, plan, probs, cache)

    def _prepare(self, request: ScoreRequest) -> _Plan:
        """What to feed for this request: the tokens after the longest cached prefix, and that cache."""
        state = self._states.get(request.trajectory_id)
        if state is None or state.task != request.task:
            state = _State(task=request.task)
        history = request.history
        matched = 0  # cached steps that match the history, from the cache's first step on
        while (
            matched < len(state.ends)
            and state.start + matched < len(history)
            and state.ends[matched][0] == history[state.start + matched].id
        ):
            matched += 1
        if state.cache is not None and ((matched == 0 and state.start > 0) or state.start > len(history)):
            state = _State(task=request.task)  # the cache holds a different window: start again
            matched = 0
        if state.start + matched < len(history) and state.cache is not None:
            self.stats["recomputed"] += 1
        head = self.renderer.head(request.task)
        first = state.start + matched
        new_steps = [*history[first:], request.step]
        segments = [self._segment(request, at) for at in range(first, len(history) + 1)]
        keep = state.ends[matched - 1][1] if matched else state.head
        fresh = state.cache is None
        length = (len(head.ids) if fresh else keep) + sum(len(seg.ids) for seg in segments)
        cuts = [c for c in (head.cut, segments[-1].cut) if c]
        if length > self.model.max_length:
            # the window is full: rebuild the cache once from the task and the latest steps (slide_keep of it);
            # the task's keys and values sit at the same positions, so they are kept, not encoded again
            old = None if fresh else state.cache
            state, new_steps, segments = self._slide(request, head.ids)
            matched = 0
            if old is not None and old.get_seq_length() >= len(head.ids) > 0:  # (cropped to the task below)
                state.cache, state.head, fresh, keep = old, len(head.ids), False, len(head.ids)
            else:
                fresh, keep = True, 0
        ids: list[int] = list(head.ids) if fresh else []
        base = 0 if fresh else keep
        ends: list[tuple[str, int]] = []
        positions: list[int] = []
        for step, segment in zip(new_steps, segments, strict=True):
            ids.extend(segment.ids)
            positions.append(len(ids) - 1)
            ends.append((step.id, base + len(ids)))
        cache = (self.model.slot_cache() if self.pad_incremental else self.model.new_cache()) if fresh else state.cache
        if not fresh and cache.get_seq_length() > keep:
            cache.crop(keep - cache.get_seq_length())  # drop steps that are not in this history
        if fresh:
            state.head = len(head.ids)
        return _Plan(state, ids, positions, cache, (state.ends[:matched] if not fresh else []) + ends, cuts)

    def _finish(self, request: ScoreRequest, plan: _Plan, probs: Any, cache: Any) -> dict[str, Score]:
        state = plan.state
        self.stats["tokens"] += len(plan.ids)
        self.stats["steps"] += 1
        state.cache, state.ends = cache, plan.ends
        self._states[request.trajectory_id] = state
        cuts = list(plan.cuts)
        if state.start:
            cuts.append(f"history cut: the first {state.start} step(s) left out")
        return self._scores(probs[-1], cuts)

    def _slide(self, request: ScoreRequest, head: Sequence[int]) -> tuple[_State, list[Any], list[Segment]]:
        """A new state whose window starts at the latest history steps that fill ``slide_keep`` of the window."""
        step = self._segment(request, len(request.history))
        room = max(0, int(self.model.max_length * self.slide_keep) - len(head) - len(step.ids))
        start = len(request.history)
        while start > 0:
            size = len(self._segment(request, start - 1).ids)
            if size > room:
                break
            room -= size
            start -= 1
        self.stats["slides"] += 1
        steps = [*request.history[start:], request.step]
        segments = [self._segment(request, at) for at in range(start, len(request.history) + 1)]
        return _State(task=request.task, start=start), steps, segments

    def _window(self, request: ScoreRequest) -> tuple[list[int], list[str]]:
        head = self.renderer.head(request.task)
        step = self._segment(request, len(request.history))
        room = self.model.max_length - len(head.ids) - len(step.ids)
        kept: list[Segment] = []
        for at in reversed(range(len(request.history))):
            segment = self._segment(request, at)
            if len(segment.ids) > room:
                break
            kept.append(segment)
            room -= len(segment.ids)
        cuts = [c for c in (head.cut, step.cut) if c]
        if len(kept) < len(request.history):
            cuts.append(f"history cut: the first {len(request.history) - len(kept)} step(s) left out")
        ids = [*head.ids, *(i for segment in reversed(kept) for i in segment.ids), *step.ids]
        return ids, cuts

    def _windowed(self, requests: list[ScoreRequest]) -> list[dict[str, Score]]:
        windows = [self._window(r) for r in requests]
        probs = self.model.score_batch([ids for ids, _ in windows], [[len(ids) - 1] for ids, _ in windows])
        self.stats["tokens"] += sum(len(ids) for ids, _ in windows)
        self.stats["steps"] += len(requests)
        return [self._scores(p[0], cuts) for p, (_, cuts) in zip(probs, windows, strict=True)]


def _step_at(request: ScoreRequest, at: int) -> Any:
    """Step ``at`` of the request's history, its own step at the history's length."""
    return request.step if at == len(request.history) else request.history[at]


def build_scorer(name: str, spec: PrmScorerSpec) -> PrmScorer:
    """The PRM scorer for a policy's ``type: prm`` entry (a :class:`PrmScorerSpec`)."""
    model = load_step_model(
        spec.model,
        format=spec.format,
        device=spec.device,
        step_tag=spec.step_tag,
        good_token=spec.good_token,
        bad_token=spec.bad_token,
        trust_remote_code=spec.trust_remote_code,
        allow_download=spec.allow_download,
        cpu_precision=cpu_precision(spec.cpu_precision, int8=True),
    )
    given = spec.model_fields_set
    defaults = model.render
    render = RenderConfig(
        step_tag=defaults.step_tag,
        max_task_tokens=spec.max_task_tokens if "max_task_tokens" in given else defaults.max_task_tokens,
        max_step_tokens=spec.max_step_tokens if "max_step_tokens" in given else defaults.max_step_tokens,
        max_observation_tokens=(
            spec.max_observation_tokens if "max_observation_tokens" in given else defaults.max_observation_tokens
        ),
        provenance=defaults.provenance,
    )
    return PrmScorer(
        model,
        name=name,
        batch_size=spec.batch_size or (16 if model.device == "cpu" else 256),
        max_wait_ms=spec.max_wait_ms,
        incremental=spec.incremental,
        render=render,
        slide_keep=spec.slide_keep,
        pad_incremental=spec.pad_incremental,
    )
