"""The side panes' overlay, esc and ctrl+s, and where notifications go, as a user in a small and a
large terminal meets them (a review at 80x24 and 200x50 found each of these)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets._toast import Toast

from agentcli.config import data_home
from agentcli.events import ClarificationAnswered
from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from tests.tui.helpers import GatedModel, drain, logged_outcomes, make_app, make_session, recording, wait_for, wait_idle

STREAMING = recording(
    ("A long answer that keeps streaming while the user looks at the side panes.", [("list_files", {})]),
    ("Done.", [("complete", {"summary": "done"})]),
)
QUESTION = recording(
    ("One thing first.", [("clarify", {"question": "Which database should I use?",
                                       "options": ["postgres", "sqlite"]})]),
    ("Thanks.", [("complete", {"summary": "used sqlite"})]),
)


def above_prompt(app: AgentApp) -> bool:
    """The overlay, when shown, ends above the prompt's first row (the question, the input…)."""
    sidebar = app.query_one("#sidebar")
    return not sidebar.display or sidebar.region.bottom <= app.prompt.region.y


async def test_at_80x24_the_overlay_stays_above_the_prompt_and_closes_on_the_way_back(project: Path) -> None:
    """f2, f4, then typing: the overlay covered the right 50 columns of the prompt, and esc on the
    timeline paused the agent instead of closing it."""
    model = GatedModel(STREAMING, gate_after=20)
    app = make_app(project, make_session(project, model), initial_prompt="go")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: model.reached_gate and app.session_ready, what="mid-stream")
        sidebar = app.query_one("#sidebar")
        await pilot.press("f2")
        await wait_for(pilot, lambda: sidebar.display and app.focused is app.timeline.option_list,
                       what="the timeline in the overlay")
        assert above_prompt(app)
        await pilot.press("f4")
        await wait_for(pilot, lambda: not sidebar.display, what="the overlay to close with f4")
        assert app.focused is app.prompt.input

        # Shown without the focus (ctrl+b), the overlay leaves every row of the prompt free, however
        # tall the prompt grows as the user types.
        await pilot.press("ctrl+b")
        await pilot.press(*"a-long-message-that-reaches-across-the-whole-prompt", "ctrl+j", "x", "ctrl+j", "y")
        await wait_for(pilot, lambda: app.prompt.input.value.endswith("x\ny"), what="the typed lines")
        await drain(pilot)
        assert sidebar.display and app.focused is app.prompt.input
        await wait_for(pilot, lambda: above_prompt(app), what="the overlay to end above the grown prompt")
        assert app.prompt.region.height >= 3 and app.prompt.region.bottom <= app.screen.region.bottom - 1

        # esc in a pane goes back to the prompt and closes the overlay; the agent goes on.
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.focused is app.tools.option_list, what="the tool list")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not sidebar.display and app.focused is app.prompt.input,
                       what="the overlay to close with esc")
        await drain(pilot)
        assert app.view is not None and app.view.running, "esc in a pane never pauses the agent"

        # A click on the prompt closes it too.
        await pilot.press("f2")
        await wait_for(pilot, lambda: sidebar.display and app.focused is app.timeline.option_list)
        await pilot.click("#prompt-input")
        await wait_for(pilot, lambda: not sidebar.display and app.focused is app.prompt.input,
                       what="the overlay to close on a click in the prompt")
        model.gate.set()


async def test_at_80x24_a_pane_key_on_an_eclipsed_pane_moves_the_overlay_to_it(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(STREAMING)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        graph = app.query_one("#graph-pane")
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.timeline.option_list and not graph.display)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: graph.display and app.focused is app.graph, what="the graph, focused")
        assert not app.query_one("#timeline-pane").display, "the pane with the focus takes the overlay"
        await pilot.press("ctrl+g")  # hiding the focused pane gives the focus back to the prompt
        await wait_for(pilot, lambda: app.focused is app.prompt.input and not app.query_one("#sidebar").display)


async def test_at_80x24_a_pane_key_that_opens_the_overlay_gives_it_the_focus_and_f4_closes_it(project: Path) -> None:
    """ctrl+l opened the overlay with the focus left in the prompt, where esc and f4 did not close it."""
    app = make_app(project, make_session(project, ReplayModel(STREAMING)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        sidebar = app.query_one("#sidebar")
        app.prompt.input.focus()
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: sidebar.display and app.focused is app.timeline.option_list,
                       what="the snapshots pane, focused")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not sidebar.display and app.focused is app.prompt.input, what="closed by esc")
        await pilot.press("ctrl+b")  # shown without the focus
        await wait_for(pilot, lambda: sidebar.display and app.focused is app.prompt.input)
        await pilot.press("f4")
        await wait_for(pilot, lambda: not sidebar.display, what="closed by f4 from the prompt")


async def test_esc_and_ctrl_s_leave_a_waiting_question_answerable(project: Path) -> None:
    """esc while a question waited paused the session: the options went, and ctrl+s then sent the
    draft as guidance without enter, the question never answered."""
    session = make_session(project, ReplayModel(QUESTION))
    answers: list[str] = []
    session.subscribe(lambda event: answers.append(event.answer) if isinstance(event, ClarificationAnswered) else None)
    app = make_app(project, session, initial_prompt="set up storage")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot, app)
        assert app.prompt.mode == "answer"
        await pilot.press(*"second")
        await wait_for(pilot, lambda: app.prompt.input.value == "second", what="the draft")
        assert app.check_action("pause", ()) is None, "Pause shows dimmed: nothing runs"
        await pilot.press("escape")
        await pilot.press("ctrl+s")
        await drain(pilot)
        assert app.view is not None and app.view.waiting_for == "answer"
        assert app.prompt.mode == "answer" and app.query_one("#question").display
        assert "Which database" in app.query_one("#question-text").render().plain
        assert app.prompt.input.value == "second", "the draft stays a draft"
        assert "ctrl+s" not in app.prompt.hint
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.last_turn is not None and session.last_turn.outcome == "completed",
                       what="the answered turn to complete")
    assert answers == ["second"]


async def test_quitting_leaves_a_question_waiting_in_the_log(project: Path) -> None:
    session = make_session(project, ReplayModel(QUESTION), record=True, data_dir=data_home())
    app = make_app(project, session, initial_prompt="set up storage")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot, app)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to exit")
    assert app.return_code == 0
    assert logged_outcomes(session) == [("clarify", "Which database should I use?")], "no pause sets it aside"


def overlaps(a: Region, b: Widget) -> bool:
    return b.display and a.overlaps(b.region)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_notifications_cover_neither_the_prompt_nor_the_focused_pane(
    project: Path, size: tuple[int, int]
) -> None:
    """At 80x24 a warning sat over the right half of the prompt's text, and an /undo notice over
    the timeline's diff preview."""
    app = make_app(project, make_session(project, ReplayModel(STREAMING)))
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        await pilot.press(*"a-draft-as-long-as-the-prompt-is-wide-and-then-a-good-deal-longer")
        app.notify("Unknown theme 'nope'; known: agentcli-dark, agentcli-light", title="Theme",
                   severity="warning")
        await wait_for(pilot, lambda: bool(app.screen.query(Toast)), what="the toast")
        await drain(pilot)
        toast = app.screen.query_one(Toast).region
        assert toast.y >= 1, f"{size}: under the status line"
        assert not overlaps(toast, app.prompt), f"{size}: the toast covers the prompt"
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.timeline.option_list)
        app.notify("No restore to undo.", severity="warning")
        await wait_for(pilot, lambda: len(app.screen.query(Toast)) == 2, what="the second toast")
        await drain(pilot)
        for shown in app.screen.query(Toast):
            assert not overlaps(shown.region, app.query_one("#diff-preview")), f"{size}: over the diff preview"
            assert not overlaps(shown.region, app.prompt), f"{size}: over the prompt"
