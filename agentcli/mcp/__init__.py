"""The MCP client: servers from `[mcp.servers.NAME]` and `.mcp.json`, their tools as declarations.

A leaf like ``tools/``: it knows the workspace, the settings and the tool registry it is given,
never the session. The official ``mcp`` SDK is imported only when a server starts, so sessions
without servers (and ``--help``) never pay for it.
"""

from agentcli.mcp.connection import Connection, ServerUnavailable, Status
from agentcli.mcp.declare import McpTool
from agentcli.mcp.manager import McpManager
from agentcli.mcp.naming import PREFIX, server_of, tool_name
from agentcli.mcp.servers import PROJECT_FILE, ServerList, ServerSpec, resolve_servers

__all__ = [
    "PREFIX",
    "PROJECT_FILE",
    "Connection",
    "McpManager",
    "McpTool",
    "ServerList",
    "ServerSpec",
    "ServerUnavailable",
    "Status",
    "resolve_servers",
    "server_of",
    "tool_name",
]
