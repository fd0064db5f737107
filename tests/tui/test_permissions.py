"""Approving and denying tool calls from the prompt, against a real Session in ``ask`` mode."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from agentcli.events import PermissionDecided
from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from agentcli.tui.widgets import NoticeBlock
from tests.tui.helpers import drain, make_app, make_session, recording, wait_for, wait_idle

RUN_TESTS = recording(
    ("Running the tests.", [("bash", {"command": "echo 4 passed"})]),
    ("They pass.", [("complete", {"summary": "tests pass"})]),
)


def question_shown(app: AgentApp) -> bool:
    """The approval request is laid out above the prompt, its options listed (clicks land there)."""
    options = app.query_one("#question-options", OptionList)
    return app.query_one("#question").region.height > 0 and options.option_count == 4 and options.region.height > 0


async def test_y_allows_the_call_once(project: Path) -> None:
    session = make_session(project, ReplayModel(RUN_TESTS), permission_mode="ask")
    decided: list[PermissionDecided] = []
    session.subscribe(lambda e: decided.append(e) if isinstance(e, PermissionDecided) else None)
    app = make_app(project, session, initial_prompt="run the tests")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.control_state == "awaitingPermission", what="the approval request")
        await wait_for(pilot, lambda: question_shown(app), what="the request above the prompt")
        await drain(pilot)  # every event so far handled: no pause notice came with it
        assert app.prompt.mode == "permission" and app.prompt.has_class("-permission")
        assert "bash" in app.query_one("#question-text").render().plain
        assert not any("paused" in n.render().plain for n in app.query(NoticeBlock)), "waiting is not a pause"
        await pilot.click("#prompt-input")
        await pilot.press("y", "enter")
        await wait_for(pilot, lambda: session.last_turn is not None and session.last_turn.outcome == "completed",
                       what="completion")
        assert app.calls[next(iter(c.call_id for c in app.calls))].output.strip().startswith("4 passed")
        assert not app.prompt.has_class("-permission")
    assert [(d.allowed, d.scope) for d in decided] == [(True, "once")]


async def test_picking_deny_refuses_the_call(project: Path) -> None:
    session = make_session(project, ReplayModel(RUN_TESTS), permission_mode="ask")
    app = make_app(project, session, initial_prompt="run the tests")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.control_state == "awaitingPermission", what="the approval request")
        await wait_for(pilot, lambda: question_shown(app), what="the request above the prompt")
        app.query_one("#question-options").focus()
        await pilot.press("end", "enter")
        await wait_idle(pilot, app)
        bash = next(c for c in app.calls if c.name == "bash")
        assert bash.status == "error"
        assert any(n.render().plain == "🔒 denied" for n in app.query(NoticeBlock))


async def test_the_tui_asks_by_default(tmp_path: Path) -> None:
    from agentcli.config import Settings

    app = AgentApp(workspace=tmp_path, settings=Settings(model="openai/never-called"), warm_up=False)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session to attach")
        assert app.session is not None and app.session.permission_mode == "ask"
