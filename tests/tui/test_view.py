"""The TUI shows the session's own view: resumed sessions open where they stopped, a new session
shows its first phase, and a new session starts with a clean prompt."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from agentcli.config import Settings
from agentcli.llm.replay import ReplayModel
from agentcli.llm.types import ModelRequest, StreamItem
from agentcli.tui.widgets import NoticeBlock
from tests.tui.helpers import (
    logged_then_resumed,
    make_app,
    make_session,
    recording,
    wait_for,
    write_recording,
)
from tests.tui.test_state_graph import styled

ASKS = recording(
    ("One question first.", [("clarify", {"question": "Which style?", "options": ["tabs", "spaces"]})]),
    ("Thanks.", [("complete", {"summary": "used spaces"})]),
)
PAUSES = recording(
    ("I need a review first.", [("pause", {"reason": "need a review"})]),
    ("Reviewed, done.", [("complete", {"summary": "finished after the review"})]),
)
NEEDS_APPROVAL = recording(
    ("Running the tests.", [("bash", {"command": "echo 4 passed"})]),
    ("They pass.", [("complete", {"summary": "tests pass"})]),
)


def lit(app: object) -> set[str]:
    return set(app.graph.configuration)  # type: ignore[attr-defined]


async def test_resumed_into_a_question_the_first_answer_goes_through(project: Path, tmp_path: Path) -> None:
    """`agentcli resume --last` after a clarify (exit 3): the TUI waits for the answer."""
    session = await logged_then_resumed(project, ASKS, tmp_path / "rec.json", "format it")
    app = make_app(project, session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the resumed session")
        assert app.status.state == "awaitingClarification", "the header says where the session is"
        assert "awaitingClarification" in lit(app) and "idle" not in lit(app)
        assert app.prompt.mode == "answer" and app.prompt.question is not None
        assert "Which style?" in app.query_one("#question-text").render().plain
        await pilot.click("#prompt-input")
        asked = session.last_turn  # the resumed turn's end (clarify): the answer starts another
        await pilot.press("2", "enter")
        await wait_for(pilot, lambda: session.last_turn is not asked, what="the turn the answer starts to end")
        assert session.last_turn is not None and session.last_turn.outcome == "completed"
        assert not [n for n in app._notifications if n.severity == "warning"], "the answer was not refused"


async def test_resumed_into_a_pause_ctrl_s_resumes_it(project: Path, tmp_path: Path) -> None:
    """A paused session (exit 5) opens paused: the hint says so and ctrl+s reads Resume."""
    session = await logged_then_resumed(project, PAUSES, tmp_path / "rec.json", "change it")
    app = make_app(project, session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the resumed session")
        assert app.status.state == "paused" and "paused" in lit(app)
        assert app.prompt.mode == "guidance"
        assert "need a review" in app.prompt.hint and "ctrl+s resumes" in app.prompt.hint
        assert app.check_action("resume", ()) is True and app.check_action("pause", ()) is False
        paused = session.last_turn
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: session.last_turn is not paused, what="the resumed turn to end")
        assert session.last_turn is not None and session.last_turn.reason == "finished after the review"


async def test_resumed_into_an_approval_y_runs_the_call(project: Path, tmp_path: Path) -> None:
    """A call waiting for approval (exit 5) opens as the approval prompt, and y runs it."""
    session = await logged_then_resumed(project, NEEDS_APPROVAL, tmp_path / "rec.json", "run the tests",
                                        permission_mode="ask")
    app = make_app(project, session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the resumed session")
        assert app.status.state == "awaitingPermission" and "awaitingPermission" in lit(app)
        assert app.prompt.mode == "permission" and "echo 4 passed" in app.query_one("#question-text").render().plain
        await pilot.click("#prompt-input")
        waiting = session.last_turn  # the resumed turn's end (approval): y runs the call in another
        await pilot.press("y", "enter")
        await wait_for(pilot, lambda: session.last_turn is not waiting, what="the approved turn to end")
        assert session.last_turn is not None and session.last_turn.outcome == "completed"


async def test_a_new_plan_build_session_is_in_its_first_phase_only(project: Path, tmp_path: Path) -> None:
    """The header and the graph show plan.analyze, not every phase marked initial."""
    session = make_session(project, ReplayModel(ASKS), workflow="plan-build")
    app = make_app(project, session)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert app.status.phase == "plan.analyze"
        phases = {state for state in lit(app) if state.startswith("phase_")}
        assert phases == {"phase_plan", "phase_plan__analyze"}
        assert app.graph.configuration == session.view.configuration
        drawn = app.graph.render()
        assert "reverse" in styled(drawn, "[ analyze ]") and "reverse" not in styled(drawn, "[ implement ]")


class Unanswering:
    """A model client that ends its stream without a response: the turn ends in an error."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        return
        yield  # pragma: no cover - makes this an async generator


async def test_ctrl_n_starts_with_a_clean_prompt(project: Path, tmp_path: Path) -> None:
    model = write_recording(tmp_path / "rec.json", ASKS)
    session = make_session(project, Unanswering(), model=model)
    app = make_app(project, session, settings=Settings(model=model), initial_prompt="go")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: session.last_turn is not None, what="the turn to fail")
        await wait_for(pilot, lambda: app.prompt.hint.startswith("✗"), what="the error hint")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: app.session is not session and app.session_ready, what="the new session")
        assert app.prompt.hint == "" and app.prompt.mode == "task"
        assert not app.query("#prompt-hint").first().display
        assert not app.query(NoticeBlock)
