"""The Session's MCP servers: set up from the settings, started in the background, listed, closed.

Mixed into :class:`~agentcli.session.session.Session` like its timeline commands. Front ends
call :meth:`McpCommands.start_tools` once they have drawn the session (the first command starts
the servers otherwise) and read :attr:`McpCommands.mcp_statuses`; the servers' own news
(ready, failed, restarted) comes as ``Notice(kind="mcp")`` events.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.config import Settings
from agentcli.events import Event, Notice
from agentcli.session.turn import Turn

if TYPE_CHECKING:
    from agentcli.mcp import McpManager, Status
    from agentcli.session.log import SessionLog


def denied_outright(settings: Settings) -> Callable[[str], bool]:
    """Whether ``[permissions] deny`` refuses every call of a tool (a rule naming the tool, its
    server or a pattern of names, without an argument pattern)."""
    from agentcli.permissions.rules import RuleError, parse_rules

    try:
        rules = [rule for rule in parse_rules(settings.permissions.deny, where="permissions.deny")
                 if rule.pattern is None]
    except RuleError:
        return lambda _: False  # the policy reports a malformed rule; nothing is hidden meanwhile
    return lambda name: any(rule.applies_to(name) for rule in rules)


class McpCommands:
    """Mixed into :class:`~agentcli.session.session.Session`, whose state these commands use."""

    settings: Settings
    workspace: Path
    turn: Turn
    log: SessionLog | None
    mcp: McpManager | None = None
    """The MCP servers whose tools join the registry (None without any configured)."""

    def _emit(self, event: Event) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def use_mcp(self) -> None:
        """Set up the MCP servers of the settings and the workspace's `.mcp.json` (the factory
        calls it; child sessions such as explore's never do, so they start no servers)."""
        from agentcli.mcp import McpManager, resolve_servers

        servers = resolve_servers(self.settings.mcp, self.workspace)
        if servers.servers or servers.problems:
            self.mcp = McpManager(
                servers, self.workspace, self.turn.tools,
                notify=lambda text: self._emit(Notice(kind="mcp", text=text, severity="warning")),
                inform=lambda text: self._emit(Notice(kind="mcp", text=text, severity="info")),
                denied=denied_outright(self.settings))

    def start_tools(self) -> None:
        """Start the MCP servers in the background, once; returns at once (never waits)."""
        if self.mcp is not None:
            self.mcp.start(log_dir=self.log.directory / "mcp" if self.log is not None else None)

    @property
    def mcp_statuses(self) -> list[Status]:
        """Each MCP server with its state and tool count (empty without servers)."""
        return self.mcp.statuses if self.mcp is not None else []

    def mcp_tool_lines(self) -> list[tuple[str, str]]:
        """Each MCP tool offered, as (name, one-line description), for help listings."""
        if self.mcp is None:
            return []
        return [(tool.name, tool.__doc__ or "") for status in self.mcp.statuses
                for tool in self.mcp.tools_of(status.name)]

    async def aclose(self) -> None:
        """Close, and wait until every MCP server process is gone."""
        self.close()
        if self.mcp is not None:
            await self.mcp.aclose()
