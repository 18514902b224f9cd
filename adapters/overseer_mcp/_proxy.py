"""A policy-enforcing MCP server that forwards to another one: every tool call and every result is a judged step.

The proxy is an ordinary MCP server (the SDK's low-level ``Server``) whose tool handlers forward to an upstream
server through the SDK's ``Client``. The MCP session is the trajectory:

- ``tools/call`` is a ``tool_call`` step, judged before it is forwarded. ``block`` and ``resample`` (which a
  proxy cannot draw again) answer the client with an ``isError`` result that says why; the upstream server never
  sees the call. ``escalate`` holds the call until a person decides with ``overseer audit review STEP --label
  approve|reject|edit`` or the review page (another terminal, the same store): ``approve`` forwards it, ``edit``
  forwards the reviewer's arguments, ``reject`` or no decision within ``escalation_timeout_s`` refuses it. With no
  store nobody can decide, and the call is refused at once.
- the upstream result is an ``observation`` step, judged before the client sees it. ``sanitize`` replaces its text
  with the cleaned text (structured content is dropped with it, since it carries the same data); ``block``
  withholds it behind an ``isError`` result.
- ``tools/list`` is pinned: each tool's description and input schema are hashed the first time they are seen in the
  session; a tool that comes back changed (a "rug pull") is withheld from the list and its calls are refused, and
  each description is judged as an observation of ``tools/list`` (tool poisoning). A description that a rule
  blocks withholds its tool; ``sanitize`` and ``flag`` are recorded and the tool stays as it is: a description's
  job is to instruct the model, so the injection detector (trained on tool output, where any instruction to the
  model is out of place) marks most of them, and only rules written for descriptions should withhold one.

What the proxy cannot see: the user's task (the client keeps the conversation; pass ``task`` when you know it),
the model's own messages, and anything the client does without a tool. The policy therefore leans on provenance
within the session (values a call carries that first appeared in an earlier result) and the detectors.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from overseer import Observation, Overseer, Review, ToolCall, TrajectoryHandle, Verdict
from overseer.store import AuditStore

__all__ = ["UNKNOWN_TASK", "McpGuard", "build_server", "tool_pin"]

UNKNOWN_TASK = "(not visible to the proxy: the task of an MCP client's session)"
LIST_TOOLS = "tools/list"
_REFUSE = frozenset({"block", "escalate", "resample"})
_DECISIONS = frozenset({"approve", "reject", "edit"})


def tool_pin(tool: types.Tool) -> str:
    """A hash of what a model reads about a tool: its name, title, description and schemas."""
    seen = {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
    }
    return hashlib.sha256(json.dumps(seen, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _text(result: types.CallToolResult) -> str:
    """What the model would read of a result: its text blocks, then its structured content."""
    parts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if result.structured_content is not None and not parts:
        parts.append(json.dumps(result.structured_content, sort_keys=True, default=str))
    return "\n".join(parts)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


_DONE = {"block": "blocked", "escalate": "held for a person's decision, refused meanwhile,", "resample": "refused"}


def _refusal(verdict: Verdict, what: str) -> types.CallToolResult:
    done = _DONE.get(verdict.action, verdict.action)
    return _error(f"overseer {done} {what} (rule {verdict.rule or '-'}): {verdict.reason}")


@dataclass
class McpGuard:
    """One proxied session: the upstream client, the overseer that judges, and what was pinned."""

    overseer: Overseer
    upstream: Client
    task: str = UNKNOWN_TASK
    trajectory_id: str = field(default_factory=lambda: f"mcp-{uuid.uuid4().hex[:12]}")
    store: str | None = None
    """The audit store's URL, where a person's decision on an escalated call is read; ``None``: nobody can decide."""
    escalation_timeout_s: float = 300.0
    poll_s: float = 0.5
    pins: dict[str, str] = field(default_factory=dict)
    """Tool name -> the pin it had when first listed in this session."""
    withheld: dict[str, str] = field(default_factory=dict)
    """Tool name -> why it is withheld (changed since it was pinned, or a poisoned description)."""
    _handle: TrajectoryHandle | None = None
    _halted: str | None = None
    _calls: int = 0

    def _trajectory(self, ctx: ServerRequestContext[Any] | None) -> TrajectoryHandle:
        if self._handle is None:
            client = ctx.session.client_params.client_info if ctx and ctx.session.client_params else None
            server = self.upstream.server_info
            metadata: dict[str, Any] = {
                "source": "mcp",
                "mcp.server": server.name if server else None,
                "mcp.server_version": server.version if server else None,
                "mcp.client": client.name if client else None,
                "mcp.protocol": ctx.protocol_version if ctx else None,
            }
            if client is not None:
                metadata["agent"] = client.name
            self._handle = self.overseer.trajectory(self.task, id=self.trajectory_id, metadata=metadata)
        return self._handle

    async def list_tools(
        self, ctx: ServerRequestContext[Any] | None, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The upstream's tools, less those that changed since they were pinned or whose description is refused."""
        listed = await self.upstream.list_tools(cursor=params.cursor if params else None, cache_mode="refresh")
        handle = self._trajectory(ctx)
        kept = []
        for tool in listed.tools:
            pin = tool_pin(tool)
            first = self.pins.setdefault(tool.name, pin)
            if first != pin and tool.name not in self.withheld:
                self.withheld[tool.name] = f"its description or schema changed during the session ({first} -> {pin})"
                await handle.ajudge(
                    Observation(
                        tool=LIST_TOOLS,
                        call_id=f"{tool.name}#changed",
                        content=f"tool {tool.name!r} changed: {tool.description or ''}",
                        is_error=True,
                    )
                )
            if tool.name in self.withheld:
                continue
            if tool.description:
                verdict = await handle.ajudge(Observation(tool=LIST_TOOLS, call_id=tool.name, content=tool.description))
                if verdict.action in _REFUSE:
                    self.withheld[tool.name] = f"its description was judged {verdict.action}: {verdict.reason}"
                    continue
            kept.append(tool)
        return types.ListToolsResult(tools=kept, next_cursor=listed.next_cursor)

    async def call_tool(
        self, ctx: ServerRequestContext[Any] | None, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Judge the call, forward it if allowed, judge the result, and answer with what the client may read."""
        handle = self._trajectory(ctx)
        if self._halted is not None:
            return _error(f"overseer stopped this session: {self._halted}")
        if params.name in self.withheld:
            return _error(f"overseer withheld tool {params.name!r}: {self.withheld[params.name]}")
        self._calls += 1
        call_id = f"call-{self._calls}"
        args = dict(params.arguments or {})
        verdict = await handle.ajudge(ToolCall(tool=params.name, args=args, call_id=call_id))
        if verdict.halt:
            self._halted = verdict.reason
        if verdict.action == "escalate" and self.store is not None:
            decision = await self._decision(verdict)
            if decision is None:
                return _error(
                    f"overseer held the call to {params.name!r} for a person's decision (rule {verdict.rule}: "
                    f"{verdict.reason}); none came within {self.escalation_timeout_s:g} s, so it was refused"
                )
            if decision.label == "reject":
                who = f" ({decision.comment})" if decision.comment else ""
                return _error(f"{decision.reviewer} rejected the call to {params.name!r}{who}")
            if decision.label == "edit" and isinstance(decision.edited, Mapping):
                edited = decision.edited.get("args", decision.edited)
                args = dict(edited) if isinstance(edited, Mapping) else args
        elif verdict.action in _REFUSE:
            return _refusal(verdict, f"the call to {params.name!r}")
        try:
            result = await self.upstream.call_tool(params.name, args)
        except MCPError as err:  # a protocol error or no answer in time: the client sees a failed call
            result = _error(f"upstream error: {err}")
        except Exception as err:  # the server went away: a failed call, not a hung client
            result = _error(f"upstream server unavailable: {type(err).__name__}: {err}")
        seen = await handle.ajudge(
            Observation(tool=params.name, call_id=call_id, content=_text(result), is_error=bool(result.is_error))
        )
        if seen.halt:
            self._halted = seen.reason
        if seen.action in _REFUSE:
            return _refusal(seen, f"the result of {params.name!r}")
        if seen.action == "sanitize" and seen.sanitized is not None:
            others = [block for block in result.content if not isinstance(block, types.TextContent)]
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=seen.sanitized), *others], is_error=result.is_error
            )
        return result

    async def _decision(self, verdict: Verdict) -> Review | None:
        """Wait for an approve / reject / edit review of the escalated step in the store (``None``: none in time)."""
        import anyio

        assert self.store is not None
        await anyio.to_thread.run_sync(self.overseer.flush, 30.0)  # the step must be in the store to be reviewed

        audit = await anyio.to_thread.run_sync(AuditStore, self.store)  # opened once, polled, closed

        def decided() -> Review | None:
            reviews = audit.list_reviews(step_id=verdict.step_id)
            return next((r for r in reversed(reviews) if r.label in _DECISIONS), None)

        try:
            with anyio.move_on_after(self.escalation_timeout_s):
                while True:
                    found = await anyio.to_thread.run_sync(decided)
                    if found is not None:
                        return found
                    await anyio.sleep(self.poll_s)
            return None
        finally:
            audit.close()

    async def aclose(self, status: str = "completed") -> None:
        """End the session's trajectory."""
        if self._handle is not None and not self._handle.ended:
            await self._handle.aend(status)


def build_server(guard: McpGuard, *, name: str | None = None, instructions: str | None = None) -> Server[Any]:
    """The MCP server the client talks to: tools are guarded, named after the upstream server."""
    server_info = guard.upstream.server_info
    return Server(
        name or (server_info.name if server_info else "overseer-mcp-proxy"),
        version=server_info.version if server_info else "",
        instructions=instructions if instructions is not None else guard.upstream.instructions,
        on_list_tools=guard.list_tools,
        on_call_tool=guard.call_tool,
    )


def describe(guard: McpGuard) -> Mapping[str, Any]:
    """What the guard pinned and withheld, for logs and tests."""
    return {"trajectory": guard.trajectory_id, "pins": dict(guard.pins), "withheld": dict(guard.withheld)}
