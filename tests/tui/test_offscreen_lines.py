"""Blocks far from the view let go of the lines they drew, and draw the same ones when scrolled back."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import App
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from agentcli.tui.themes import ROLE_DEFAULTS
from agentcli.tui.widgets._agent_block import AgentBlock, finished_block
from agentcli.tui.widgets._offscreen import KEEP_ABOVE, drop_far_lines, drop_lines, forget_lines
from tests.tui.helpers import BlockHost, drain
from tests.tui.test_finished_blocks import SAMPLES, lines


class Tall(App[None]):
    """Every sample, as finished blocks, Markdown widgets and plain text, far taller than the screen."""

    CSS = "VerticalScroll { height: 1fr; }"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def compose(self) -> Iterable[Widget]:
        with BlockHost(), VerticalScroll(id="stream"):
            for text in SAMPLES:
                yield finished_block(text)
                yield AgentBlock(text)
                yield Static(text.splitlines()[0])


def held(widget: Widget) -> int:
    return sum(len(node._render_cache.lines) + len(node._styles_cache._cache)
               for node in widget.walk_children(Widget, with_self=True))


async def test_a_block_whose_lines_were_dropped_draws_the_same_lines_when_scrolled_back() -> None:
    app = Tall()
    async with app.run_test(size=(90, 30)) as pilot:
        stream = app.query_one("#stream", VerticalScroll)
        blocks = list(stream.children)
        shown: list[list[list[tuple[str, str]]]] = []
        for block in blocks:  # each block on screen in turn, as drawn the first time
            stream.scroll_to_widget(block, animate=False, top=True)
            await drain(pilot)
            shown.append(lines(app, "stream"))
        stream.scroll_end(animate=False)
        await drain(pilot)
        assert drop_far_lines(stream) > 0
        kept = stream.region.height * KEEP_ABOVE
        far = [block for block in blocks if block.region.bottom < stream.region.y - kept - 1]
        near = [block for block in blocks if block.region.bottom > stream.region.y - kept + 1]
        assert far and all(held(block) == 0 for block in far), "the blocks far above let go of their lines"
        assert all(held(block) > 0 for block in near if block.region.overlaps(stream.region)), "those shown keep theirs"
        for block, before in zip(blocks, shown, strict=True):
            stream.scroll_to_widget(block, animate=False, top=True)
            await drain(pilot)
            assert lines(app, "stream") == before, f"{block!r} drew different lines after dropping them"


async def test_a_block_dropped_while_on_screen_is_drawn_the_same_when_shown_again() -> None:
    app = Tall()
    async with app.run_test(size=(90, 30)) as pilot:
        await drain(pilot)
        before = lines(app, "stream")
        stream = app.query_one("#stream", VerticalScroll)
        block = stream.children[0]
        assert drop_lines(block) and held(block) == 0
        stream.scroll_to(y=block.outer_size.height + 40, animate=False)
        await drain(pilot)
        stream.scroll_home(animate=False)
        await drain(pilot)
        assert held(block) > 0 and lines(app, "stream") == before
        assert not drop_lines(Static("never drawn"))


async def test_a_removed_block_keeps_no_styled_lines() -> None:
    """Textual's StylesCache outlives its widget in an lru_cache: what it holds is cleared."""
    app = Tall()
    async with app.run_test(size=(90, 30)) as pilot:
        await drain(pilot)
        stream = app.query_one("#stream")
        doomed = list(stream.children[:3])
        assert any(block._styles_cache._cache for block in doomed)
        forget_lines(doomed)
        await stream.remove_children(doomed)
        nodes = [node for block in doomed for node in block.walk_children(Widget, with_self=True)]
        assert not any(node._styles_cache._cache for node in nodes)
