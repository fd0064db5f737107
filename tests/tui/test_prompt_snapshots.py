"""Visual snapshots of the prompt's new parts at 80x24: the slash menu, the help screen, a paste
chip with a message queued while the agent works. Same fixtures as test_snapshots.py (frozen
clocks, fixed session id, no cursor blink)."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.pilot import Pilot

from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from agentcli.tui.help import HelpScreen
from tests.tui.helpers import (
    GatedModel,
    drain,
    make_app,
    make_session,
    recording,
    screen_settled,
    wait_for,
    wait_idle,
)

DONE = recording(("Done.", [("complete", {"summary": "ok"})]))


async def ready(pilot: Pilot) -> AgentApp:
    app = pilot.app
    assert isinstance(app, AgentApp)
    app.prompt.input.cursor_blink = False
    await wait_for(pilot, lambda: app.session_ready and app.prompt.history is not None)
    await wait_for(pilot, lambda: screen_settled(app), what="the footer")
    app.prompt.input.focus()
    return app


def test_slash_menu_at_80x24(project: Path, snap_compare) -> None:
    """You should see the prompt holding "/co" with the menu above it listing /compact and /cost,
    each with what it does, the first highlighted; the footer shows ^q Quit and f1 Help."""

    async def typed(pilot: Pilot) -> None:
        app = await ready(pilot)
        await pilot.press("/", "c", "o")
        await wait_for(pilot, lambda: app.prompt.menu.is_open)
        await drain(pilot)

    app = make_app(project, make_session(project, ReplayModel(DONE)))
    assert snap_compare(app, terminal_size=(80, 24), run_before=typed)


def test_help_at_80x24(project: Path, snap_compare) -> None:
    """You should see the help over the app: "Keys" with enter, ctrl+j, ctrl+o, up/down, ctrl+r, /,
    @path, !command… each with its meaning wrapped under itself, in a box that says esc closes."""

    async def helped(pilot: Pilot) -> None:
        app = await ready(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await drain(pilot)

    app = make_app(project, make_session(project, ReplayModel(DONE)))
    assert snap_compare(app, terminal_size=(80, 24), run_before=helped)


def test_paste_chip_and_queued_message(project: Path, snap_compare) -> None:
    """You should see the agent mid-reply, "» queued: check the README too   (esc takes it back)"
    above the prompt, and in the prompt "Also:" then a chip "[pasted 30 lines #1]" on the next line."""
    model = GatedModel(recording(("Looking at the files first, then the tests.", [("list_files", {})]),
                                 ("Done.", [("complete", {"summary": "ok"})])), gate_after=10)

    async def queued(pilot: Pilot) -> None:
        app = await ready(pilot)
        await wait_for(pilot, lambda: model.reached_gate)
        await pilot.press(*"check the README too", "enter")
        await wait_for(pilot, lambda: app.prompt.has_class("-queued"))
        await pilot.press(*"Also:", "ctrl+j")
        app.prompt.input.post_message(events.Paste("\n".join(f"row {n}" for n in range(30))))
        await wait_for(pilot, lambda: "[pasted 30 lines #1]" in app.prompt.input.text)
        await drain(pilot)

    app = make_app(project, make_session(project, model), initial_prompt="look around")
    assert snap_compare(app, terminal_size=(80, 24), run_before=queued)


async def test_escape_closes_the_menu_without_pausing(project: Path) -> None:
    model = GatedModel(recording(("Working through the files now.", [("list_files", {})]),
                                 ("Done.", [("complete", {"summary": "ok"})])), gate_after=10)
    app = make_app(project, make_session(project, model), initial_prompt="go")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: model.reached_gate)
        app.prompt.input.focus()
        await pilot.press("/")
        await wait_for(pilot, lambda: app.prompt.menu.is_open)
        await pilot.press("escape")
        await drain(pilot)
        assert not app.prompt.menu.is_open
        assert app.view is not None and app.view.waiting_for is None, "the agent still works"
        model.gate.set()
        await wait_idle(pilot, app)  # the run ends before the app does
