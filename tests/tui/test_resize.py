"""Resizing the terminal while the agent streams or waits: from 200 columns to 80 the app crashed
(a frame laid out before the narrow layout hid the side panes left the prompt no column, and
Textual's editor raised wrapping its placeholder to width 0)."""

from __future__ import annotations

from pathlib import Path

from agentcli.llm.replay import ReplayModel
from agentcli.tui.widgets import AgentBlock
from tests.tui.helpers import GatedModel, drain, make_app, make_session, recording, wait_for, wait_idle

LIST_THEN_ASK = recording(
    ("I will list the files; that needs your approval.", [("bash", {"command": "ls"})]),
    ("One question first.", [("clarify", {"question": "Loop or comprehension?",
                                           "options": ["a loop", "a comprehension"]})]),
    ("Done.", [("complete", {"summary": "done"})]),
)
LONG_REPLY = recording(
    ("A reply that keeps streaming while the terminal is resized, " * 6, [("complete", {"summary": "ok"})]),
)


async def test_narrowing_the_terminal_at_an_approval_keeps_the_app_and_its_keys(project: Path) -> None:
    session = make_session(project, ReplayModel(LIST_THEN_ASK), permission_mode="ask")
    app = make_app(project, session, initial_prompt="list the files")
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.prompt.mode == "permission" and app.prompt.permission is not None,
                       what="the approval request")
        await drain(pilot)
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: app.screen.has_class("-narrow") and app.prompt.input.content_size.width > 0,
                       what="the narrow layout")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.prompt.mode == "answer", what="the question after the approved call")
        await pilot.resize_terminal(200, 50)
        await wait_for(pilot, lambda: app.screen.has_class("-roomy"), what="the wide layout")
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: app.screen.has_class("-narrow"), what="narrow again")
        await pilot.press("1", "enter")
        await wait_idle(pilot, app)
        assert session.last_turn is not None and session.last_turn.outcome == "completed"


async def test_narrowing_the_terminal_mid_stream_keeps_the_reply(project: Path) -> None:
    model = GatedModel(LONG_REPLY, gate_after=60)
    app = make_app(project, make_session(project, model), initial_prompt="go")
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: model.reached_gate, what="mid-stream")
        await pilot.press(*"draft")
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: app.screen.has_class("-narrow"), what="the narrow layout")
        model.gate.set()
        await wait_idle(pilot, app)
        assert app.prompt.input.value == "draft", "what was typed stays"
        assert [block.source for block in app.query(AgentBlock)] == [LONG_REPLY.turns[0].text]
