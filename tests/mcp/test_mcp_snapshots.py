"""A visual snapshot of the mcp servers pane, unfolded, in the app at 120x40 (fixed statuses, so
the picture does not depend on how fast real servers start)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.pilot import Pilot

from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from tests.tui.conftest import home, project
from tests.tui.helpers import drain, make_app, make_session, recording, screen_settled, wait_for

__all__ = ["home", "project"]


@dataclass
class _Server:
    name: str
    state: str
    tools: int = 0
    error: str | None = None
    cut: int = 0

    @property
    def prefix(self) -> str:
        return f"mcp__{self.name}__"


SERVERS = [_Server("git", "ready", 3), _Server("docs", "starting"),
           _Server("db", "failed", error="did not start within 30 s (timeout_s)")]
TOOLS = [("mcp__git__git_status", "Shows the working tree status"), ("mcp__git__git_log", "Shows the commit logs"),
         ("mcp__git__git_commit", "Records changes to the repository")]


def test_mcp_pane_unfolded(project: Path, snap_compare) -> None:
    """You should see, at the top of the side panes (the state graph hidden), "mcp servers (1/3
    ready)": git with
    a tick and "3 tools" and its three tools listed under it, docs "starting", and db with a cross
    and its error in the error colour."""

    async def unfolded(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, AgentApp)
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.cursor_blink = False
        app.action_toggle_pane("graph")  # hidden: this picture is about the MCP pane, not the graph
        app.mcp_pane.show(SERVERS, TOOLS)
        app.mcp_pane.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.mcp_pane.expanded and screen_settled(app))
        await drain(pilot)

    app = make_app(project, make_session(project, ReplayModel(recording(("Done.", [("complete", {})])))))
    assert snap_compare(app, terminal_size=(120, 40), run_before=unfolded)
