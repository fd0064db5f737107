"""A session's MCP servers: started together in the background, their tools put in the registry.

:meth:`McpManager.start` only schedules the work, so a front end may call it before its first
frame is drawn without waiting; the registry's ``ready`` lets the first model call wait for
servers still starting (each within its own ``timeout_s``). Every failure is a notice naming
the server and the reason, and the session goes on without that server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.mcp.budget import share
from agentcli.mcp.connection import Connection, Status
from agentcli.mcp.declare import McpTool, UnusableSchema, declare
from agentcli.mcp.naming import offered
from agentcli.mcp.servers import ServerList

if TYPE_CHECKING:
    from agentcli.tools.registry import ToolRegistry

Notify = Callable[[str], None]
"""Tells the user something about the servers (the session emits it as a notice): ``notify`` for
what went wrong (a server not available or restarted after dying, tools left out), ``inform`` for
news (the servers ready, a server's new set of tools)."""


class McpManager:
    """The MCP servers of one session."""

    def __init__(self, servers: ServerList, workspace: Path, registry: ToolRegistry, *,
                 notify: Notify = lambda _: None, inform: Notify | None = None,
                 on_change: Callable[[], None] = lambda: None,
                 denied: Callable[[str], bool] = lambda _: False) -> None:
        self.registry = registry
        self.denied = denied
        """Whether a tool (by its ``mcp__`` name) is denied outright by the permission rules: such a
        tool is not offered at all, as Claude Code does, rather than offered and refused each call."""
        self.notify = notify
        self.inform = inform or notify
        """News, not a problem; without its own callback it goes where problems go."""
        self.on_change = on_change
        """Called whenever a server's status changes (front ends redraw their listing)."""
        self.problems = servers.problems
        self.disabled = servers.disabled
        self.connections = [Connection(spec, workspace, None, self._changed, self._tools_changed)
                            for spec in servers.servers]
        self._names: dict[str, list[str]] = {}
        """The registry names of each server's tools."""
        self._offered: dict[str, tuple[Connection, list[type[McpTool]]]] = {}
        """Each ready server's tools that its allow/deny lists and the schema checks let through."""
        self.max_tools = servers.max_tools
        self._told_cut: dict[str, int] = {}
        """How many of each server's tools the user was told were left out for ``max_tools``."""
        self._startup: asyncio.Task[None] | None = None
        registry.wait_for(self.ready)

    @property
    def statuses(self) -> list[Status]:
        return [connection.status for connection in self.connections]

    @property
    def starting(self) -> bool:
        return self._startup is not None and not self._startup.done()

    def start(self, log_dir: Path | None = None) -> None:
        """Start every server in the background (once); returns at once.

        Args:
            log_dir: Where each stdio server's stderr goes (``NAME.log``); discarded when None.
        """
        if self._startup is not None:
            return
        for connection in self.connections:
            connection.log_dir = log_dir
        for problem in self.problems:
            self.notify(problem)
        if self.connections:
            self._startup = asyncio.get_running_loop().create_task(self._start_all(), name="mcp-startup")

    async def ready(self) -> None:
        """Wait until every server has started or failed (each within its ``timeout_s``)."""
        if self._startup is not None:
            await asyncio.shield(self._startup)

    async def _start_all(self) -> None:
        began = time.monotonic()
        # The SDK takes about half a second to import: in a thread, so a TUI's event loop that
        # started the servers keeps drawing meanwhile.
        await asyncio.to_thread(import_sdk)
        await asyncio.gather(*(connection.start() for connection in self.connections))
        ready = [c.status for c in self.connections if c.status.state == "ready"]
        if ready:
            listing = ", ".join(f"{s.name} ({s.tools} tool{'s' if s.tools != 1 else ''})" for s in ready)
            self.inform(f"MCP servers ready in {time.monotonic() - began:.1f} s: {listing}")

    def _changed(self, connection: Connection) -> None:
        status = connection.status
        if status.state == "ready":
            self._publish(connection)
        elif status.state == "failed":
            self.notify(f"MCP server '{status.name}' is not available: {status.error}")
        self.on_change()

    def _tools_changed(self, connection: Connection) -> None:
        """The running server changed its tools: the registry gets the new set from the next request."""
        before = set(self._names.get(connection.name, []))
        self._publish(connection, restarted=False)
        after = set(self._names.get(connection.name, []))
        changes = [f"added {', '.join(sorted(after - before))}" if after - before else "",
                   f"removed {', '.join(sorted(before - after))}" if before - after else ""]
        said = "; ".join(change for change in changes if change) or "changed their descriptions or schemas"
        self.inform(f"MCP server '{connection.name}' changed its tools: {said}")
        self.on_change()

    def _publish(self, connection: Connection, *, restarted: bool = True) -> None:
        """Put the server's tools in the registry (again, after a restart or a change)."""
        settings = connection.spec.settings
        declared: list[type[McpTool]] = []
        skipped: list[str] = []
        for tool in connection.tools:
            if not offered(tool.name, settings.allow_tools, settings.deny_tools):
                continue
            try:
                declaration = declare(connection.name, tool, research=settings.research,
                                      writes_files=settings.writes_files)
            except UnusableSchema as error:
                skipped.append(f"{tool.name}: {error}")
                continue
            if self.denied(declaration.name):
                continue  # the user's own rule: left out silently, and not counted against max_tools
            if any(other.name == declaration.name for other in declared):
                skipped.append(f"{tool.name}: its name clashes with another tool's once made fit for models")
                continue
            declared.append(declaration)
        self._offered[connection.name] = (connection, declared)
        if skipped and skipped != connection.status.skipped:
            self.notify(f"MCP server '{connection.name}': left out the tool{'s' if len(skipped) > 1 else ''} "
                        + "; ".join(skipped))
        connection.status.skipped = skipped
        self._fill()
        if restarted and connection.status.restarts:
            self.notify(f"MCP server '{connection.name}' restarted ({connection.status.tools} tools)")

    def _fill(self) -> None:
        """Offer every server's tools, within the most a request may carry (``max_tools``)."""
        for names in self._names.values():
            for name in names:
                self.registry.remove(name)
        wanted = {server: len(declared) for server, (_, declared) in self._offered.items()}
        if self.max_tools is None:
            kept = wanted
        else:
            kept = share(self.max_tools - len(self.registry.names), wanted)
        for server, (connection, declared) in sorted(self._offered.items()):
            offered_now = declared[: kept[server]]
            for declaration in offered_now:
                self.registry.add(declaration(connection))
            self._names[server] = [declaration.name for declaration in offered_now]
            connection.status.tools = len(offered_now)
            cut = len(declared) - len(offered_now)
            connection.status.cut = cut
            if cut and self._told_cut.get(server) != cut:
                first = declared[len(offered_now)].remote_name
                self.notify(f"MCP server '{server}': {cut} of its {len(declared)} tools left out (from {first} on): "
                            f"a request carries at most {self.max_tools} tools (OpenAI's limit, [mcp] max_tools), "
                            f"agentcli's own and every server's together; choose the ones you need with "
                            f"allow_tools or deny_tools in [mcp.servers.{server}]")
            self._told_cut[server] = cut

    def tools_of(self, server: str) -> list[type[McpTool]]:
        """The declarations of a server's offered tools."""
        declarations = self.registry.declarations
        found = [declarations.get(name) for name in self._names.get(server, [])]
        return [tool for tool in found if tool is not None and issubclass(tool, McpTool)]

    def connection(self, server: str) -> Connection | None:
        return next((c for c in self.connections if c.name == server), None)

    async def aclose(self) -> None:
        """Stop every server and wait until their processes are gone."""
        if self._startup is not None and not self._startup.done():
            self._startup.cancel()
        await asyncio.gather(*(connection.close() for connection in self.connections), return_exceptions=True)

    def close_soon(self) -> None:
        """Stop every server without waiting (from synchronous code, such as ``Session.close``).

        The event loop finishes each shutdown (closing stdin, then killing the process group);
        ``asyncio.run`` waits for those tasks before it returns, so no server outlives agentcli.
        """
        if self._startup is not None and not self._startup.done():
            self._startup.cancel()
        for connection in self.connections:
            connection.close_soon()


def import_sdk() -> None:
    """Import the parts of the ``mcp`` SDK a connection uses (blocking: call it in a thread)."""
    import jsonschema.validators  # type: ignore[import-untyped]  # noqa: F401 - the schema checks
    import mcp.client.sse
    import mcp.client.stdio
    import mcp.client.streamable_http
    import mcp.shared.exceptions  # noqa: F401

    from agentcli.mcp.sdk_log import route_sdk_logs

    route_sdk_logs()
