"""A remote step scorer for scale-out: a PRM served by vLLM, through its pooling API.

Serve a step-tag PRM with vLLM (for example ``vllm serve Qwen/Qwen2.5-Math-PRM-7B --trust-remote-code``, which pools
at every ``<extra_0>``), then point a policy at it::

    scorers:
      prm: {type: remote-prm, url: "http://gpu-box:8000", model: Qwen/Qwen2.5-Math-PRM-7B, step_tag: "<extra_0>"}

Each request renders the task, the history and the step with the step tag after every step (the template of
:mod:`overseer.prm._render`, as text), posts ``{"model": ..., "input": [texts]}`` to ``/pooling`` (a batch per
call), and reads the value for the last tag of each input: ``data[i].data[-1]``, a pair of class probabilities
(``good_index`` says which one means good) or a single probability. Connection errors, timeouts and 5xx answers are
retried with exponential backoff; anything else is a :class:`~overseer.exceptions.ScorerError`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import Any

from overseer.exceptions import MissingDependencyError, ScorerError
from overseer.prm._render import step_text
from overseer.scorers import BaseScorer, ScoreRequest
from overseer.steps import Score

__all__ = ["RemotePrmScorer", "render_text"]


def render_text(task: str, steps: Sequence[Any], step_tag: str, max_chars: int = 4000) -> str:
    """The template as text: ``Task: ...`` then every step followed by the tag (long steps cut in the middle)."""
    parts = [f"Task: {task}\n"]
    for step in steps:
        text = step_text(step)
        if len(text) > max_chars:
            keep = max_chars - 40
            text = f"{text[: keep * 2 // 3]} ... [{len(text) - keep} characters cut] ... {text[-(keep // 3) :]}"
        parts.append(text + step_tag)
    return "".join(parts)


class RemotePrmScorer(BaseScorer):
    """Scores steps with a PRM behind vLLM's ``/pooling`` endpoint (see the module docstring)."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        name: str = "prm",
        step_tag: str = "<extra_0>",
        good_index: int = 1,
        timeout_s: float = 10.0,
        retries: int = 2,
        backoff_s: float = 0.2,
        api_key: str | None = None,
        max_step_chars: int = 4000,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise MissingDependencyError("the remote PRM scorer", "remote") from None
        self.name = name
        self.version = f"{model}@remote"
        self.url = url.rstrip("/") + "/pooling"
        self.model = model
        self.step_tag = step_tag
        self.good_index = good_index
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_step_chars = max_step_chars
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout_s, headers=headers)
        self._httpx = httpx

    def _value(self, item: Any) -> float:
        values = item.get("data") if isinstance(item, dict) else None
        if not isinstance(values, list) or not values:
            raise ScorerError(self.name, f"unexpected pooling item: {str(item)[:200]}")
        last = values[-1]
        value = last[self.good_index] if isinstance(last, list) else last
        value = float(value)
        if not 0.0 <= value <= 1.0:
            raise ScorerError(self.name, f"the server returned {value}, not a probability (is it a step-tag PRM?)")
        return value

    async def score(self, requests: Sequence[ScoreRequest]) -> Sequence[Mapping[str, Score]]:
        """One ``/pooling`` call for the whole batch."""
        texts = [render_text(r.task, [*r.history, r.step], self.step_tag, self.max_step_chars) for r in requests]
        payload = {"model": self.model, "input": texts}
        delay = self.backoff_s
        for attempt in range(self.retries + 1):
            try:
                response = await self._client.post(self.url, json=payload)
            except self._httpx.TransportError as err:  # connection refused, reset, timeout
                failure = f"{type(err).__name__}: {err}"
            else:
                if response.status_code < 500:
                    if response.status_code >= 400:
                        raise ScorerError(
                            self.name, f"HTTP {response.status_code} from {self.url}: {response.text[:200]}"
                        )
                    data = response.json().get("data")
                    if not isinstance(data, list) or len(data) != len(requests):
                        raise ScorerError(self.name, f"expected {len(requests)} pooling results from {self.url}")
                    ordered = (
                        sorted(data, key=lambda d: d.get("index", 0))
                        if all(isinstance(d, dict) for d in data)
                        else data
                    )
                    return [
                        {self.name: Score(name=self.name, value=self._value(item), scorer=self.id)} for item in ordered
                    ]
                failure = f"HTTP {response.status_code}"
            if attempt < self.retries:
                await asyncio.sleep(delay)
                delay *= 2
        raise ScorerError(self.name, f"{self.url} failed {self.retries + 1} time(s); last: {failure}")

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()


def from_spec(name: str, spec: Any) -> RemotePrmScorer:
    """The scorer for a policy's ``type: remote-prm`` entry."""
    api_key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    return RemotePrmScorer(
        spec.url,
        spec.model,
        name=name,
        step_tag=spec.step_tag,
        good_index=spec.good_index,
        timeout_s=spec.timeout_s,
        retries=spec.retries,
        api_key=api_key,
    )
