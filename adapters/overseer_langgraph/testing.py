"""A scripted chat model: an agent's model for tests, demos and benchmarks, with no network and no weights."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

Turn = AIMessage | Sequence[AIMessage]


class ScriptedChatModel(BaseChatModel):
    """Answers turn ``n`` of a conversation (``n`` = AI messages already in it) with ``turns[n]``.

    A turn given as a list of messages holds alternatives: each call for that turn returns the next one, which
    is what resampling sees. ``bind_tools`` accepts any tools (the script decides which to call). The last turn
    repeats when a conversation runs past the script.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    turns: list[Any]
    """The script: one AIMessage (or a list of alternatives) per turn."""
    delay_s: float = 0.0
    """Sleep this long per call (a stand-in for a real model's latency, for benchmarks)."""
    _draws: dict[int, int] = PrivateAttr(default_factory=dict)
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "overseer-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """The script decides which tools to call; binding changes nothing."""
        return self

    def _pick(self, messages: list[BaseMessage]) -> AIMessage:
        turn = min(sum(isinstance(m, AIMessage) for m in messages), len(self.turns) - 1)
        entry = self.turns[turn]
        if isinstance(entry, AIMessage):
            message = entry
        else:
            draw = self._draws.get(turn, 0)
            self._draws[turn] = draw + 1
            message = entry[min(draw, len(entry) - 1)]
        self.calls += 1
        return message.model_copy()

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay_s:
            import time

            time.sleep(self.delay_s)
        return ChatResult(generations=[ChatGeneration(message=self._pick(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay_s:
            import asyncio

            await asyncio.sleep(self.delay_s)  # concurrent runs wait together, as on a real model server
        return ChatResult(generations=[ChatGeneration(message=self._pick(messages))])


def call(tool: str, args: dict[str, Any] | None = None, call_id: str | None = None) -> dict[str, Any]:
    """A tool call for an AIMessage: ``AIMessage("", tool_calls=[call("search", {"q": "x"})])``."""
    return {"name": tool, "args": args or {}, "id": call_id or f"call_{tool}", "type": "tool_call"}


def turn(text: str = "", *calls: dict[str, Any]) -> AIMessage:
    """One scripted model turn: some text and any tool calls."""
    return AIMessage(content=text, tool_calls=list(calls))


__all__ = ["ScriptedChatModel", "call", "turn"]
