"""A chunk being streamed into repaints only what changed, and what it shows is never stale."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from textual.app import App
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Markdown

from agentcli.tui.themes import ROLE_DEFAULTS
from agentcli.tui.widgets._agent_block import finished_block
from agentcli.tui.widgets._live_block import LiveAgentBlock
from tests.tui.helpers import BlockHost, drain
from tests.tui.test_finished_blocks import SAMPLES, lines

STREAMED = [
    *(sample for sample in SAMPLES if "|---" in sample or "- " in sample or "```" in sample),
    "A paragraph that grows word by word " + "and wraps over several lines as it does, " * 5 + "\n\nthen another.",
]


class Side(App[None]):
    """A chunk being streamed into on the right; on the left, the same text so far, drawn anew."""

    CSS = "Horizontal { height: auto; } VerticalScroll { width: 1fr; height: 1fr; }"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def compose(self) -> Iterable[Widget]:
        with BlockHost():
            yield VerticalScroll(id="left")
            with VerticalScroll(id="right"):
                yield LiveAgentBlock("", classes="-cont")


@pytest.mark.parametrize("text", STREAMED)
async def test_every_step_of_a_stream_shows_what_a_fresh_block_would(text: str) -> None:
    """Lines kept from the previous render and a repaint of only the changed ones: after each
    append the screen is what a block drawn from scratch with the text so far shows."""
    app = Side()
    async with app.run_test(size=(90, 70)) as pilot:  # tall enough for no scrollbar
        await drain(pilot)
        live = app.query_one(LiveAgentBlock)
        left = app.query_one("#left", VerticalScroll)
        for end in range(9, len(text) + 9, 9):
            await live.append(text[end - 9 : end])
            await left.remove_children()
            assert live.source == text[:end]
            await left.mount(finished_block(live.shown, classes="-cont"))
            await drain(pilot)
            assert lines(app, "right") == lines(app, "left"), f"after {text[:end]!r}"
        assert live.shown == text


async def test_a_line_that_is_still_arriving_waits_rather_than_turning_the_chunk_into_markdown() -> None:
    """A list's next "-" before its words is an empty item for a moment, which only Markdown
    draws: the line is held back until it ends, and the chunk stays one widget."""
    app = Side()
    async with app.run_test(size=(90, 30)) as pilot:
        live = app.query_one(LiveAgentBlock)
        await live.append("- one\n-")
        assert live.flat and live.shown == "- one\n"
        await live.append(" two\n")
        assert live.flat and live.shown == live.source == "- one\n- two\n"
        await live.append("-")
        mounted_again = LiveAgentBlock(live.source)  # as the window mounts a chunk still streaming
        assert mounted_again.flat and mounted_again.shown == "- one\n- two\n"
        live.stream_ended()  # it ended there: Markdown draws the empty item
        await drain(pilot)
        assert not live.flat and live.shown == live.source
        assert len(live.query("MarkdownBullet")) == 3


async def test_a_chunk_that_turns_into_markdown_keeps_its_earlier_blocks_as_it_streams_on() -> None:
    # A quote in a list item: Markdown draws the chunk from the line that ends the quote on.
    text = "- outer\n  - inner\n- item with a quote:\n\n  > only Markdown draws this\n- after\n- more"
    app = Side()
    async with app.run_test(size=(90, 40)) as pilot:
        live = app.query_one(LiveAgentBlock)
        for end in range(5, len(text) + 5, 5):
            await live.append(text[end - 5 : end])
        await drain(pilot)
        assert not live.flat
        left = app.query_one("#left", VerticalScroll)
        await left.mount(finished_block(text, classes="-cont"))
        await drain(pilot)
        assert lines(app, "right") == lines(app, "left")


async def test_an_append_that_keeps_the_height_repaints_from_the_changed_part_down() -> None:
    app = Side()
    async with app.run_test(size=(90, 30)) as pilot:
        live = app.query_one(LiveAgentBlock)
        await live.append("# Title\n\nfirst paragraph\n\nsecond")
        await drain(pilot)
        calls: list[tuple[tuple[Region, ...], bool]] = []
        original = live.refresh

        def spy(*regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Widget:
            calls.append((regions, layout))
            return original(*regions, repaint=repaint, layout=layout, recompose=recompose)

        live.refresh = spy  # type: ignore[method-assign]
        await live.append(" word")
        # The title (a margin of 2, itself) and the first paragraph (a gap, itself) are kept: from
        # line 5 down (the gap, the last paragraph, the margin under it) is repainted, no layout.
        assert calls == [((Region(0, 5, live.content_size.width, 3),), False)]
        calls.clear()
        await live.append("\n\nthird")  # a new paragraph: taller
        # Laid out again, whole (a timer may ask once more before the first is done: Textual
        # merges them).
        assert calls and set(calls) == {((), True)}
        await drain(pilot)
        assert live.source.endswith("third")


async def test_the_kept_lines_go_when_the_chunk_is_streamed_and_on_a_theme_change() -> None:
    from agentcli.tui.widgets._agent_block import SlicedStream

    app = Side()
    async with app.run_test(size=(90, 30)) as pilot:
        live = app.query_one(LiveAgentBlock)
        await live.append("- one\n- two\n\nsome text")
        await drain(pilot)
        before = lines(app, "right")
        app.theme = "textual-light"
        await drain(pilot)
        after = lines(app, "right")
        assert after != before  # the bullets and text take the light theme's colours
        left = app.query_one("#left", VerticalScroll)
        await left.mount(finished_block(live.source, classes="-cont"))
        await drain(pilot)
        assert after == lines(app, "left")
        stream = SlicedStream(live)
        stream.write(" and more")
        stream.finish()
        await stream.wait()
        assert live._part_cache is None
        await drain(pilot)
        assert live.source.endswith("and more")
        assert isinstance(live, Markdown)
