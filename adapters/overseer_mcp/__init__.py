"""overseer for the Model Context Protocol: a proxy that judges every tool call and result of an MCP session.

``overseer mcp proxy -- SERVER ...`` (or ``--upstream URL``) serves the guarded server over stdio or streamable
HTTP; :class:`McpGuard` (one session) or :class:`GuardedSessions` (many) and :func:`build_server` put the same
guard in front of any upstream ``mcp.Client``.
"""

from overseer_mcp._proxy import UNKNOWN_TASK, GuardedSessions, McpGuard, build_server, tool_pin
from overseer_mcp._run import serve, serve_stdio

__all__ = ["UNKNOWN_TASK", "GuardedSessions", "McpGuard", "build_server", "serve", "serve_stdio", "tool_pin"]
