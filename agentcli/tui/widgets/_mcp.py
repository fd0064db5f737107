"""The MCP servers pane: each server of the session with its state and how many tools it offers.

Hidden while the session has no MCP server. It is redrawn when the session's servers send news
(``Notice(kind="mcp")``: ready, failed, restarted), from the statuses the session hands out.
Focused, enter (or a click) unfolds each server's tools as the model calls them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static

_MARKS = {"ready": ("✓", "$tool-ok"), "failed": ("✗", "$error"), "starting": ("…", "$text-muted"),
          "stopped": ("■", "$text-muted")}


NAME_WIDTH = 24
"""The widest server name shown whole."""


class ServerLine(Protocol):
    """What the pane reads of a server's status (``agentcli.mcp.Status``, via the session)."""

    @property
    def name(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def tools(self) -> int: ...
    @property
    def error(self) -> str | None: ...
    @property
    def prefix(self) -> str:
        """What the names of its tools begin with (``mcp__NAME__``)."""
        ...
    @property
    def cut(self) -> int:
        """Tools left out because a request would carry too many (``[mcp] max_tools``)."""
        ...


def server_lines(servers: Sequence[ServerLine], tools: Sequence[tuple[str, str]] = (),
                 expanded: bool = False) -> Content:
    """One line per server: its mark, its name, and its tool count or what went wrong; unfolded,
    each server's tools (``tools`` as (name, description) pairs) below it."""
    # Names line up, but a long one (.mcp.json names may run to 60 characters) is cut rather than
    # pushing every server's tool count or error out of the pane.
    width = min(max((len(server.name) for server in servers), default=0), NAME_WIDTH)
    lines = []
    for server in servers:
        mark, style = _MARKS.get(server.state, ("?", "$text-muted"))
        if server.state == "ready":
            detail = Content(f"{server.tools} tool{'s' if server.tools != 1 else ''}")
            if server.cut:
                detail = Content.assemble(detail, (f" ({server.cut} left out: too many tools)", "$warning"))
        elif server.state == "failed":
            detail = Content.styled(server.error or "failed", "$error")
        else:
            detail = Content.styled(server.state, "$text-muted")
        name = server.name if len(server.name) <= width else server.name[: width - 1] + "…"
        lines.append(Content.assemble((mark, style), " ", name.ljust(width), "  ", detail))
        if expanded:
            for name, description in tools:
                if name.startswith(server.prefix):
                    lines.append(Content.assemble("   ", (name, "bold"), "  ", (description, "$text-muted")))
    return Content("\n").join(lines)


class McpPane(Vertical, can_focus=True):
    """The session's MCP servers, one line each; unfolded, their tools too."""

    DEFAULT_CSS = """
    McpPane { height: auto; max-height: 25%; }
    McpPane.-empty { display: none; }
    McpPane.-expanded { max-height: 60%; overflow-y: auto; }
    McpPane > #mcp-servers { height: auto; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_tools", "Tools", tooltip="Show or hide each MCP server's tools",
                id="agentcli.mcp.tools"),
    ]

    expanded: var[bool] = var(False, toggle_class="-expanded")
    """Each server's tools are listed under it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="pane -empty")
        self._title = Static("mcp servers", classes="pane-title")
        self._body = Static("", id="mcp-servers")
        self._servers: Sequence[ServerLine] = ()
        self._tools: Sequence[tuple[str, str]] = ()

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._body

    def show(self, servers: Sequence[ServerLine], tools: Sequence[tuple[str, str]] = ()) -> None:
        """Draw ``servers`` (and their ``tools``, for unfolding); the pane hides when there are none."""
        self._servers, self._tools = servers, tools
        self.set_class(not servers, "-empty")
        ready = sum(1 for server in servers if server.state == "ready")
        self._title.update(f"mcp servers ({ready}/{len(servers)} ready)" if servers else "mcp servers")
        self._body.update(server_lines(servers, tools, self.expanded))

    def action_toggle_tools(self) -> None:
        self.expanded = not self.expanded

    def watch_expanded(self) -> None:
        self._body.update(server_lines(self._servers, self._tools, self.expanded))

    def on_click(self) -> None:
        self.action_toggle_tools()
