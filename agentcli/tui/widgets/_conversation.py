"""The message stream: what the user said, what the agent thinks and says (streamed), what it did.

An agent message is chunks of a few thousand characters, each one widget: the chunk being
streamed into is a ``LiveAgentBlock`` (drawn again from its text on each append), the others
``FinishedAgentBlock``s (``Markdown`` only for blocks those do not draw); the model's
reasoning is a block above its reply, appended to per delta and folded to one line when the reply
starts; tool calls are keyed blocks updated per status change, never per token. Every block is
first a light record (``_records``); only a window of them are widgets (the newest, while the view
follows the stream), so the DOM stays bounded however long the session. Reading back, older blocks
are mounted above the view without moving it (``_anchored``): a page ahead when the reader pauses,
or on reaching the top; blocks far under the view are then unloaded. Scrolling down past the
window mounts the next page there and unloads one at the top.

Over 400 lines on purpose: the window and the reply being streamed into it are one piece of
state (a streamed chunk is a record that must not be unloaded while it renders, and a reply
that outgrows a chunk moves on to a new record in the window); split, each half would reach
into the other's fields. The blocks are in ``_blocks``, what an event reads as in ``_records``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from textual import on
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from agentcli.tui.calls import ToolCalls
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.widgets._anchored import (
    AHEAD,
    QUIET_S,
    SLICE,
    laid_out_tops,
    presize,
    shift_view,
    top_of,
    tops,
)
from agentcli.tui.widgets._block_styles import BlockStyles
from agentcli.tui.widgets._blocks import (
    EarlierMarker,
    NoticeBlock,
    ReasoningBlock,
    ToolCallBlock,
    UserBlock,
    call_widget_id,
    render_call,
    status_mark,
)
from agentcli.tui.widgets._offscreen import drop_far_lines, forget_lines
from agentcli.tui.widgets._records import (
    CHUNK_CHARS,
    STREAM_CHUNK_CHARS,
    Record,
    chunk_markdown,
    record_for,
    reply_records,
    split_point,
)

if TYPE_CHECKING:
    from textual._animator import EasingFunction
    from textual._types import AnimationLevel, CallbackType

    from agentcli.events import Event
    from agentcli.tui.widgets._agent_block import AgentBlock, SlicedStream

__all__ = [
    "CHUNK_CHARS",
    "INITIAL",
    "MAX_MOUNTED",
    "MAX_WEIGHT",
    "PAGE",
    "Conversation",
    "EarlierMarker",
    "NoticeBlock",
    "ReasoningBlock",
    "Record",
    "ToolCallBlock",
    "UserBlock",
    "call_widget_id",
    "chunk_markdown",
    "render_call",
    "split_point",
    "status_mark",
]


def _agent_block() -> type[AgentBlock]:
    """The widget a chunk is streamed into (drawn flat, without a widget per block, while it can be)."""
    # Markdown brings markdown-it and pygments (~40 ms): loaded with the first agent message,
    # after the first frame, not at start-up.
    from agentcli.tui.widgets._live_block import LiveAgentBlock

    return LiveAgentBlock


MAX_MOUNTED = 80
"""Blocks kept as widgets; the others are records only until scrolled back to."""
INITIAL = 60
"""Blocks mounted when a session's history is opened (a few screens); more come on scroll-up."""
PAGE = 25
"""Blocks mounted or unloaded at a time."""
MAX_WEIGHT = 400
"""Weight (about a line of markdown, ``Record.weight``) kept mounted across all messages: a chunk
is one widget when drawn flat, but every line it drew stays cached while it is mounted, and a
chunk left to ``Markdown`` is a widget per block."""


class Conversation(VerticalScroll, can_focus=True):
    """Owns the stream's DOM: records events as blocks, streams agent text, prunes old blocks."""

    DEFAULT_CSS = """
    Conversation { height: 1fr; padding: 0 1; scrollbar-gutter: stable; }
    """
    BLANK = True
    BINDINGS = [
        Binding("ctrl+u", "show_earlier", "Earlier", id="agentcli.stream.earlier", show=False,
                tooltip="Show older messages that were unloaded to keep the app fast"),
        Binding("end", "jump_to_end", "Newest", id="agentcli.stream.end", show=False,
                tooltip="Go to the newest message and follow the stream again"),
    ]

    class CallSelected(Message):
        """A tool call was picked in the stream; the tool panel shows it too."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id
            """The tool call's id."""

    def __init__(self, calls: ToolCalls, clock: Callable[[], float], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.calls = calls
        self._clock = clock
        self.records: list[Record] = []
        self._first_mounted = 0
        """Index of the oldest record that is a widget."""
        self._last_mounted = 0
        """One past the newest record that is a widget (``len(records)`` when at the end)."""
        self._window_at_end = True
        self._stream: SlicedStream | None = None
        self._streaming: Record | None = None
        self._marker = EarlierMarker()
        self._marker.display = False
        self._later = EarlierMarker(later=True)
        self._later.display = False
        self._dropping = False
        """A pass over the blocks far from the view is queued (``_offscreen``)."""
        self._prefetching = False
        """A step mounting older blocks ahead of need is queued or running."""
        self._shifted = 0
        """Lines the view was moved by for blocks mounted above it, in all (``scroll_to``)."""
        self._aimed: tuple[float, int] | None = None
        """A deferred scroll's ``y`` and ``_shifted`` when it was aimed (``scroll_to``), until it is done."""
        self._owed_up = 0.0
        """Lines a scroll aimed above the window's first block still has to go once the page over
        it is mounted (page-ups faster than pages mount)."""
        self._showing_earlier = False
        """A page above the window is asked for or being mounted (the page-ups owed wait for it)."""
        self._scrolled_at = 0.0
        """When the view last moved (``time.monotonic``): steps ahead wait for a pause."""
        self._above = asyncio.Lock()
        """Held while blocks are mounted above the window (each measures where the view is)."""
        self._settling = 0
        """Pages mounted whose scroll back to the block being read has not been drawn yet."""
        self.block_styles = BlockStyles()
        """The component styles of every finished agent message in the stream (``_block_styles``)."""
        self._call_records: dict[str, Record] = {}
        self._continuing = False
        """The reply being streamed goes on past a chunk boundary."""
        self._draining: dict[int, SlicedStream] = {}
        """Streams still appending, by record: a finished chunk may still be rendering."""
        self._thought: Record | None = None
        """The reasoning block the model is streaming into (None once its reply starts)."""
        self._thought_shown = False
        """The reply in progress showed its reasoning (its text then sits right under it)."""

    def compose(self) -> Iterable[Widget]:
        yield self._marker
        yield self._later

    def on_mount(self) -> None:
        self.anchor()

    # -- public --------------------------------------------------------------------------

    @property
    def mounted_blocks(self) -> int:
        return self._last_mounted - self._first_mounted

    @property
    def mounted_weight(self) -> int:
        return sum(record.weight for record in self.records[self._first_mounted : self._last_mounted])

    @property
    def at_end(self) -> bool:
        """True when the window reaches the newest block: new blocks are mounted as they come.

        A flag rather than ``_last_mounted == len(records)``: a live record is appended before
        its widget is mounted, and a scroll in that moment must not look like reading history.
        """
        return self._window_at_end

    async def clear(self) -> None:
        """Forget every block (switching sessions)."""
        self._end_stream(interrupted=False)
        self._thought, self._thought_shown = None, False
        self._draining.clear()
        doomed = [r.widget for r in self.records if r.widget is not None]
        forget_lines(doomed)
        await self.remove_children(doomed)
        self.records.clear()
        self._call_records.clear()
        self._first_mounted = self._last_mounted = 0
        self._window_at_end = True
        self._update_marker()

    async def load_history(self, events: Iterable[Event]) -> None:
        """Show a reopened session's past: records for all of it, widgets for the newest page."""
        # The event classes are imported where events are read: the stream is in the first
        # frame, which must not wait for them to be built.
        from agentcli.events import AssistantMessage, ReasoningDelta, RetryScheduled, TextDelta

        streamed: list[str] = []
        thought: list[str] = []
        for event in events:
            if isinstance(event, TextDelta):
                streamed.append(event.text)
                continue
            if isinstance(event, ReasoningDelta):
                thought.append(event.text)
                continue
            if isinstance(event, AssistantMessage):
                text = event.text or "".join(streamed)
                reasoning = event.reasoning or "".join(thought)
                streamed.clear()
                thought.clear()
                self.records += reply_records(text, reasoning, interrupted=event.interrupted)
                continue
            if isinstance(event, RetryScheduled):
                thought.clear()  # the failed attempt's reasoning is void; the reply has the retry's
            self._record_event(event)
        # Cut off mid-reply (a crash): what had streamed of it, marked interrupted.
        self.records += reply_records("".join(streamed), "".join(thought), interrupted=True)
        self._first_mounted = self._window_start(len(self.records), INITIAL)
        self._last_mounted = len(self.records)
        widgets = [self._widget_for(record) for record in self.records[self._first_mounted :]]
        with self.app.batch_update():
            await self.mount_all(widgets, before=self._later)
        self._update_marker()
        self.anchor()

    def _window_start(self, end: int, count: int) -> int:
        """The first record of a window ending at ``end``: at most ``count`` blocks and the weight."""
        first, weight = end, 0
        while first > 0 and end - first < count:
            weight += self.records[first - 1].weight
            if weight > MAX_WEIGHT and first < end:
                break
            first -= 1
        return first

    def show_call(self, call_id: str) -> None:
        """Expand a tool call's block and scroll to it (selected in the tool panel)."""
        record = self._call_records.get(call_id)
        if record is None:
            return
        if record.widget is None:
            self.run_worker(self._show_unloaded_call(record), group="window", exclusive=True)
            return
        block = record.widget
        assert isinstance(block, ToolCallBlock)
        block.expanded = True
        self.release_anchor()
        self.scroll_to_widget(block, animate=False, top=True)

    async def _show_unloaded_call(self, record: Record) -> None:
        """Move the window to an unloaded call (picked in the tool panel), then show it."""
        async with self._above:  # not while older blocks are being mounted above the window
            await self._move_window_to(record)

    async def _move_window_to(self, record: Record) -> None:
        index = self.records.index(record)
        doomed = [r.widget for r in self.records[self._first_mounted : self._last_mounted] if r.widget is not None]
        for other in self.records[self._first_mounted : self._last_mounted]:
            other.widget = None
        self._first_mounted = max(0, index - PAGE)
        self._last_mounted = min(len(self.records), index + PAGE)
        self._window_at_end = self._last_mounted == len(self.records)
        widgets = [self._widget_for(r) for r in self.records[self._first_mounted : self._last_mounted]]
        self.release_anchor()
        forget_lines(doomed)
        with self.app.batch_update():
            await self.remove_children(doomed)
            await self.mount_all(widgets, before=self._later)
        self._update_marker()
        if isinstance(record.widget, ToolCallBlock):
            record.widget.expanded = True
            self.call_after_refresh(self.scroll_to_widget, record.widget, animate=False, top=True)

    def refresh_running(self) -> None:
        """Repaint running tool calls (their elapsed time)."""
        for call in self.calls.running:
            record = self._call_records.get(call.call_id)
            if record is not None and record.widget is not None:
                record.widget.refresh()

    # -- events --------------------------------------------------------------------------

    async def on_session_event_posted(self, message: SessionEventPosted) -> None:
        if not self.is_attached:
            return  # posted before the app began to close: there is no stream left to draw in
        from agentcli.events import (
            AssistantMessage,
            ClarificationAnswered,
            ReasoningDelta,
            TextDelta,
            ToolCallFinished,
            ToolCallStarted,
            UserMessage,
        )

        event = message.event
        if isinstance(event, ReasoningDelta):
            await self._think(event.text)
            return
        if self._thought is not None:
            # The reply starts (or the call ended without one): the reasoning folds to its header.
            # Cut off while the model still reasoned, it stays open, as it was being read.
            self._end_thought(interrupted=isinstance(event, AssistantMessage) and event.interrupted)
        if isinstance(event, TextDelta):
            await self._write(event.text)
            return
        shown, self._thought_shown = self._thought_shown, False  # anything but text ends the reply
        if isinstance(event, AssistantMessage):
            streamed = self._streaming or (self.records[-1] if self._continuing else None)
            self._continuing = False
            self._end_stream(interrupted=event.interrupted)
            if streamed is None:  # a reply that was not streamed (its reasoning may have been)
                for part in reply_records(event.text, "" if shown else event.reasoning, interrupted=event.interrupted):
                    await self._add(part)
            if (notice := record_for(event)) is not None:  # "… reply interrupted"
                await self._add(notice)
            return
        if isinstance(event, ToolCallFinished):
            record = self._call_records.get(event.call_id)
            if record is None:
                record = self._record_event(event)
                if record is not None:
                    await self._mount_new(record)
            elif record.widget is not None:
                record.widget.refresh(layout=True)
            return
        if isinstance(event, (ToolCallStarted, UserMessage, ClarificationAnswered)):
            self._continuing = False
            self._end_stream(interrupted=False)
        record = self._record_event(event)
        if record is not None:
            await self._mount_new(record)

    def _record_event(self, event: Event) -> Record | None:
        """Turn an event into a record (appended), or None when the stream does not show it."""
        from agentcli.events import ToolCallFinished, ToolCallStarted

        record: Record | None
        if isinstance(event, (ToolCallStarted, ToolCallFinished)):
            if event.call_id in self._call_records:
                return None
            if event.call_id not in self.calls:
                if isinstance(event, ToolCallStarted):
                    self.calls.started(event)
                else:
                    self.calls.finished(event)
            record = Record("call", call_id=event.call_id)
            self._call_records[event.call_id] = record
        else:
            record = record_for(event)
        if record is not None:
            self.records.append(record)
        return record

    def _widget_for(self, record: Record) -> Widget:
        if record.kind == "agent" and not self.block_styles.is_attached:
            # Mounted with the first agent message, not in the first frame; mount() styles it at
            # once, so the message mounted after it finds its styles.
            self.mount(self.block_styles, before=0)
        if record.kind == "agent" and record is not self._streaming:
            # Finished text (history, a page scrolled back to): one widget, not Markdown's dozen.
            from agentcli.tui.widgets._agent_block import finished_block

            widget: Widget = finished_block(record.text, classes=record.classes or None)
        elif record.kind == "agent":
            widget = _agent_block()(record.text, classes=record.classes or None)
            if self._stream is not None:
                # Mounted again while its reply still streams: what came so far is in the new
                # widget; the rest goes to it too.
                from agentcli.tui.widgets._agent_block import SlicedStream

                self._stream.finish()
                self._stream = SlicedStream(widget)
                self._draining[id(record)] = self._stream
        elif record.kind == "reasoning":
            widget = ReasoningBlock(record.text, expanded=not record.collapsed, live=record is self._thought,
                                    classes=record.classes or None)
        elif record.kind in ("user", "answer"):
            text = record.text if record.kind == "user" else f"↳ {record.text}"
            widget = UserBlock(Content(text), classes="-answer" if record.kind == "answer" else "")
        elif record.kind == "call":
            assert record.call_id is not None
            widget = ToolCallBlock(self.calls[record.call_id], self._clock)
        else:
            widget = NoticeBlock(Content(record.text), classes=record.classes)
        record.widget = widget
        return widget

    # -- streaming -----------------------------------------------------------------------

    async def _think(self, text: str) -> None:
        """Streamed reasoning: the first delta of a reply mounts its block, the others append."""
        record = self._thought
        if record is None:
            # Reasoning after text in the same reply (interleaved thinking) gets a block of its own.
            self._continuing = False
            self._end_stream(interrupted=False)
            record = self._thought = Record("reasoning", text)
            self._thought_shown = True
            await self._add(record)
            return
        record.text += text
        if isinstance(record.widget, ReasoningBlock):
            record.widget.append(text)

    def _end_thought(self, *, interrupted: bool) -> None:
        """The model stopped reasoning: fold the block to its header (or mark it cut off)."""
        record, self._thought = self._thought, None
        if record is None:
            return
        if interrupted:
            record.classes = "-interrupted"
        else:
            record.collapsed = True
        block = record.widget
        if isinstance(block, ReasoningBlock):
            with self.app.batch_update():
                block.live = False
                block.expanded = not record.collapsed
                block.set_class(interrupted, "-interrupted")

    @on(ReasoningBlock.Toggled)
    def _reasoning_toggled(self, message: ReasoningBlock.Toggled) -> None:
        message.stop()
        for record in self.records[self._first_mounted : self._last_mounted]:
            if record.widget is message.block:
                record.collapsed = not message.expanded
                break
        if message.expanded:
            self.call_after_refresh(self._show_header, message.block)

    def _show_header(self, block: ReasoningBlock) -> None:
        """Keep an opened block's start in view: while the view follows the stream, a block opened
        near the end grows upwards, and its header would leave the screen."""
        if not block.is_attached:
            return
        top = block.virtual_region.y
        if not self.scroll_y <= top < self.scroll_y + self.scrollable_content_region.height:
            self.release_anchor()  # reading back: scrolling to the end again follows once more
            self.scroll_to_widget(block, animate=False)

    async def _write(self, text: str) -> None:
        """Queue streamed text; it renders in the background, so this handler never waits on it."""
        while text:
            if self._stream is None:
                await self._start_stream(continued=self._continuing)
            record, stream = self._streaming, self._stream
            assert record is not None and stream is not None
            room = STREAM_CHUNK_CHARS - len(record.text)
            if len(text) > room and (cut := split_point(record.text, text, max(0, room))) is not None:
                # A long reply goes on in a new Markdown widget, so its start can be unloaded later.
                head, text = text[:cut], text[cut:]
                record.text += head
                stream.write(head)
                record.sealed = True
                self._end_stream(interrupted=False)
                self._continuing = True
                continue
            record.text += text
            stream.write(text)
            text = ""

    async def _start_stream(self, *, continued: bool) -> None:
        from agentcli.tui.widgets._agent_block import SlicedStream

        record = Record("agent", classes="-cont" if continued else "-reasoned" if self._thought_shown else "")
        self.records.append(record)
        self._streaming = record  # mounted as Markdown, to stream into
        await self._mount_new(record)
        # Not mounted when the user reads older blocks: the text still goes into the record, and
        # this detached widget just drops it; mounting the record later shows all of it.
        block = record.widget or _agent_block()("")
        assert isinstance(block, _agent_block())
        previous = next((stream for stream in reversed(self._draining.values()) if not stream.done), None)
        self._stream = SlicedStream(block, after=previous, on_done=lambda: self._stream_done(record))
        self._draining[id(record)] = self._stream

    def _stream_done(self, record: Record) -> None:
        if not self.is_attached:
            return
        if record.sealed:
            self.call_later(self._seal, record)
        # A chunk that finished rendering can be unloaded now; it was kept while it streamed.
        if self.following and self.at_end and self.mounted_weight > MAX_WEIGHT:
            self.call_later(self._unload_top)

    async def _seal(self, record: Record) -> None:
        """Swap a rendered chunk of a long reply for the one-widget form, when it has one.

        Every Markdown block widget of a finished chunk is still styled and laid out with the
        window while the rest of the reply streams; the chunk being streamed into stays Markdown.
        """
        from agentcli.tui.widgets._agent_block import FinishedAgentBlock, finished_block
        from agentcli.tui.widgets._live_block import LiveAgentBlock

        old = record.widget
        if old is None or old.parent is not self:
            return
        if isinstance(old, FinishedAgentBlock) and (not isinstance(old, LiveAgentBlock) or old.flat):
            return  # already one widget
        new = finished_block(record.text, classes=" ".join(old.classes) or None)
        if not isinstance(new, FinishedAgentBlock):
            return  # tables, quotes or rules: it stays Markdown
        with self.app.batch_update():
            await self.mount(new, after=old)
            record.widget = new
            forget_lines([old])
            await old.remove()

    def _end_stream(self, *, interrupted: bool) -> None:
        stream, record = self._stream, self._streaming
        self._stream = self._streaming = None
        if stream is not None:
            stream.finish()
        if record is not None and interrupted:
            record.classes = "-interrupted"
            if record.widget is not None:
                record.widget.add_class("-interrupted")

    @property
    def rendering(self) -> bool:
        """True while streamed text is still being appended to some message."""
        self._draining = {key: s for key, s in self._draining.items() if not s.done}
        return bool(self._draining)

    @property
    def pending_chars(self) -> int:
        """Streamed characters received but not yet in a Markdown widget."""
        return sum(stream.pending for stream in self._draining.values() if not stream.done)

    async def wait_rendered(self) -> None:
        """Wait until every streamed character is in its widget."""
        for stream in list(self._draining.values()):
            await stream.wait()

    # -- mounting and pruning ------------------------------------------------------------

    async def _add(self, record: Record) -> None:
        self.records.append(record)
        await self._mount_new(record)

    async def _mount_new(self, record: Record) -> None:
        """A live block: mounted if the window is at the end, else counted under the window."""
        if not self._window_at_end:
            self._update_marker()
            return
        await self.mount(self._widget_for(record), before=self._later)
        self._last_mounted = self.records.index(record, self._last_mounted) + 1
        if self.following and (self.mounted_blocks > MAX_MOUNTED + PAGE or self.mounted_weight > MAX_WEIGHT):
            await self._unload_top()

    @property
    def following(self) -> bool:
        """True while the view sticks to the newest block (the user has not scrolled away)."""
        return self._anchored and not self._anchor_released

    def _busy(self, record: Record) -> bool:
        stream = self._draining.get(id(record))
        return record is self._streaming or (stream is not None and not stream.done)

    async def _unload_top(self, count: int = MAX_MOUNTED, weight: int = MAX_WEIGHT - PAGE) -> None:
        """Unmount the oldest blocks until the window fits (the records stay)."""
        doomed = []
        mounted, total = self.mounted_blocks, self.mounted_weight
        while self._first_mounted < self._last_mounted and (mounted > count or total > weight):
            record = self.records[self._first_mounted]
            if self._busy(record):
                break
            if record.widget is not None:
                doomed.append(record.widget)
                record.widget = None
            self._first_mounted += 1
            mounted -= 1
            total -= record.weight
        self._keep_focus_off(doomed)
        forget_lines(doomed)
        await self.remove_children(doomed)
        self._update_marker()

    async def action_show_earlier(self) -> None:
        """Mount the previous page above the window, keeping the view still; unload at the bottom.

        Asked for while reading below the window's first block (ctrl+u, the marker), the view
        then goes to that block, where the page meets the window, as paging there would.
        """
        if self._first_mounted == 0:
            self._showing_earlier = False
            return
        self.release_anchor()
        self._showing_earlier = True
        try:
            # Unless `end` (queued first for the window) has brought the view back to the newest.
            await self._mount_above(PAGE, wanted=lambda: not self.following, reveal=True)
            await self._trim_below(arranged=True)
        finally:
            self._showing_earlier = False
        owed, self._owed_up = self._owed_up, 0.0
        if owed and not self.following:
            self.scroll_to(y=self.scroll_y - owed, animate=False)  # the page-ups that met the top
        self._prefetch()  # and, reading on up from there, the blocks above it ahead of need

    async def _mount_above(self, count: int, *, wanted: Callable[[], bool] | None = None,
                           reveal: bool = False) -> int:
        """Mount up to ``count`` records above the window, the view kept on what it shows (the
        offset moved by what they add above it, in the same frame: ``_anchored``); the lines added.

        Args:
            count: The most records to mount.
            wanted: Asked once the window is this call's (another change to it, such as `end`,
                may have come first): False mounts nothing.
            reveal: When the view is below the window's first block, go to that block, where
                the page meets the window.
        """
        async with self._above:
            start = max(0, self._first_mounted - count)
            if start == self._first_mounted or (wanted is not None and not wanted()):
                return 0
            first = next((r.widget for r in self.records[self._first_mounted : self._last_mounted]
                          if r.widget is not None), None)
            size = self.scrollable_content_region.size
            before = top_of(self, first, size) if first is not None and size else None
            widgets = [self._widget_for(record) for record in self.records[start : self._first_mounted]]
            self._first_mounted = start
            shift = 0
            with self.app.batch_update():
                await self.mount_all(widgets, after=self._marker)
                self._update_marker()
                after = top_of(self, first, size) if first is not None and size else None
                if before is not None and after is not None:
                    shift = after - before
                    shift_view(self, shift)
                    self._shifted += shift
                presize(self)
            if reveal and after is not None and after < self.scroll_y:
                self.scroll_to(y=after, animate=False, immediate=True)
            return shift

    def _prefetch_wanted(self) -> bool:
        """Reading back with fewer than ``AHEAD`` screens of mounted blocks above the view."""
        return (self._first_mounted > 0 and not self.following and self.is_attached
                and self.scroll_y < AHEAD * self.scrollable_content_region.height)

    def _prefetch(self) -> None:
        """Mount the next older blocks ahead of need once the user pauses (``QUIET_S`` after the
        last scroll), a few per step, each step after the screen is drawn."""
        if not self._prefetching and self._prefetch_wanted():
            self._prefetching = True
            self.set_timer(QUIET_S, self._start_prefetch)

    def _start_prefetch(self) -> None:
        if not self.is_attached:
            self._prefetching = False
        elif (wait := self._scrolled_at + QUIET_S - time.monotonic()) > 0.001:
            # Scrolled since: a step now would share the frame of that scroll and delay it.
            self.set_timer(wait, self._start_prefetch)
        else:
            self.run_worker(self._prefetch_step(), group="prefetch")

    async def _prefetch_step(self) -> None:
        """One step: the window trimmed below if the last step left it over its size, then a few
        older blocks mounted if still wanted; the next step comes after they are drawn."""
        again = False
        try:
            with self.app.batch_update():  # one layout for both
                await self._trim_below()
                if self._prefetch_wanted():
                    again = (await self._mount_above(SLICE, wanted=self._prefetch_wanted) > 0
                             or self._first_mounted > 0)
        finally:
            self._prefetching = False
        if again:
            self._prefetching = True
            self.call_after_refresh(self._start_prefetch)

    async def _trim_below(self, *, arranged: bool = False) -> None:
        """Unmount the newest blocks while the window is over its size, those under the view only
        (never a block shown): the view does not move. The reply being streamed into goes too
        when it is under the view: its text keeps arriving in its record, and mounting it again
        hands its stream to the new widget (``_widget_for``); kept, it would stop every trim while
        the user pages back, and the window would grow with every page. ``arranged``: blocks
        were just mounted, so where the others are is arranged anew, not read."""
        excess = self.mounted_blocks - MAX_MOUNTED
        weight = self.mounted_weight - MAX_WEIGHT
        size = self.scrollable_content_region.size
        if (excess <= 0 and weight <= 0) or not size:
            return
        below = self.scroll_y + size.height
        # A step reads the last layout (it runs after one); right after blocks were mounted
        # above that places those below too high, which would only keep more of them.
        where = tops(self, size) if arranged else laid_out_tops(self)
        doomed: list[Widget] = []
        while self._last_mounted > self._first_mounted and (excess > 0 or weight > 0):
            record = self.records[self._last_mounted - 1]
            widget = record.widget
            if widget is None or where.get(widget, 0) < below:
                break
            doomed.append(widget)
            record.widget = None
            self._last_mounted -= 1
            self._window_at_end = False
            excess -= 1
            weight -= record.weight
        if doomed:
            self._keep_focus_off(doomed)
            forget_lines(doomed)
            with self.app.batch_update():
                await self.remove_children(doomed)
                self._update_marker()
                presize(self)

    def _keep_focus_off(self, doomed: list[Widget]) -> None:
        """A focused block about to be unmounted hands the focus to the stream, without scrolling:
        else Textual gives it to the next focusable widget and scrolls to that one, a jump of
        the view (seen paging up in a terminal, after shift+tab had focused a tool call)."""
        focused = self.screen.focused
        if focused is not None and any(focused is block or block in focused.ancestors for block in doomed):
            # Set now: `focus()` only asks for it on the next message, after the removal has
            # begun, and Textual's pruning gives the focus to a neighbour and scrolls to it.
            self.screen.set_focus(self, scroll_visible=False)

    async def action_show_later(self) -> None:
        """Mount the next page under the window, keeping the view still; unload at the top."""
        if self.at_end:
            return
        stop = min(len(self.records), self._last_mounted + PAGE)
        widgets = [self._widget_for(record) for record in self.records[self._last_mounted : stop]]
        anchor_widget = next((r.widget for r in reversed(self.records[self._first_mounted : self._last_mounted])
                              if r.widget is not None), None)
        self._last_mounted = stop
        self._window_at_end = stop == len(self.records)
        with self.app.batch_update():
            await self.mount_all(widgets, before=self._later)
            await self._unload_top(count=MAX_MOUNTED, weight=MAX_WEIGHT)
        if anchor_widget is not None:
            self._settling += 1
            self.call_after_refresh(self._keep_in_view, anchor_widget, top=False)

    async def action_jump_to_end(self) -> None:
        """Show the newest blocks and follow the stream again."""
        async with self._above:  # not while older blocks are being mounted above the window
            if not self.at_end:
                doomed = [r.widget for r in self.records[self._first_mounted : self._last_mounted]
                          if r.widget is not None]
                for record in self.records[self._first_mounted : self._last_mounted]:
                    record.widget = None
                self._last_mounted = len(self.records)
                self._window_at_end = True
                self._first_mounted = self._window_start(self._last_mounted, INITIAL)
                widgets = [self._widget_for(record) for record in self.records[self._first_mounted :]]
                forget_lines(doomed)
                with self.app.batch_update():
                    await self.remove_children(doomed)
                    await self.mount_all(widgets, before=self._later)
                self._update_marker()
            self.anchor()

    def _update_marker(self) -> None:
        hidden = self._first_mounted
        self._marker.display = hidden > 0
        if hidden:
            self._marker.show(f"▲ {hidden:,} earlier blocks · scroll up or ctrl+u to show them")
        newer = len(self.records) - self._last_mounted
        self._later.display = newer > 0
        if newer:
            self._later.show(f"▼ {newer:,} newer blocks · scroll down, or end for the newest")

    @on(EarlierMarker.Clicked)
    async def _marker_clicked(self, message: EarlierMarker.Clicked) -> None:
        if message.later:
            await self.action_show_later()
        else:
            await self.action_show_earlier()

    def scroll_to(
        self,
        x: float | None = None,
        y: float | None = None,
        *,
        animate: bool = True,
        speed: float | None = None,
        duration: float | None = None,
        easing: EasingFunction | str | None = None,
        force: bool = False,
        on_complete: CallbackType | None = None,
        level: AnimationLevel = "basic",
        immediate: bool = False,
        release_anchor: bool = True,
    ) -> None:
        """Textual's, but a scroll deferred to after the next refresh goes where it was aimed even
        if blocks were mounted above the view meanwhile (a page-up pressed while a page is being
        mounted ahead): its ``y`` was reckoned before they moved the content down."""
        if y is None or immediate:
            super().scroll_to(x, y, animate=animate, speed=speed, duration=duration, easing=easing, force=force,
                              on_complete=on_complete, level=level, immediate=immediate,
                              release_anchor=release_anchor)
            return
        # Aimed again before the last aim was carried out, or while its animation runs: keys
        # faster than the screen.
        chained = self._aimed is not None or self.app.animator.is_being_animated(self, "scroll_y")
        if release_anchor:
            self.release_anchor()
        self.app.animator.force_stop_animation(self, "scroll_y")
        shifted = self._shifted
        self._aimed = (y, shifted)

        def deferred() -> None:
            if self._aimed == (y, shifted):
                self._aimed = None
            target = y + self._shifted - shifted
            # Above the window's top with older blocks not mounted: the view stops at the top,
            # which mounts the page above (``watch_scroll_y``), and goes on up from there when
            # presses came faster than the screen (each owes its page) or the view could not
            # move at all. A single press that reaches the top stops there, drawn at once: going
            # on would put the page's mount on that key's path (history page-up p95, back to
            # back: 73 → 79-107 ms when every press owed its whole page).
            owes = chained or self.scroll_y <= 0
            self._owed_up = -target if owes and target < 0 and self._first_mounted > 0 else 0.0
            if self._owed_up and self.scroll_y <= 0:
                # Already at the top: no move to it will ask for the page above (keys held down).
                self._ask_earlier()
            super(Conversation, self).scroll_to(
                x, y + self._shifted - shifted, animate=animate, speed=speed, duration=duration, easing=easing,
                force=force, on_complete=on_complete, level=level, immediate=True, release_anchor=False)

        self.call_after_refresh(deferred)

    def _ask_earlier(self) -> None:
        """Mount the page above the window, unless one is already on its way (asked twice in a
        frame, the second worker cancelled the first before it ran)."""
        if not self._showing_earlier:
            self._showing_earlier = True
            self.run_worker(self.action_show_earlier(), group="window", exclusive=True)

    def aimed_y(self) -> float:
        """Where the view is going: the last deferred scroll's target (moved with the blocks
        mounted above since), else the animation's, else where it is."""
        if self._aimed is not None:
            y, shifted = self._aimed
            return y + self._shifted - shifted
        if self.app.animator.is_being_animated(self, "scroll_y"):
            return self.scroll_target_y
        return self.scroll_y

    # Pages counted from where the view is going, not where it is: page-ups pressed within one
    # frame (a key held down, keys faster than the screen redraws) each took the view one screen
    # up from the same row, and ten moved it one page.
    def scroll_page_up(self, *, animate: bool = True, speed: float | None = None, duration: float | None = None,
                       easing: EasingFunction | str | None = None, force: bool = False,
                       on_complete: CallbackType | None = None, level: AnimationLevel = "basic") -> None:
        self.scroll_to(y=self.aimed_y() - self.scrollable_content_region.height, animate=animate, speed=speed,
                       duration=duration, easing=easing, force=force, on_complete=on_complete, level=level)

    def scroll_page_down(self, *, animate: bool = True, speed: float | None = None, duration: float | None = None,
                         easing: EasingFunction | str | None = None, force: bool = False,
                         on_complete: CallbackType | None = None, level: AnimationLevel = "basic") -> None:
        self._owed_up = 0.0
        self.scroll_to(y=self.aimed_y() + self.scrollable_content_region.height, animate=animate, speed=speed,
                       duration=duration, easing=easing, force=force, on_complete=on_complete, level=level)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._scrolled_at = time.monotonic()
        if not self._dropping:
            self._dropping = True
            self.call_after_refresh(self._drop_far_lines)
        if new <= 0 < old and self._first_mounted > 0:
            # Reached the top before the blocks above were mounted ahead (a key held down).
            self._ask_earlier()
        elif new < old:
            self._prefetch()
        elif new >= self.max_scroll_y > old and not self.at_end:
            self.run_worker(self.action_show_later(), group="window", exclusive=True)

    def _keep_in_view(self, widget: Widget, *, top: bool) -> None:
        """After a page was mounted: scroll back to the block the user was reading."""
        self.scroll_to_widget(widget, animate=False, top=top)
        self.call_after_refresh(self._settled)

    def _settled(self) -> None:
        self._settling -= 1
        self._drop_far_lines()

    def _drop_far_lines(self) -> None:
        """Once a scroll has been drawn: the blocks far from the view let go of their lines."""
        self._dropping = False
        # Not while a page just mounted has moved the blocks and the view is not back on the one
        # the user was reading: the blocks about to be shown would look far, and be drawn again.
        if not self._settling:
            drop_far_lines(self)

    @on(ToolCallBlock.Selected)
    def _call_focused(self, message: ToolCallBlock.Selected) -> None:
        message.stop()
        self.post_message(self.CallSelected(message.call_id))
