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
- ``tools/list`` is pinned: what a model reads of each tool (name, title, description, schemas) is hashed when
  first listed. A tool listed again with another hash, within the session or against the last version accepted in
  the audit store (trust on first use across sessions), is a ``tool_change`` step ("rug pull"): a policy that
  refuses it withholds the tool from the list and refuses its calls, and the store keeps the refused version until
  a person accepts it (``overseer mcp accept``); an allowed change becomes the new pin. Each description is also
  judged once as an observation of ``tools/list`` (tool poisoning). A description that a rule blocks withholds its
  tool; ``sanitize`` and ``flag`` are recorded and the tool stays as it is: a description's job is to instruct the
  model, so the injection detector (trained on tool output, where any instruction to the model is out of place)
  marks most of them, and only rules written for descriptions should withhold one.

What the proxy cannot see: the user's task (the client keeps the conversation; pass ``task`` when you know it),
the model's own messages, and anything the client does without a tool. The policy therefore leans on provenance
within the session (values a call carries that first appeared in an earlier result) and the detectors.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types
from mcp import Client
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from overseer import Observation, Overseer, Review, ToolCall, ToolChange, TrajectoryHandle, Verdict
from overseer.store import AuditStore, ToolPin

__all__ = ["UNKNOWN_TASK", "GuardedSessions", "McpGuard", "build_server", "tool_pin"]

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
    """One proxied client session: the upstream client, the overseer that judges, and what was pinned."""

    overseer: Overseer
    upstream: Client
    task: str = UNKNOWN_TASK
    trajectory_id: str = field(default_factory=lambda: f"mcp-{uuid.uuid4().hex[:12]}")
    audit: AuditStore | None = None
    """The audit store where tool pins are kept across sessions and a person's decision on an escalated call is
    read; ``None``: pins last one session and nobody can decide an escalation."""
    escalation_timeout_s: float = 300.0
    poll_s: float = 0.5
    pins: dict[str, str] = field(default_factory=dict)
    """Tool name -> the pin accepted for it in this session."""
    withheld: dict[str, str] = field(default_factory=dict)
    """Tool name -> why it is withheld (changed since it was pinned, or a poisoned description)."""
    _described: dict[str, str] = field(default_factory=dict)
    _judged: set[str] = field(default_factory=set)
    _hints: dict[str, dict[str, bool]] = field(default_factory=dict)
    """Tool name -> what the server declared of it (``read_only``, ``destructive``), put on each call's metadata."""
    _handle: TrajectoryHandle | None = None
    _halted: str | None = None
    _calls: int = 0

    @property
    def server_name(self) -> str:
        """The upstream server's name, under which its tools are pinned in the store."""
        info = self.upstream.server_info
        return info.name if info is not None and info.name else "(unnamed MCP server)"

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
            if self.task == UNKNOWN_TASK:  # no request to judge a call against (rules.side_effect reads this)
                metadata["task_visible"] = False
            self._handle = self.overseer.trajectory(self.task, id=self.trajectory_id, metadata=metadata)
        return self._handle

    async def _in_store(self, fn: Any, *args: Any) -> Any:
        import anyio

        return await anyio.to_thread.run_sync(fn, *args) if self.audit is not None else None

    async def _pinned(self, handle: TrajectoryHandle, tool: types.Tool) -> bool:
        """Whether the tool may be listed: pinned as it is, or changed and the change allowed by the policy."""
        pin = tool_pin(tool)
        known = self.pins.get(tool.name)
        if known == pin:
            return True
        since: Literal["session", "store"] = "session"
        before = self._described.get(tool.name, "")
        if known is None and self.audit is not None:
            base: ToolPin | None = await self._in_store(self.audit.pin_baseline, self.server_name, tool.name)
            if base is not None and base.pin != pin:
                known, since, before = base.pin, "store", base.description or ""
        seen = ToolPin(
            self.server_name, tool.name, pin, "accepted", tool.description, tool.input_schema, self.trajectory_id
        )
        if known is not None and known != pin:
            change = ToolChange(
                tool=tool.name,
                server=self.server_name,
                since=since,
                pinned=known,
                pin=pin,
                before=before,
                after=tool.description or "",
            )
            verdict = await handle.ajudge(change)
            if verdict.action in _REFUSE:
                when = "during the session" if since == "session" else "since it was last accepted"
                self.withheld[tool.name] = (
                    f"its description or schema changed {when} ({known} -> {pin}); {verdict.rule or 'policy'}: "
                    f"{verdict.reason}"
                )
                if self.audit is not None:
                    await self._in_store(self.audit.record_tool_pin, dataclasses.replace(seen, status="refused"))
                return False
        self.pins[tool.name] = pin
        self._described[tool.name] = tool.description or ""
        if self.audit is not None:
            await self._in_store(self.audit.record_tool_pin, seen)
        return True

    async def list_tools(
        self, ctx: ServerRequestContext[Any] | None, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The upstream's tools, less those that changed since they were pinned or whose description is refused."""
        listed = await self.upstream.list_tools(cursor=params.cursor if params else None, cache_mode="refresh")
        handle = self._trajectory(ctx)
        kept = []
        for tool in listed.tools:
            if tool.name in self.withheld or not await self._pinned(handle, tool):
                continue
            pin = self.pins[tool.name]
            if tool.description and pin not in self._judged:  # each version of a description is judged once
                self._judged.add(pin)
                verdict = await handle.ajudge(Observation(tool=LIST_TOOLS, call_id=tool.name, content=tool.description))
                if verdict.action in _REFUSE:
                    self.withheld[tool.name] = f"its description was judged {verdict.action}: {verdict.reason}"
                    continue
            kept.append(tool)
            hints = tool.annotations
            if hints is not None:  # only what was declared: the protocol's defaults say nothing of this tool
                declared = {"read_only": hints.read_only_hint, "destructive": hints.destructive_hint}
                self._hints[tool.name] = {k: v for k, v in declared.items() if v is not None}
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
        hints = self._hints.get(params.name)
        metadata = {"tool_hints": hints} if hints else {}
        verdict = await handle.ajudge(ToolCall(tool=params.name, args=args, call_id=call_id, metadata=metadata))
        if verdict.halt:
            self._halted = verdict.reason
        if verdict.action == "escalate" and self.audit is not None:
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

        audit = self.audit
        assert audit is not None
        await anyio.to_thread.run_sync(self.overseer.flush, 30.0)  # the step must be in the store to be reviewed

        def decided() -> Review | None:
            reviews = audit.list_reviews(step_id=verdict.step_id)
            return next((r for r in reversed(reviews) if r.label in _DECISIONS), None)

        with anyio.move_on_after(self.escalation_timeout_s):
            while True:
                found = await anyio.to_thread.run_sync(decided)
                if found is not None:
                    return found
                await anyio.sleep(self.poll_s)
        return None

    async def aclose(self, status: str = "completed") -> None:
        """End the session's trajectory."""
        if self._handle is not None and not self._handle.ended:
            await self._handle.aend(status)


class GuardedSessions:
    """One :class:`McpGuard`, so one trajectory, per client session.

    Over stdio the connection is the session. Over streamable HTTP a handshake-era client (``mcp-session-id``)
    gets a trajectory per MCP session; the 2026-07-28 protocol has no sessions, so a request that names none is
    grouped by its HTTP connection (or by an ``X-Overseer-Session`` header, for a client that can set one). A
    trajectory idle for ``idle_s`` is ended.
    """

    def __init__(self, make: Callable[[], McpGuard], *, keyed: bool = True, idle_s: float = 1800.0) -> None:
        self._make = make
        self._keyed = keyed
        self._idle_s = idle_s
        self._guards: dict[str, tuple[McpGuard, float]] = {}

    @staticmethod
    def key(ctx: ServerRequestContext[Any] | None) -> str:
        """Which client session a request belongs to."""
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        if headers is not None:
            named = headers.get("x-overseer-session") or headers.get("mcp-session-id")
            if named:
                return f"session:{named}"
            client = getattr(request, "client", None)
            if client is not None:
                return f"connection:{client.host}:{client.port}"
        return f"connection:{id(ctx.session)}" if ctx is not None else "connection:-"

    async def guard(self, ctx: ServerRequestContext[Any] | None) -> McpGuard:
        """The guard of the request's session (a new one, with a new trajectory, for a new session)."""
        now = time.monotonic()
        key = self.key(ctx) if self._keyed else "stdio"
        found = self._guards.get(key)
        if found is None:
            for other, (guard, last) in list(self._guards.items()):
                if now - last > self._idle_s:
                    del self._guards[other]
                    await guard.aclose()
            found = (self._make(), now)
        self._guards[key] = (found[0], now)
        return found[0]

    async def list_tools(
        self, ctx: ServerRequestContext[Any] | None, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return await (await self.guard(ctx)).list_tools(ctx, params)

    async def call_tool(
        self, ctx: ServerRequestContext[Any] | None, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await (await self.guard(ctx)).call_tool(ctx, params)

    @property
    def guards(self) -> list[McpGuard]:
        """The sessions' guards, oldest first."""
        return [guard for guard, _ in self._guards.values()]

    async def aclose(self) -> None:
        """End every session's trajectory."""
        for guard, _ in self._guards.values():
            await guard.aclose()
        self._guards.clear()


def build_server(
    guard: McpGuard | GuardedSessions, upstream: Client | None = None, *, name: str | None = None,
    instructions: str | None = None,
) -> Server[Any]:  # fmt: skip
    """The MCP server the client talks to: tools are guarded, named after the upstream server."""
    upstream = upstream if upstream is not None else guard.upstream if isinstance(guard, McpGuard) else None
    server_info = upstream.server_info if upstream is not None else None
    return Server(
        name or (server_info.name if server_info else "overseer-mcp-proxy"),
        version=server_info.version if server_info else "",
        instructions=instructions if instructions is not None else upstream.instructions if upstream else None,
        on_list_tools=guard.list_tools,
        on_call_tool=guard.call_tool,
    )


def describe(guard: McpGuard) -> Mapping[str, Any]:
    """What the guard pinned and withheld, for logs and tests."""
    return {"trajectory": guard.trajectory_id, "pins": dict(guard.pins), "withheld": dict(guard.withheld)}
