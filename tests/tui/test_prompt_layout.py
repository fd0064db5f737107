"""At 80x24: how to quit and get help is on screen, the timeline gets a readable diff preview,
and the highlighted timeline row's #N is readable in every shipped theme."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color

from agentcli.llm.replay import ReplayModel
from agentcli.tui.themes import load_themes
from tests.tui.helpers import drain, make_app, make_session, recording, wait_for, wait_idle

EDITS = recording(
    ("Writing.", [("write_file", {"path": "notes.txt", "content": "".join(f"line {n}\n" for n in range(30))})]),
    ("Done.", [("complete", {"summary": "wrote notes"})]),
)


def _luminance(color: Color) -> float:
    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(a: Color, b: Color) -> float:
    """The WCAG contrast ratio of two opaque colours (1 to 21)."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


async def test_at_80x24_the_footer_says_how_to_quit_and_get_help(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(EDITS)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        await drain(pilot)
        shown = {(b.binding.key, b.binding.description) for b in app.active_bindings.values() if b.binding.show}
        assert ("ctrl+q", "Quit") in shown and ("f1", "Help") in shown, shown
        assert ("ctrl+b", "Side") in shown, "the side panes are one key away"


async def test_at_80x24_a_focused_timeline_gets_at_least_8_rows_of_diff(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(EDITS), snapshots=True, permission_mode="all"),
                   initial_prompt="write notes")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot, app)
        await wait_for(pilot, lambda: len(app.timeline.entries) >= 2, what="the snapshots")
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.timeline.option_list)
        preview = app.query_one("#diff-preview")
        await wait_for(pilot, lambda: preview.size.height >= 8, what="room for the diff")
        assert not app.query_one("#graph-pane").display or app.query_one("#graph-pane").size.height == 0


@pytest.mark.parametrize("theme", sorted(load_themes(None).themes))
async def test_the_highlighted_timeline_number_is_readable_in_every_shipped_theme(project: Path, theme: str) -> None:
    app = make_app(project, make_session(project, ReplayModel(EDITS)), theme=theme, remember_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        assert app.theme == theme
        option_list = app.timeline.option_list
        option_list.focus()
        await drain(pilot)
        style = option_list.get_component_rich_style("option-list--option-highlighted")
        assert style.bgcolor is not None
        tick = Color.parse(app.theme_variables["timeline-tick"])
        ratio = contrast(tick, Color.from_rich_color(style.bgcolor))
        assert ratio >= 4.5, f"#N on the cursor row of {theme}: contrast {ratio:.2f}"
