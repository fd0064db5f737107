"""MCP servers outside a session: what ``agentcli mcp list`` and ``agentcli mcp call`` ask.

Front ends never reach into ``mcp/`` themselves; these start the configured servers (exactly as
a session would), report, and close them again, leaving no process behind.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentcli.config import Settings, data_home
from agentcli.mcp import McpManager, McpTool, ServerList, Status, resolve_servers
from agentcli.session.mcp_commands import denied_outright
from agentcli.tools.base import ToolContext, ToolResult
from agentcli.tools.registry import ToolRegistry, default_registry


class McpCommandError(Exception):
    """The command cannot be carried out as asked (unknown server or tool, bad JSON)."""


class McpConfigError(McpCommandError):
    """The configuration leaves servers out (a broken `.mcp.json`, an entry with a wrong field):
    nothing was started. ``errors`` name the file and the field, one per problem."""

    def __init__(self, errors: tuple[str, ...]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


class McpServerFailed(McpCommandError):
    """The server did not start (command not found, a crash, a timeout): a failure, not a usage error."""


@dataclass(frozen=True)
class ToolLine:
    name: str
    """The name the model calls it by (``mcp__git__git_status``)."""
    remote_name: str
    read_only: bool
    research: bool
    description: str


@dataclass
class ServerReport:
    status: Status
    tools: list[ToolLine] = field(default_factory=list)


@dataclass
class Listing:
    servers: list[ServerReport]
    problems: tuple[str, ...]
    disabled: tuple[str, ...]
    notices: list[str]
    max_tools: int | None = None


def _configured(workspace: Path, settings: Settings) -> ServerList:
    """The servers, or :class:`McpConfigError` when the configuration left any out: a command run
    to look at MCP is where such a mistake must be refused, not listed past."""
    servers = resolve_servers(settings.mcp, workspace)
    if servers.errors:
        raise McpConfigError(servers.errors)
    return servers


async def list_servers(workspace: Path, settings: Settings) -> Listing:
    """Start every configured server, list its tools, and stop it again.

    Raises:
        McpConfigError: the configuration leaves a server out; nothing was started.
    """
    notices: list[str] = []
    # With agentcli's own tools, as a session has them: they count towards `[mcp] max_tools`.
    manager = McpManager(_configured(workspace, settings), workspace, default_registry(), notify=notices.append,
                         denied=denied_outright(settings))
    manager.start(log_dir=data_home() / "mcp-logs")
    try:
        await manager.ready()
        # Copies: closing marks the servers stopped, and the listing shows how they started.
        reports = [ServerReport(replace(status), [_line(tool) for tool in manager.tools_of(status.name)])
                   for status in manager.statuses]
    finally:
        await manager.aclose()
    return Listing(reports, manager.problems, manager.disabled, notices, manager.max_tools)


async def call_tool(workspace: Path, settings: Settings, server: str, tool: str, arguments: str) -> ToolResult:
    """Start ``server`` alone, call one of its tools (by its own name or its ``mcp__`` name), stop it.

    Raises:
        McpConfigError: the configuration leaves a server out; nothing was started.
        McpServerFailed: the server did not start.
        McpCommandError: the server is not configured, the tool is unknown, or the arguments are
            not a JSON object.
    """
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError as error:
        raise McpCommandError(f"the arguments are not valid JSON: {error.msg} at position {error.pos}") from None
    if not isinstance(parsed, dict):
        raise McpCommandError("the arguments must be a JSON object, such as '{\"timezone\": \"UTC\"}'")
    notices: list[str] = []
    servers = _configured(workspace, settings)
    chosen = [spec for spec in servers.servers if spec.name == server]
    if not chosen:
        known = ", ".join(spec.name for spec in servers.servers) or "none"
        raise McpCommandError(f"no enabled MCP server named '{server}' (configured: {known})")
    registry = ToolRegistry([])
    # Any of its tools may be called by hand, even one a session leaves out for `[mcp] max_tools`.
    manager = McpManager(replace(servers, servers=tuple(chosen), max_tools=None), workspace, registry,
                         notify=notices.append)
    manager.start(log_dir=data_home() / "mcp-logs")
    try:
        await manager.ready()
        status = manager.statuses[0]
        if status.state != "ready":
            stderr = f" (its stderr: {status.log})" if status.log else ""
            raise McpServerFailed(f"the MCP server '{server}' did not start: {status.error}{stderr}")
        tools = manager.tools_of(server)
        found = next((t for t in tools if tool in (t.name, t.remote_name)), None)
        if found is None:
            names = ", ".join(t.remote_name for t in tools) or "none"
            raise McpCommandError(f"the MCP server '{server}' offers no tool '{tool}' (its tools: {names})")
        context = ToolContext(workspace=workspace, settings=settings.tools)
        return await registry.call(found.name, json.dumps(parsed), context)
    finally:
        await manager.aclose()


def _line(tool: type[McpTool]) -> ToolLine:
    return ToolLine(tool.name, tool.remote_name, tool.read_only, tool.research, tool.__doc__ or "")
