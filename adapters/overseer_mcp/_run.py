"""Run the proxy: upstream over stdio (a command) or streamable HTTP (a URL); served over stdio or streamable HTTP.

A client configured to launch ``overseer mcp proxy -- SERVER ...`` instead of ``SERVER ...`` needs no other change;
one that speaks HTTP points at the proxy's URL instead of the server's. Served over HTTP, the proxy listens on
loopback unless told otherwise, with the SDK's DNS-rebinding checks there; bound to any other address it requires a
bearer token from every client (the review page's rules).
"""

from __future__ import annotations

import hmac
import os
import secrets
import signal
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.stdio import stdio_server

from overseer import Overseer
from overseer.exceptions import ConfigError
from overseer.store import AuditStore
from overseer_mcp._proxy import UNKNOWN_TASK, GuardedSessions, McpGuard, build_server

__all__ = ["Listen", "announce_on_stderr", "is_loopback", "new_token", "parse_listen", "serve", "serve_stdio"]

Listen = tuple[str, int] | None
"""Where the proxy serves: ``None`` for stdio, ``(host, port)`` for streamable HTTP at ``http://host:port/mcp``."""

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
Scope = MutableMapping[str, Any]
Asgi = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def parse_listen(value: str | None) -> Listen:
    """``stdio`` (or nothing), ``PORT``, ``HOST:PORT`` or ``[V6]:PORT``.

    Raises:
        ConfigError: not one of those, or a port out of range.
    """
    if value is None or value == "stdio":
        return None
    host, sep, port = value.rpartition(":")
    host = host.strip("[]") if sep else "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535 or not host:
        raise ConfigError(f"--listen: expected stdio, PORT or HOST:PORT, got {value!r}")
    return host, number


def _bearer(app: Asgi, token: str) -> Asgi:
    """Every HTTP request must carry ``Authorization: Bearer TOKEN``."""

    async def guarded(
        scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            offered = headers.get(b"authorization", b"").decode("latin-1").removeprefix("Bearer ").strip()
            if not hmac.compare_digest(offered.encode(), token.encode()):
                body = b"a bearer token is required: the one `overseer mcp proxy` printed (Authorization: Bearer)"
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


async def serve(
    upstream: str | StdioServerParameters,
    *,
    listen: Listen = None,
    token: str | None = None,
    policy: Any = "default",
    store: Any = None,
    task: str | None = None,
    call_timeout_s: float = 60.0,
    escalation_timeout_s: float = 300.0,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Connect to the upstream server, then serve the guarded copy of it until the client (stdio) or a signal stops.

    ``upstream``: a URL (streamable HTTP) or the parameters to launch a server over stdio (it inherits this
    process's environment and working directory unless they say otherwise). A call the upstream does not answer
    within ``call_timeout_s`` reaches the client as a failed call. ``store`` (a URL) keeps the audit trail and the
    tool pins across sessions, and is where a person's decision on an escalated call is read (``escalation_timeout_s``
    at most). ``on_ready`` gets the URL (or ``stdio``) once the proxy serves.
    """
    if listen is not None and not is_loopback(listen[0]) and not token:
        raise ConfigError("--listen beyond loopback needs a token: pass --token (at least 16 characters)")
    if token is not None and len(token) < 16:
        raise ConfigError("--token must be at least 16 characters")
    audit = AuditStore(store) if isinstance(store, str) else None
    try:
        with Overseer(policy, store=store) as overseer:
            async with Client(upstream, read_timeout_seconds=call_timeout_s) as client:

                def session() -> McpGuard:
                    return McpGuard(
                        overseer, client, task or UNKNOWN_TASK, audit=audit, escalation_timeout_s=escalation_timeout_s
                    )

                sessions = GuardedSessions(session, keyed=listen is not None)
                server = build_server(sessions, client)
                try:
                    if listen is None:
                        async with stdio_server() as (read_stream, write_stream):
                            if on_ready is not None:
                                on_ready("stdio")
                            await server.run(read_stream, write_stream, server.create_initialization_options())
                    else:
                        await _serve_http(server, listen, token, on_ready)
                finally:
                    with anyio.CancelScope(shield=True):
                        await sessions.aclose()
    finally:
        if audit is not None:
            audit.close()


async def _serve_http(server: Any, listen: tuple[str, int], token: str | None, on_ready: Any) -> None:
    import uvicorn

    host, port = listen
    app: Any = server.streamable_http_app(host=host)
    if token is not None:
        app = _bearer(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level=os.environ.get("OVERSEER_MCP_LOG", "warning"))
    http = uvicorn.Server(config)

    async def announce() -> None:
        while not http.started:  # noqa: ASYNC110 (uvicorn offers no event to wait on)
            await anyio.sleep(0.05)
        bound = http.servers[0].sockets[0].getsockname()[1] if http.servers else port
        shown = f"[{host}]" if ":" in host else host
        if on_ready is not None:
            on_ready(f"http://{shown}:{bound}/mcp")

    # uvicorn stops on SIGINT / SIGTERM, then raises the signal again for the handler that was there before it:
    # that handler must return, so that the sessions' trajectories are ended and the audit flushed before exit
    previous = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(announce)
            await http.serve()
            tasks.cancel_scope.cancel()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def serve_stdio(
    command: str,
    args: list[str],
    *,
    policy: Any = "default",
    store: Any = None,
    task: str | None = None,
    call_timeout_s: float = 60.0,
    escalation_timeout_s: float = 300.0,
) -> None:
    """Launch ``command args`` and serve the guarded copy of it on this process's stdin and stdout."""
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    await serve(
        params,
        policy=policy,
        store=store,
        task=task,
        call_timeout_s=call_timeout_s,
        escalation_timeout_s=escalation_timeout_s,
    )


def new_token() -> str:
    """A token for a proxy that listens beyond loopback."""
    return secrets.token_urlsafe(24)


def announce_on_stderr(where: str) -> None:
    """Tell the person who started the proxy where it serves (stdout belongs to the protocol over stdio)."""
    if where != "stdio":
        print(f"overseer mcp proxy: serving {where}", file=sys.stderr, flush=True)


def is_loopback(host: str) -> bool:
    """Whether a listening address is reachable from this machine only."""
    return host in _LOOPBACK or host.startswith("127.")
