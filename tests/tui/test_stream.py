"""The message stream stays bounded and responsive with thousands of messages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from textual.app import App
from textual.pilot import Pilot
from textual.widget import Widget

from agentcli.events import AssistantMessage, Event, TextDelta, ToolCallFinished, ToolCallStarted, UserMessage
from agentcli.tui.calls import ToolCalls
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.themes import ROLE_DEFAULTS
from agentcli.tui.widgets import AgentBlock, Conversation, ToolCallBlock, UserBlock
from agentcli.tui.widgets._anchored import AHEAD, SLICE
from agentcli.tui.widgets._conversation import (
    CHUNK_CHARS,
    INITIAL,
    MAX_MOUNTED,
    MAX_WEIGHT,
    PAGE,
    EarlierMarker,
    Record,
    chunk_markdown,
    split_point,
)
from tests.tui.helpers import drain, frozen_clock, wait_for


def history(messages: int) -> list[Event]:
    """``messages`` user/agent messages, with a tool call every tenth exchange."""
    events: list[Event] = []
    for n in range(messages // 2):
        events.append(UserMessage(text=f"question {n}"))
        events.append(TextDelta(text=f"answer **{n}**"))
        events.append(AssistantMessage(text=f"answer **{n}**"))
        if n % 10 == 0:
            events.append(ToolCallStarted(call_id=f"c{n}", name="read_file", arguments='{"path": "a.py"}'))
            events.append(ToolCallFinished(call_id=f"c{n}", name="read_file", ok=True, output="x", duration_s=0.01))
    return events


class StreamApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def compose(self) -> Iterable[Widget]:
        yield Conversation(ToolCalls(frozen_clock), frozen_clock, id="conversation")


@asynccontextmanager
async def opened_with_history(messages: int) -> AsyncIterator[tuple[Pilot[None], Conversation]]:
    """A running stream that has loaded a history of ``messages`` messages."""
    app = StreamApp()
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load_history(history(messages))
        # Laid out and anchored at the newest message. Before the first layout the view is at 0
        # of 0, and a scroll to the top would change nothing (so load nothing).
        await wait_for(pilot, lambda: 0 < conversation.max_scroll_y == conversation.scroll_y,
                       what="the history to be laid out, at its newest message")
        yield pilot, conversation


def window_work_done(app: App[None]) -> bool:
    """No page is being mounted or unloaded (scrolling past an end starts that in a worker), nor
    older blocks ahead of need (reading back does, in steps)."""
    conversation = app.query_one(Conversation)
    return not conversation._prefetching and not any(
        worker.group in ("window", "prefetch") and not worker.is_finished for worker in app.workers)


async def test_a_long_history_mounts_only_the_newest_blocks() -> None:
    async with opened_with_history(2000) as (pilot, conversation):
        assert len(conversation.records) == 2100
        assert conversation.mounted_blocks == INITIAL
        assert len(conversation.children) <= INITIAL + 3  # the two markers and the hidden BlockStyles
        assert f"{2100 - INITIAL:,} earlier blocks" in conversation.query_one("EarlierMarker").render().plain
        assert conversation.query(AgentBlock).last().source == "answer **999**"
        assert conversation.scroll_y == conversation.max_scroll_y, "opened at the newest message"


async def test_scrolling_to_the_top_loads_the_previous_page() -> None:
    async with opened_with_history(400) as (pilot, conversation):
        first = conversation._first_mounted
        conversation.scroll_home(animate=False)
        await wait_for(pilot, lambda: conversation._first_mounted <= first - PAGE, what="the earlier page")
        # The view stays on what the user was reading rather than jumping to the new top, and a
        # few more blocks are mounted ahead while it is within AHEAD screens of the window's top.
        await wait_for(pilot, lambda: window_work_done(pilot.app), what="the window's workers to finish")
        await drain(pilot)
        assert conversation.scroll_y >= AHEAD * conversation.scrollable_content_region.height
        assert conversation.mounted_blocks <= MAX_MOUNTED
        mounted = conversation._first_mounted
        assert first - PAGE - 4 * SLICE <= mounted
        await drain(pilot)
        assert conversation._first_mounted == mounted, "staying put does not load more"


async def test_reading_back_to_the_start_keeps_the_dom_bounded_and_end_returns() -> None:
    # 300 messages are 315 records: a dozen pages read back, each over the window's bound (the
    # 2,000-message test above is the scale check; every page here waits out the prefetch pause).
    async with opened_with_history(300) as (pilot, conversation):
        while conversation._first_mounted > 0:
            await conversation.action_show_earlier()
            # A page is mounted, then the other end unloaded: bounded once no page is in flight
            # (putting the view back can start one in a worker).
            await wait_for(pilot, lambda: window_work_done(pilot.app), what="the window's workers to finish")
            assert conversation.mounted_blocks <= MAX_MOUNTED
        assert conversation.query(UserBlock).first().render().plain == "question 0"
        assert not conversation.at_end
        assert "newer blocks" in conversation.query("EarlierMarker").last().render().plain

        # While the user reads old messages, new ones are recorded but not mounted.
        conversation.post_message(SessionEventPosted(UserMessage(text="live while reading")))
        await wait_for(pilot, lambda: conversation.records[-1].text == "live while reading", what="the live message")
        assert conversation.records[-1].widget is None

        conversation.focus()
        await pilot.press("end")
        # The window reaches the end before the newest blocks are mounted; following the stream
        # again (anchor) is the jump's last step.
        await wait_for(pilot, lambda: conversation.at_end and conversation.following, what="the jump to the newest")
        await drain(pilot)
        assert conversation.query(UserBlock).last().render().plain == "live while reading"
        assert conversation.mounted_blocks <= INITIAL + 1
        assert conversation.following


async def test_scrolling_down_past_the_window_loads_the_next_page() -> None:
    async with opened_with_history(1000) as (pilot, conversation):
        for _ in range(10):
            await conversation.action_show_earlier()
        await drain(pilot)
        last = conversation._last_mounted
        assert last < len(conversation.records)
        # Scrolling to the bottom loads the next page. The layout after the pages loaded above may
        # not be settled yet on a loaded machine, so keep scrolling down as a reader would.
        def scrolled_down() -> bool:
            if conversation._last_mounted > last:
                return True
            conversation.scroll_end(animate=False)
            return False

        await wait_for(pilot, scrolled_down, what="the next page")
        # The window grows by the page before the other end is unloaded, in the same worker:
        # bounded once no page is in flight, checked in the same step as that.
        await wait_for(pilot, lambda: window_work_done(pilot.app), what="the window's workers to finish")
        assert conversation.mounted_blocks <= MAX_MOUNTED


async def test_live_messages_prune_the_oldest_blocks() -> None:
    app = StreamApp()
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)
        for n in range(MAX_MOUNTED + PAGE + 10):
            conversation.post_message(SessionEventPosted(UserMessage(text=f"message {n}")))
        await wait_for(pilot, lambda: len(conversation.records) == MAX_MOUNTED + PAGE + 10)
        await drain(pilot)  # the last message is recorded before its block is mounted
        assert conversation.mounted_blocks <= MAX_MOUNTED + PAGE
        assert conversation.query(UserBlock).last().render().plain == f"message {MAX_MOUNTED + PAGE + 9}"


async def test_a_result_updates_its_call_block_in_place() -> None:
    app = StreamApp()
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)
        calls = conversation.calls
        started = ToolCallStarted(call_id="call/1", name="bash", arguments='{"command": "pytest -q"}',
                                  preview="pytest -q")
        calls.started(started)
        conversation.post_message(SessionEventPosted(started))
        await wait_for(pilot, lambda: bool(conversation.query(ToolCallBlock)))
        block = conversation.query_one(ToolCallBlock)
        assert block.id == "call-call_1"
        assert block.render().plain.startswith("◌ bash  pytest -q  running 0.0s")
        finished = ToolCallFinished(call_id="call/1", name="bash", ok=False, output="1 failed", error="exit 1",
                                    duration_s=1.25)
        calls.finished(finished)
        conversation.post_message(SessionEventPosted(finished))
        await drain(pilot)  # the result has been handled: updated in place, not a new block
        assert conversation.query_one(ToolCallBlock) is block
        assert block.render().plain.startswith("✗ bash  pytest -q  1.2s")


def test_long_replies_are_cut_between_paragraphs_outside_code() -> None:
    assert split_point("", "one\n\ntwo") == 5
    assert split_point("```python\n", "x = 1\n\ny = 2\n```\n\nafter") == len("x = 1\n\ny = 2\n```\n\n")
    assert split_point("", "no blank line") is None
    text = "".join(f"paragraph {n} " + "word " * 40 + "\n\n" for n in range(100))
    chunks = chunk_markdown(text, size=1000)
    assert "".join(chunks) == text
    assert all(len(chunk) < 1300 for chunk in chunks) and len(chunks) > 10
    fenced = "intro\n\n```\n" + "line\n\n" * 500 + "```\n\noutro"
    assert all(chunk.count("```") % 2 == 0 for chunk in chunk_markdown(fenced, size=100))


async def test_a_long_streamed_reply_becomes_several_blocks_and_stays_bounded() -> None:
    app = StreamApp()
    paragraph = "word " * 60 + "\n\n"
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)
        for _ in range(120):  # 120 deltas of 5 paragraphs: ~180k characters, far over the budget
            conversation.post_message(SessionEventPosted(TextDelta(text=paragraph * 5)))
        conversation.post_message(SessionEventPosted(AssistantMessage(text=paragraph * 600)))
        await wait_for(pilot, lambda: conversation._stream is None and not conversation._continuing
                       and len(conversation.records) > 1, timeout=120, what="the reply to finish")
        # A chunk is unloaded once it has rendered; on a loaded machine that comes a while after
        # the last delta was received.
        await wait_for(pilot, lambda: not conversation.rendering, timeout=120, what="the reply to render")
        await wait_for(pilot, lambda: conversation.mounted_weight <= MAX_WEIGHT, what="the window to shrink back")
        blocks = list(conversation.query(AgentBlock))
        assert len(conversation.records) >= 180_000 // (CHUNK_CHARS + 400)
        assert all(b.has_class("-cont") for b in blocks[1:])
        assert "".join(r.text for r in conversation.records) == paragraph * 600


async def test_the_window_markers_redraw_their_counts_on_screen() -> None:
    class MarkerApp(App[None]):
        def compose(self) -> Iterable[Widget]:
            yield EarlierMarker()

    def screen_text(app: App[None]) -> str:
        return "\n".join(strip.text for strip in app.screen._compositor.render_strips())

    app = MarkerApp()
    async with app.run_test(size=(80, 5)) as pilot:
        marker = app.query_one(EarlierMarker)
        marker.show("▲ 1,975 earlier blocks")
        await wait_for(pilot, lambda: "1,975 earlier" in screen_text(app), what="the first count")
        marker.show("▲ 1,950 earlier blocks")  # as long: repainted without a layout
        await wait_for(pilot, lambda: "1,950 earlier" in screen_text(app), what="the new count")
        marker.show("▲ 950 earlier blocks")  # shorter: laid out again too
        await wait_for(pilot, lambda: "950 earlier" in screen_text(app) and "1,950" not in screen_text(app),
                       what="the shorter count")


async def test_every_chunk_of_a_streaming_reply_is_one_widget_tables_too() -> None:
    from agentcli.tui.widgets._agent_block import FinishedAgentBlock
    from agentcli.tui.widgets._live_block import LiveAgentBlock

    app = StreamApp()
    section = "## Step\n\n" + "word " * 60 + "\n\n```python\nx = 1\n```\n\n"
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)
        text = section * (2 * CHUNK_CHARS // len(section)) + table + section * (CHUNK_CHARS // len(section))
        conversation.post_message(SessionEventPosted(TextDelta(text=text)))
        conversation.post_message(SessionEventPosted(TextDelta(text=section * 3)))  # the reply goes on
        await wait_for(pilot, lambda: len(conversation.records) >= 3 and not conversation.pending_chars,
                       what="the chunks rendered")
        *done, last = conversation.records
        for record in conversation.records:
            widget = record.widget
            if widget is None:
                continue  # unloaded above the window
            assert isinstance(widget, FinishedAgentBlock) and not widget.children, \
                "every chunk is drawn by one widget, not a widget per block"
            assert widget.source == record.text
        assert any("| a |" in record.text and record.widget is not None for record in done)
        assert isinstance(last.widget, LiveAgentBlock) and last is conversation._streaming, \
            "the chunk being streamed into takes the rest of the reply"
        # A block the flat drawing does not know turns the live chunk into Markdown's widgets.
        conversation.post_message(SessionEventPosted(TextDelta(text="> a quote\n\nand on")))

        def quoted() -> Record | None:
            return next((r for r in conversation.records if "> a quote" in r.text), None)

        await wait_for(pilot, lambda: not conversation.pending_chars and (r := quoted()) is not None
                       and r.widget is not None and bool(r.widget.children),
                       what="the chunk with a quote to be Markdown")
        record = quoted()
        assert record is not None and isinstance(record.widget, LiveAgentBlock) and not record.widget.flat
        assert record.widget.source == record.text
        assert app.query("MarkdownBlockQuote"), "the quote is drawn by Markdown"
        assert "".join(r.text for r in conversation.records) == text + section * 3 + "> a quote\n\nand on"
