"""ctrl+c in the TUI: with nothing selected it stops a running agent (as ctrl+s), instead of
Textual's "Do you want to quit?" toast while the agent keeps going."""

from __future__ import annotations

from pathlib import Path

from agentcli.llm.replay import ReplayModel
from tests.tui.helpers import GatedModel, make_app, make_session, recording, wait_for


async def test_ctrl_c_pauses_a_running_agent(project: Path) -> None:
    rec = recording(("A long answer that will be cut off in the middle of a sentence.", [("list_files", {})]))
    model = GatedModel(rec, gate_after=20)
    app = make_app(project, make_session(project, model), initial_prompt="go")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: model.reached_gate, what="mid-stream")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.control_state == "paused", what="paused")
        assert not [n for n in app._notifications if n.title == "Do you want to quit?"]
        model.gate.set()


async def test_ctrl_c_with_nothing_running_says_how_to_quit(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(recording(("Done.", [])))))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: any(n.title == "Do you want to quit?" for n in app._notifications),
                       what="the quit hint")
        assert app.control_state == "idle" and app.is_running
