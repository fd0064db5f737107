"""Paging back through a long history: older blocks are mounted ahead of need, above the view,
without the view moving; every message is shown once, in order; nothing past the oldest."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from textual.app import App
from textual.geometry import Size
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget

from agentcli.events import (
    AssistantMessage,
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UserMessage,
)
from agentcli.tui.calls import ToolCalls
from agentcli.tui.themes import ROLE_DEFAULTS
from agentcli.tui.widgets import Conversation
from agentcli.tui.widgets._anchored import AHEAD, SLICE
from agentcli.tui.widgets._conversation import MAX_MOUNTED
from tests.tui.helpers import drain, frozen_clock, wait_for

NUMBER = re.compile(r"\b(?:question|answer|finding) (\d+)\b")


def reply(n: int) -> str:
    """Replies of different heights and kinds: the measuring of what is mounted above must
    match the layout's for paragraphs, lists, headings and code alike."""
    kinds = [
        f"answer {n}: one line.",
        (f"## Finding {n}\n\n- the first point\n- the second point\n- a third, longer point that "
         f"wraps at this width because it goes on and on and on\n\nanswer {n} ends here."),
        f"answer {n}:\n\n```python\ndef f(x):\n    return x + {n}\n```\n\nThat is it.",
        f"answer {n} is a paragraph long enough to wrap over a few lines at this width: " + "words " * 40,
    ]
    return kinds[n % len(kinds)]


def history(messages: int) -> list[Event]:
    events: list[Event] = []
    for n in range(messages // 2):
        events.append(UserMessage(text=f"question {n}" + ("\nwith a second line" if n % 3 == 0 else "")))
        if n % 5 == 0:
            events.append(ReasoningDelta(text=f"thinking about {n}"))
        events.append(TextDelta(text=reply(n)))
        events.append(AssistantMessage(text=reply(n)))
        if n % 7 == 0:
            events.append(ToolCallStarted(call_id=f"c{n}", name="read_file", arguments='{"path": "a.py"}'))
            events.append(ToolCallFinished(call_id=f"c{n}", name="read_file", ok=True, output="x", duration_s=0.01))
    return events


class Recorded(App[None]):
    """The stream alone; every frame handed to the terminal is kept as the stream's text."""

    CSS = "Conversation { height: 1fr; }"

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[list[str]] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def compose(self) -> Iterable[Widget]:
        yield Conversation(ToolCalls(frozen_clock), frozen_clock, id="conversation")

    def _display(self, screen: Any, renderable: Any) -> None:
        if renderable is not None and not self._batch_count and self.is_running:
            self.frames.append(shown(self))
        super()._display(screen, renderable)


def shown(app: App[None]) -> list[str]:
    """The stream's rows as text, as on screen."""
    conversation = app.query_one(Conversation)
    region = conversation.scrollable_content_region
    strips = app.screen._compositor.render_strips()
    return [strip.crop(region.x, region.right).text.rstrip() for strip in strips[region.y : region.bottom]]


def numbers(rows: list[str]) -> list[int]:
    return [int(match) for row in rows for match in NUMBER.findall(row)]


@asynccontextmanager
async def opened(messages: int, size: tuple[int, int] = (90, 30)) -> AsyncIterator[tuple[Pilot[None], Conversation]]:
    app = Recorded()
    async with app.run_test(size=size) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load_history(history(messages))
        await wait_for(pilot, lambda: 0 < conversation.max_scroll_y == conversation.scroll_y,
                       what="the history laid out, at its newest message")
        conversation.focus()
        yield pilot, conversation


def settled(conversation: Conversation) -> bool:
    """No page or step of blocks is being mounted or unloaded."""
    return not conversation._prefetching and not any(
        worker.group in ("window", "prefetch") and not worker.is_finished for worker in conversation.app.workers)


async def test_blocks_mounted_above_the_view_do_not_move_it() -> None:
    async with opened(200) as (pilot, conversation):
        conversation.release_anchor()
        conversation.scroll_to(y=conversation.max_scroll_y - 40, animate=False, immediate=True)
        await drain(pilot)
        await wait_for(pilot, lambda: settled(conversation), what="nothing in flight")
        app = pilot.app
        assert isinstance(app, Recorded)
        before, first = shown(app), conversation._first_mounted
        assert numbers(before), "the view shows numbered messages"
        app.frames.clear()
        for _ in range(3):
            assert await conversation._mount_above(SLICE) > 0
            await drain(pilot)
        assert conversation._first_mounted == first - 3 * SLICE
        assert app.frames, "the mounts were drawn"
        assert all(frame == before for frame in app.frames), "no frame showed the view anywhere else"
        assert shown(app) == before


async def test_a_page_mounted_above_is_laid_out_once_and_every_block_at_its_own_height(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each block takes the size the layout gives it without asking for another pass over the
    whole window (``_laid_out``): one layout for a page, and that one already right."""
    async with opened(200) as (pilot, conversation):
        conversation.release_anchor()
        conversation.scroll_to(y=conversation.max_scroll_y - 40, animate=False, immediate=True)
        await drain(pilot)
        await wait_for(pilot, lambda: settled(conversation), what="nothing in flight")
        full: list[bool] = []
        original = Screen._refresh_layout

        def counted(screen: Screen[Any], size: Size | None = None, scroll: bool = False) -> None:
            full.append(not (scroll and not screen._layout_widgets))  # else Textual's scroll path
            original(screen, size, scroll)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        first = conversation._first_mounted
        assert await conversation._mount_above(SLICE) > 0
        await drain(pilot)
        assert full.count(True) == 1, f"the window was laid out {full.count(True)} times for one page"
        blocks = [r.widget for r in conversation.records[conversation._first_mounted : first]]
        assert len(blocks) == SLICE
        for block in blocks:
            assert block is not None
            width = block.content_size.width
            block.clear_cached_dimensions()  # measured afresh, not the number the layout used
            assert block.content_size.height == block.get_content_height(block.size, block.size, width), \
                f"{type(block).__name__} laid out at a height that is not its content's"
        region = conversation.scrollable_content_region.size
        conversation._clear_arrangement_cache()
        total = conversation.arrange(region).total_region
        assert conversation.virtual_size.height == max(region.height, total.bottom)
        assert conversation.vertical_scrollbar.window_virtual_size == conversation.virtual_size.height


async def test_a_page_up_pressed_while_blocks_are_mounted_above_goes_one_screen_up() -> None:
    """The key's scroll is reckoned at once and done after the next refresh; blocks mounted
    above in between must not leave it short by their height (seen in a terminal: a jump down)."""
    async with opened(200) as (pilot, conversation):
        conversation.release_anchor()
        conversation.scroll_to(y=conversation.max_scroll_y - 40, animate=False, immediate=True)
        await drain(pilot)
        await wait_for(pilot, lambda: settled(conversation), what="nothing in flight")
        block = next(r.widget for r in conversation.records[conversation._first_mounted + 30 :] if r.widget)
        row = block.region.y
        height = conversation.scrollable_content_region.height
        conversation.refresh()  # a repaint pending: the key's scroll waits for the next refresh
        conversation.scroll_page_up(animate=False)  # deferred to after it
        assert await conversation._mount_above(SLICE) > 0  # which comes after this
        await drain(pilot)
        await wait_for(pilot, lambda: settled(conversation), what="nothing in flight")
        assert block.region.y == row + height, "one screen up, not short by the blocks mounted"


async def test_the_page_mounted_on_reaching_the_top_does_not_move_the_view() -> None:
    async with opened(200) as (pilot, conversation):
        app = pilot.app
        assert isinstance(app, Recorded)
        first = conversation._first_mounted
        oldest = next(match.group(1) for record in conversation.records[first:]
                      if (match := NUMBER.search(record.text)))
        conversation.release_anchor()
        app.frames.clear()
        conversation.scroll_to(y=0, animate=False, immediate=True)
        await wait_for(pilot, lambda: settled(conversation) and conversation._first_mounted < first,
                       what="the page above")
        await drain(pilot)
        # The first frame shows the window's top: its oldest block (under the marker, or with the
        # page already mounted above it when both land in one frame). Every later frame shows
        # that block on the same row (above it, the blocks mounted since).
        top = next(row for row, text in enumerate(app.frames[0]) if NUMBER.search(text))
        shown_first = NUMBER.search(app.frames[0][top])
        assert shown_first is not None and shown_first.group(1) == oldest, "the view stayed on the oldest block"
        assert conversation.scroll_y > 0
        assert all(frame[top:] == app.frames[0][top:] for frame in app.frames)


async def test_paging_up_through_the_whole_history_shows_every_message_once_in_order() -> None:
    # 100 messages are 118 records: the first window (60) and three pages mounted above it, each
    # trimming the window below; every press waits out a real scroll animation (~0.8 s a press),
    # so more messages only repeat the same crossings at that cost.
    messages = 100
    async with opened(messages) as (pilot, conversation):
        screens = [numbers(shown(pilot.app))]
        while conversation.scroll_y > 0 or conversation._first_mounted > 0:
            await pilot.press("pageup")
            await wait_for(pilot, lambda: settled(conversation), what="the press's blocks")
            await wait_for(pilot, lambda: not pilot.app.animator.is_being_animated(conversation, "scroll_y"),
                           what="the scroll to end")
            await drain(pilot)
            screens.append(numbers(shown(pilot.app)))
            assert len(screens) < 400, "paging up reaches the top"
        # Each screen reads top to bottom in order, and is just above the one before it: it ends
        # where that one began (the line the page-up kept), never past it, never below it.
        seen: set[int] = set()
        for above, below in zip(screens[1:], screens, strict=False):
            assert above == sorted(above), f"a screen out of order: {above}"
            if above and below:
                # The last press may move less than a page (the top): it then overlaps more.
                low = below[0] - 1 if above[0] > 0 else 0
                assert low <= above[-1] <= max(below[0], below[-1] if above[0] == 0 else 0), \
                    f"a jump between {above} and {below}"
            seen |= set(above)
        assert seen | set(screens[0]) == set(range(messages // 2)), "every message was on screen"
        for n in range(messages // 2):
            where = [i for i, screen in enumerate(screens) if n in screen]
            assert where == list(range(where[0], where[-1] + 1)) and len(where) <= 2, f"{n} shown once, not twice"
        assert conversation.records[0].widget is not None
        assert conversation.mounted_blocks <= MAX_MOUNTED


async def test_reading_back_mounts_the_older_blocks_before_the_view_reaches_them() -> None:
    async with opened(400) as (pilot, conversation):
        first = conversation._first_mounted
        conversation.release_anchor()
        height = conversation.scrollable_content_region.height
        conversation.scroll_to(y=height, animate=False, immediate=True)  # a screen from the top
        await wait_for(pilot, lambda: settled(conversation) and conversation._first_mounted < first,
                       what="blocks mounted ahead")
        assert conversation.scroll_y >= AHEAD * height, "enough mounted above, the view moved with them"
        assert 0 < conversation._first_mounted and first - conversation._first_mounted <= 4 * SLICE, "no more"


async def test_idle_prefetch_never_mounts_past_the_oldest_record() -> None:
    async with opened(60) as (pilot, conversation):
        conversation.release_anchor()
        for _ in range(20):
            conversation.scroll_to(y=0, animate=False, immediate=True)
            await drain(pilot)
            await wait_for(pilot, lambda: settled(conversation), what="the steps to stop")
            if conversation._first_mounted == 0:
                break
        assert conversation._first_mounted == 0
        await drain(pilot)
        assert settled(conversation), "no step queued once the oldest is mounted"
        blocks = [child for child in conversation.children if child.display and child.id != "block-styles"]
        mounted = [record.widget for record in conversation.records[: conversation._last_mounted]]
        assert all(widget is not None for widget in mounted)
        assert len({id(widget) for widget in mounted}) == len(mounted), "each record mounted once"
        assert all(widget in blocks for widget in mounted)
        conversation.scroll_to(y=0, animate=False, immediate=True)
        await drain(pilot)
        assert numbers(shown(pilot.app))[0] == 0, "the oldest message at the top"
        assert settled(conversation) and conversation._first_mounted == 0


async def test_reading_back_while_a_reply_streams_keeps_the_window_bounded() -> None:
    """The reply being streamed into is the window's newest block: paging back past it unloads
    it like any other (its text keeps arriving in its record), so the window stays bounded; back
    at the end the whole reply is shown."""
    from agentcli.tui.messages import SessionEventPosted
    from agentcli.tui.widgets._conversation import PAGE

    async with opened(400) as (pilot, conversation):
        conversation.post_message(SessionEventPosted(UserMessage(text="question live")))
        conversation.post_message(SessionEventPosted(TextDelta(text="streaming answer begins. ")))
        await wait_for(pilot, lambda: conversation._streaming is not None, what="the reply to stream")
        while conversation._first_mounted > 0:
            await conversation.action_show_earlier()
            await wait_for(pilot, lambda: settled(conversation), what="nothing in flight")
            assert conversation.mounted_blocks <= MAX_MOUNTED + PAGE
        assert conversation._streaming is not None and conversation._streaming.widget is None
        conversation.post_message(SessionEventPosted(TextDelta(text="and the streaming answer ends.")))
        conversation.post_message(SessionEventPosted(AssistantMessage(
            text="streaming answer begins. and the streaming answer ends.")))
        await wait_for(pilot, lambda: conversation._streaming is None, what="the reply to end")
        await conversation.action_jump_to_end()
        await wait_for(pilot, lambda: conversation.at_end and settled(conversation) and not conversation.rendering,
                       what="the newest blocks")
        await drain(pilot)
        assert "streaming answer begins. and the streaming answer ends." in "\n".join(shown(pilot.app))


async def test_a_focused_block_about_to_be_unloaded_gives_the_focus_to_the_stream_at_once() -> None:
    """Unloading the focused tool call (shift+tab had focused it) must hand the focus to the
    stream before the block is removed: Textual's pruning otherwise gives it to a neighbouring
    block and scrolls to that one, a jump of the view toward newer messages (seen in a terminal,
    paging up with a pause). ``Widget.focus`` only asks for it after the removal has begun."""
    from agentcli.tui.widgets._blocks import ToolCallBlock

    async with opened(200) as (pilot, conversation):
        newest_call = list(conversation.query(ToolCallBlock))[-1]
        pilot.app.screen.set_focus(newest_call, scroll_visible=False)
        assert pilot.app.screen.focused is newest_call
        conversation._keep_focus_off([newest_call])
        assert pilot.app.screen.focused is conversation  # now, not after the next message
        y = conversation.scroll_y
        await drain(pilot)
        assert conversation.scroll_y == y


async def test_a_window_that_fitted_the_view_scrolls_once_a_page_above_overflows_it() -> None:
    """The stream's size set ahead of the layout must not skip Textual's decision to show the
    scrollbar: without it the stream would not scroll at all (wheel, keys) until a resize."""
    events: list[Event] = []
    for n in range(150):
        events += [UserMessage(text=f"question {n}"), AssistantMessage(text=f"answer {n}")]
    app = Recorded()
    async with app.run_test(size=(90, 200)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load_history(events)
        await drain(pilot)
        if conversation.virtual_size.height > conversation.scrollable_content_region.height:
            pytest.fail("the first window should fit this view; make the view taller")
        assert not conversation.show_vertical_scrollbar
        await conversation.action_show_earlier()
        await wait_for(pilot, lambda: settled(conversation), what="the page mounted")
        await drain(pilot)
        assert conversation.virtual_size.height > conversation.scrollable_content_region.height
        assert conversation.show_vertical_scrollbar and conversation.allow_vertical_scroll
        assert conversation.vertical_scrollbar.window_virtual_size == conversation.virtual_size.height


@pytest.mark.parametrize("animate", [False, True])
async def test_page_ups_pressed_within_one_frame_each_go_a_screen_up(animate: bool) -> None:
    """Ten page-ups faster than the screen redraws (a key held down, tmux send-keys) moved the
    view one screen: each was reckoned from the row the view was still on, and those that met the
    window's top were dropped while the page above it was mounted."""
    async def top_after(presses: int, *, burst: bool) -> list[int]:
        async with opened(400) as (pilot, conversation):
            await drain(pilot)
            for _ in range(presses):
                conversation.scroll_page_up(animate=animate)
                if not burst:
                    await drain(pilot)
                    await wait_for(pilot, lambda: settled(conversation), what="the page")
            await drain(pilot)
            await wait_for(pilot, lambda: settled(conversation) and conversation._aimed is None
                           and not conversation._owed_up, what="the pages")
            await drain(pilot)
            app = pilot.app
            assert isinstance(app, Recorded)
            return numbers(shown(app))

    one_by_one = await top_after(10, burst=False)
    assert await top_after(10, burst=True) == one_by_one
