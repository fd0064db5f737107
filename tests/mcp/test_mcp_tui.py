"""The TUI shows the session's MCP servers in a side pane; servers start once the session is shown."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from agentcli.config_mcp import McpServerSettings, McpSettings
from agentcli.llm.replay import ReplayModel
from agentcli.mcp import Status, tool_name
from agentcli.tui.help import HelpScreen
from agentcli.tui.widgets._mcp import server_lines
from tests.mcp.conftest import time_server
from tests.tui.conftest import home, project
from tests.tui.helpers import make_app, make_session, recording, wait_for

__all__ = ["home", "project"]  # the TUI tests' fixtures: a home folder with the demo project


def _pane_text(app: object) -> str:
    pane = app.mcp_pane  # type: ignore[attr-defined]
    return str(pane._title.render()) + "\n" + str(pane._body.render())


async def test_the_mcp_pane_lists_servers_with_their_state(project: Path) -> None:
    mcp = McpSettings(servers={"time": time_server(), "gone": McpServerSettings(command="no-such-mcp-server-here")})
    session = make_session(project, ReplayModel(recording(("Done.", [("complete", {"summary": "ok"})]))), mcp=mcp)
    session.use_mcp()
    app = make_app(project, session)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_for(pilot, lambda: app.session_ready, what="the session")
            pane = app.query_one("#mcp-pane")
            await wait_for(pilot, lambda: pane.display and "1/2 ready" in _pane_text(app), what="the servers")
            text = _pane_text(app)
            assert "✓ time  2 tools" in text
            assert "✗ gone" in text and "not found" in text
            # Unfolded, the pane lists each server's tools as the model calls them.
            pane.focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: "mcp__time__convert_time" in _pane_text(app), what="the tool list")
            assert "mcp__time__get_current_time" in _pane_text(app)
            # The servers' news is in the stream too.
            assert any("MCP server 'gone' is not available" in str(block.render())
                       for block in app.query("NoticeBlock"))
            # And the help lists the MCP tools with their descriptions.
            await pilot.press("f1")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
            console = Console(width=120, record=True, file=io.StringIO())
            console.print(app.screen.body)  # type: ignore[attr-defined]
            help_text = console.export_text()
            assert "MCP tools" in help_text and "mcp__time__convert_time" in help_text
            assert "Convert time between timezones" in help_text
    finally:
        await session.aclose()


async def test_no_servers_no_pane(project: Path) -> None:
    session = make_session(project, ReplayModel(recording(("Done.", [("complete", {"summary": "ok"})]))),
                           mcp=McpSettings(project_file=False))
    session.use_mcp()
    app = make_app(project, session)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert not app.query_one("#mcp-pane").display


def test_the_pane_says_when_a_server_lost_tools_to_the_limit() -> None:
    servers = [Status("huge", "stdio", "ready", tools=116, cut=96), Status("time", "stdio", "ready", tools=2)]
    lines = server_lines(servers).plain.splitlines()
    assert lines == ["✓ huge  116 tools (96 left out: too many tools)", "✓ time  2 tools"]


def test_unfolded_a_long_named_server_lists_its_tools() -> None:
    long = Status("a-very-long-server-name-that-someone-chose-for-their-setup", "stdio", "ready", tools=1)
    servers = [long, Status("time", "stdio", "ready", tools=2)]
    lines = server_lines(servers, [(tool_name(long.name, "get_time"), "The time")], expanded=True).plain.splitlines()
    assert lines[1].split() == [tool_name(long.name, "get_time"), "The", "time"]
    # The long name is cut, so the counts stay in view.
    assert lines[0] == "✓ a-very-long-server-name…  1 tool" and lines[2] == "✓ time" + " " * 22 + "2 tools"
