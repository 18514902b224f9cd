"""overseer for the Model Context Protocol: a proxy that judges every tool call and result of an MCP session.

``overseer mcp proxy -- SERVER ...`` serves the guarded server over stdio; :class:`McpGuard` and
:func:`build_server` put the same guard in front of any upstream ``mcp.Client``.
"""

from overseer_mcp._proxy import UNKNOWN_TASK, McpGuard, build_server, tool_pin
from overseer_mcp._run import serve_stdio

__all__ = ["UNKNOWN_TASK", "McpGuard", "build_server", "serve_stdio", "tool_pin"]
