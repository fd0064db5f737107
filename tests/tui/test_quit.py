"""ctrl+q whatever the agent is doing: exit code 0, and the log says the run was paused."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from agentcli.config import data_home
from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from agentcli.tui.widgets import AgentBlock, ToolCallBlock
from tests.tui.helpers import GatedModel, logged_outcomes, make_app, make_session, recording, wait_for

CLOSED = ("paused", "the app was closed")


async def quit_and_wait(pilot: Pilot, app: AgentApp) -> None:
    """Press ctrl+q and let the app finish exiting on its own (not closed by the test harness)."""
    await pilot.press("ctrl+q")
    await wait_for(pilot, lambda: app.return_code is not None, what="the app to exit")


async def test_quit_while_a_reply_streams(project: Path) -> None:
    model = GatedModel(recording(("A long answer that will be cut off in the middle.", [("list_files", {})])),
                       gate_after=20)
    session = make_session(project, model, record=True, data_dir=data_home())
    app = make_app(project, session, initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: model.reached_gate, what="mid-stream")
        await wait_for(pilot, lambda: bool(app.query(AgentBlock)) and bool(app.query_one(AgentBlock).source))
        await quit_and_wait(pilot, app)
    assert app.return_code == 0
    assert logged_outcomes(session) == [CLOSED]


async def test_quit_while_a_command_runs(project: Path) -> None:
    rec = recording(("Running something slow.", [("bash", {"command": "sleep 30"})]))
    session = make_session(project, ReplayModel(rec), record=True, data_dir=data_home())
    app = make_app(project, session, initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.control_state == "executingTool" and bool(app.query(ToolCallBlock)),
                       what="the command to run")
        await quit_and_wait(pilot, app)
    assert app.return_code == 0
    assert logged_outcomes(session) == [CLOSED]


async def test_quit_while_an_approval_waits(project: Path) -> None:
    rec = recording(("Running the tests.", [("bash", {"command": "echo 4 passed"})]))
    session = make_session(project, ReplayModel(rec), record=True, data_dir=data_home(), permission_mode="ask")
    app = make_app(project, session, initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.prompt.mode == "permission", what="the approval request")
        await quit_and_wait(pilot, app)
    assert app.return_code == 0
    assert logged_outcomes(session) == [("approval", "approval needed: Run `echo 4 passed`"), CLOSED]


async def test_quit_when_idle_logs_nothing_more(project: Path) -> None:
    rec = recording(("Done.", [("complete", {"summary": "nothing to do"})]))
    session = make_session(project, ReplayModel(rec), record=True, data_dir=data_home())
    app = make_app(project, session, initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: session.last_turn is not None, what="the turn to end")
        await quit_and_wait(pilot, app)
    assert app.return_code == 0
    assert logged_outcomes(session) == [("completed", "nothing to do")]
