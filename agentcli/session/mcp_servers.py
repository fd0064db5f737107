"""MCP servers outside a session: what ``agentcli mcp list`` and ``agentcli mcp call`` ask.

Front ends never reach into ``mcp/`` themselves; these start the configured servers (exactly as
a session would), report, and close them again, leaving no process behind.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentcli.config import Settings, data_home
from agentcli.mcp import McpManager, McpTool, Status, resolve_servers
from agentcli.tools.base import ToolContext, ToolResult
from agentcli.tools.registry import ToolRegistry


class McpCommandError(Exception):
    """The command cannot be carried out as asked (unknown server or tool, bad JSON)."""


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


def _manager(workspace: Path, settings: Settings, notices: list[str]) -> McpManager:
    servers = resolve_servers(settings.mcp, workspace)
    return McpManager(servers, workspace, ToolRegistry([]), notify=notices.append)


async def list_servers(workspace: Path, settings: Settings) -> Listing:
    """Start every configured server, list its tools, and stop it again."""
    notices: list[str] = []
    manager = _manager(workspace, settings, notices)
    manager.start(log_dir=data_home() / "mcp-logs")
    try:
        await manager.ready()
        # Copies: closing marks the servers stopped, and the listing shows how they started.
        reports = [ServerReport(replace(status), [_line(tool) for tool in manager.tools_of(status.name)])
                   for status in manager.statuses]
    finally:
        await manager.aclose()
    return Listing(reports, manager.problems, manager.disabled, notices)


async def call_tool(workspace: Path, settings: Settings, server: str, tool: str, arguments: str) -> ToolResult:
    """Start ``server`` alone, call one of its tools (by its own name or its ``mcp__`` name), stop it.

    Raises:
        McpCommandError: the server is not configured or did not start, the tool is unknown, or
            the arguments are not a JSON object.
    """
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError as error:
        raise McpCommandError(f"the arguments are not valid JSON: {error.msg} at position {error.pos}") from None
    if not isinstance(parsed, dict):
        raise McpCommandError("the arguments must be a JSON object, such as '{\"timezone\": \"UTC\"}'")
    notices: list[str] = []
    servers = resolve_servers(settings.mcp, workspace)
    chosen = [spec for spec in servers.servers if spec.name == server]
    if not chosen:
        known = ", ".join(spec.name for spec in servers.servers) or "none"
        raise McpCommandError(f"no enabled MCP server named '{server}' (configured: {known})")
    registry = ToolRegistry([])
    manager = McpManager(type(servers)(tuple(chosen)), workspace, registry, notify=notices.append)
    manager.start(log_dir=data_home() / "mcp-logs")
    try:
        await manager.ready()
        status = manager.statuses[0]
        if status.state != "ready":
            raise McpCommandError(f"the MCP server '{server}' did not start: {status.error}")
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
