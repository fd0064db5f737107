"""A finished agent message is drawn by one widget that looks exactly like the Markdown widget."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from textual.app import App
from textual.containers import VerticalScroll
from textual.widget import Widget

from agentcli.tui.themes import ROLE_DEFAULTS
from agentcli.tui.widgets._agent_block import AgentBlock, FinishedAgentBlock, finished_block
from tests.tui.helpers import BlockHost, drain

SAMPLES = [
    "Done.",
    "The bug is in `words()`:\n\n- it splits on single spaces\n- so runs of spaces make empty words\n\n"
    "Splitting with a regular expression fixes both.",
    "Here is what I found in **12**:\n\n- the function splits on spaces\n- so runs of spaces make empty words\n\n"
    "The fix is a regular expression.",
    "A *long* paragraph that wraps " + "over and over, with ~~struck~~ and `code` words, " * 6,
    "1. first step, which is long enough to wrap onto a second line when the block is narrow enough\n"
    "2. second\n3. third\n4. fourth\n5. fifth\n6. sixth\n7. seventh\n8. eighth\n9. ninth\n10. tenth",
    "- outer\n  - inner, long enough to wrap when the window is narrow, and then some more words\n"
    "    - innermost\n- back out\n\n  with a second paragraph\n\nafter",
    "3. starts at three\n4. four\n\n* a new list",
    "line one  \nline two after a hard break\nand a soft one",
    "# The title\n\nSome text.\n\n## Part two, with a heading long enough to wrap when the window is narrow\n\n"
    "### Three\n\n#### Four\n\n##### Five *em*\n\n###### Six `code`\n\n- a list\n\n# Last",
    "Code:\n\n```python\ndef words(text):\n    return re.split(r'\\s+', text)  # a comment long enough to be clipped at 60\n```\n\n"
    "```\nplain\n```\n\n- after\n\n```js\nlet x = 1;\n```",
    "```python\nx = 1\n\n\ty = 2\n```\n\n    indented code\n\n## Heading after code\n\n```rust\nfn main() {}\n```\n\ntext",
    "Results:\n\n| test | time |\n|---|--:|\n| `words` | 1.2 s |\n| **split** | 0.3 s |\n\nAll pass.",
    "## Table\n\n| a header long enough to wrap when the window is narrow | b |\n|:-:|---|\n"
    "| 1 | a cell with *many* words that wraps over several lines when it has to, and then some more |\n"
    "| | empty on the left |\n| ｗｉｄｅ 字 | x |\n\n- a list after\n\n| one |\n|---|\n| 1 |",
    "| a | b | c | d | e | f | g |\n|---|---|---|---|---|---|---|\n"
    "| supercalifragilistic | expialidocious | antidisestablishmentarianism | x | y | z | w |",
]


class Pair(App[None]):
    """The same text as a Markdown AgentBlock and as a FinishedAgentBlock, in two columns."""

    CSS = "Horizontal { height: auto; } VerticalScroll { width: 1fr; height: 1fr; }"

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def compose(self) -> Iterable[Widget]:
        with BlockHost():
            with VerticalScroll(id="left"):
                yield AgentBlock(self.text, classes="-cont")
            with VerticalScroll(id="right"):
                yield finished_block(self.text, classes="-cont")


def lines(app: App[None], column: str) -> list[list[tuple[str, str]]]:
    """Each screen line of a column as runs of (text, style)."""
    container = app.query_one(f"#{column}")
    region = container.content_region
    strips = app.screen._compositor.render_strips()
    rows = []
    for strip in strips[region.y : region.bottom]:
        row: list[tuple[str, str]] = []
        for segment in strip.crop(region.x, region.right):
            if not segment.text:
                continue  # an empty segment shows nothing, whatever its style
            style = str(segment.style)
            if row and row[-1][1] == style:  # how a line is cut into segments is not visible
                row[-1] = (row[-1][0] + segment.text, style)
            else:
                row.append((segment.text, style))
        rows.append(row)
    return rows


@pytest.mark.parametrize("width", [60, 100, 160])
@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
@pytest.mark.parametrize("text", SAMPLES)
async def test_a_finished_block_looks_like_the_markdown_widget(text: str, width: int, theme: str) -> None:
    app = Pair(text)
    async with app.run_test(size=(width, 40)) as pilot:
        app.theme = theme
        await drain(pilot)  # the stylesheet is refreshed for the theme in a queued callback
        assert isinstance(app.query_one("#right").children[0], FinishedAgentBlock)
        assert lines(app, "right") == lines(app, "left")
        left, right = (app.query_one(f"#{c}").children[0] for c in ("left", "right"))
        assert right.size == left.size
        assert right.source == left.source == text


def test_other_blocks_stay_markdown() -> None:
    for text in ["- # heading in a list", "- ```\n  code in a list\n  ```", "- | a |\n  |---|\n  | 1 |", "> quote", "---",
                 "- \n- empty"]:
        assert type(finished_block(text)) is AgentBlock


async def test_code_under_an_ansi_theme_stays_markdown() -> None:
    """An ANSI theme (``ansi_color`` left unset, the theme decides) draws fences the ANSI way,
    which only Markdown does: a finished message with code stays an AgentBlock there."""
    text = "Code:\n\n```python\nx = 1\n```"
    app = Pair("")
    async with app.run_test(size=(100, 40)) as pilot:
        app.theme = "ansi-dark"
        await pilot.pause()
        assert app.ansi_color is None and app.native_ansi_color
        assert type(finished_block(text)) is AgentBlock
        assert type(finished_block("No code here.")) is FinishedAgentBlock


class LivePair(Pair):
    """Markdown on the left; on the right, the widget a streamed chunk is drawn by, appended to."""

    def compose(self) -> Iterable[Widget]:
        from agentcli.tui.widgets._live_block import LiveAgentBlock

        with BlockHost():
            with VerticalScroll(id="left"):
                yield AgentBlock(self.text, classes="-cont")
            with VerticalScroll(id="right"):
                yield LiveAgentBlock("", classes="-cont")


@pytest.mark.parametrize("text", [*SAMPLES, "Intro\n\n> a quote that only Markdown draws\n\n| a |\n|---|\n| 1 |"])
async def test_a_streamed_chunk_looks_like_the_markdown_widget_at_every_step(text: str) -> None:
    from agentcli.tui.widgets._live_block import LiveAgentBlock

    app = LivePair(text)
    async with app.run_test(size=(80, 70)) as pilot:  # tall enough for no scrollbar (drawn apart from the text)
        await drain(pilot)
        live = app.query_one(LiveAgentBlock)
        for start in range(0, len(text), 23):
            await live.append(text[start : start + 23])
        await drain(pilot)
        assert live.source == text
        assert lines(app, "right") == lines(app, "left")
        assert live.flat == (finished_block(text).__class__ is FinishedAgentBlock)
        assert live.flat == (not live.children), "drawn flat, or by Markdown's widgets, never both"


@pytest.mark.parametrize("text", [sample for sample in SAMPLES if "|---" in sample])
async def test_a_finished_table_looks_like_the_markdown_widget_under_an_ansi_theme(text: str) -> None:
    app = Pair(text)
    async with app.run_test(size=(100, 40)) as pilot:
        app.theme = "ansi-dark"
        await drain(pilot)
        assert isinstance(app.query_one("#right").children[0], FinishedAgentBlock)
        assert lines(app, "right") == lines(app, "left")


@pytest.mark.parametrize("text", [sample for sample in SAMPLES if "#" in sample or "```" in sample or "|---" in sample])
async def test_styles_read_from_the_shared_host_follow_a_theme_switch(text: str) -> None:
    """A finished block's component classes live on the stream's one ``BlockStyles``: after a
    switch between two dark themes (its pseudo-classes unchanged) and to a light one, it is drawn
    with the new styles, as the Markdown widget beside it is, and has none of its own."""
    app = Pair(text)
    async with app.run_test(size=(100, 40)) as pilot:
        await drain(pilot)
        right = app.query_one("#right").children[0]
        assert isinstance(right, FinishedAgentBlock) and not right._component_styles
        before = lines(app, "right")
        for theme in ("gruvbox", "textual-light"):
            app.theme = theme
            await drain(pilot)
            assert lines(app, "right") == lines(app, "left"), theme
        assert lines(app, "right") != before
