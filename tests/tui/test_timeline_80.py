"""The timeline at 80x24 (three rows of list): a restore's entry comes into view, selected, and
the footer keeps its essentials whole (``enter`` restores, ``u`` undoes, quit and help)."""

from __future__ import annotations

from pathlib import Path

from textual.css.query import NoMatches
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel

from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from agentcli.tui.screens import ConfirmRestore
from tests.tui.helpers import make_app, make_session, wait_for, wait_idle
from tests.tui.test_restore import EDITS


def footer_words(app: AgentApp) -> list[str]:
    """The footer's keys and labels that are drawn whole, left of the palette key."""
    footer = app.screen.query_one(Footer)
    palette = footer.query_one(".-command-palette", FooterKey)
    whole = []
    for item in footer.query("FooterKey, FooterLabel"):
        if item is palette:
            continue
        assert isinstance(item, FooterKey | FooterLabel)
        assert item.region.right <= palette.region.x, f"{item!r} is cut off or under the palette key"
        whole.append(item.render().plain.strip())
    return whole


def footer_says(app: AgentApp, label: str) -> bool:
    """The footer draws ``label`` whole; False while it is being composed again (no palette key yet)."""
    try:
        return any(word.endswith(label) for word in footer_words(app))
    except NoMatches:
        return False


async def test_a_restore_at_80x24_selects_its_entry_and_the_footer_names_the_keys(project: Path) -> None:
    session = make_session(project, ReplayModel(EDITS), snapshots=True)
    app = make_app(project, session, initial_prompt="fix it")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot, app)
        timeline = app.timeline
        await wait_for(pilot, lambda: len(timeline.entries) >= 3, what="snapshots on the timeline")
        await pilot.press("f2")
        await pilot.pause()
        assert any(word.endswith("Restore") for word in footer_words(app)), "enter restores: the footer says so"

        # Scrub back on purpose: a restore's entry arrives below the three visible rows.
        await pilot.press("home")
        count = len(timeline.entries)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRestore), what="the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: timeline.undo_id is not None and len(timeline.entries) > count,
                       what="the restore's entries")
        newest = len(timeline.entries) - 1
        await wait_for(pilot, lambda: timeline.option_list.highlighted == newest,
                       what="the restore's entry selected")
        option_list = timeline.option_list
        await wait_for(pilot, lambda: option_list.scroll_offset.y + option_list.scrollable_content_region.height
                       > newest >= option_list.scroll_offset.y, what="the restore's entry in view")
        assert timeline.following, "new snapshots are followed again"

        # Timeline focused, an undo available: the essentials are drawn whole.
        await wait_for(pilot, lambda: footer_says(app, "Undo"), what="u in the footer")
        words = footer_words(app)
        for essential in ("Restore", "Undo", "Quit", "Help"):
            assert any(word.endswith(essential) for word in words), (essential, words)
