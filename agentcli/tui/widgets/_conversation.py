"""The message stream: what the user said, what the agent says (streamed), what it did.

One ``Markdown`` widget per agent message, streamed with ``Markdown.get_stream``; tool calls are
keyed blocks updated per status change, never per token. Every block is first a light record;
only the newest ``MAX_MOUNTED`` are widgets, so the DOM stays bounded however long the session.
Scrolling to the top mounts the previous page again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from textual import on
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from agentcli.events import (
    AssistantMessage,
    ClarificationAnswered,
    ClarificationRequested,
    ErrorOccurred,
    Event,
    Notice,
    PermissionDecided,
    PermissionRequested,
    PlanUpdated,
    ProgressReported,
    RetryScheduled,
    SessionStarted,
    SnapshotRestored,
    StuckDetected,
    TextDelta,
    ThoughtRecorded,
    ToolCallFinished,
    ToolCallStarted,
    TurnEnded,
    UserMessage,
)
from agentcli.tui.calls import ToolCallInfo, ToolCalls, format_duration
from agentcli.tui.messages import SessionEventPosted

MAX_MOUNTED = 160
"""Blocks kept as widgets; older ones are records only until scrolled back to."""
PAGE = 40
"""Blocks mounted or pruned at a time."""
OUTPUT_LINES = 24
"""Lines of a tool's result shown inline when expanded; the panel shows all of it."""

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def call_widget_id(call_id: str) -> str:
    """A DOM id for a tool call's block (call ids may hold characters ids may not)."""
    return "call-" + _ID_UNSAFE.sub("_", call_id)


# -- blocks ------------------------------------------------------------------------------


class UserBlock(Static):
    """Something the user said: a task, an answer, guidance."""

    DEFAULT_CSS = """
    UserBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: outer $primary;
        background: $boost;
    }
    UserBlock.-answer { border-left: outer $secondary; }
    """


class AgentBlock(Markdown):
    """One agent message, streamed into while the model speaks."""

    DEFAULT_CSS = """
    AgentBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        layout: stream;
    }
    AgentBlock.-interrupted { border-left: outer $warning; }
    """


class NoticeBlock(Static):
    """A notice, retry, error, stuck warning, progress summary or turn end."""

    DEFAULT_CSS = """
    NoticeBlock { padding: 0 1; color: $text-muted; }
    NoticeBlock.-warning { color: $warning; }
    NoticeBlock.-error { color: $error; text-style: bold; }
    NoticeBlock.-stuck { color: $warning; border-left: outer $warning; }
    NoticeBlock.-turn { margin: 1 0 0 0; text-style: bold; }
    NoticeBlock.-completed { color: $success; }
    NoticeBlock.-paused { color: $warning; }
    NoticeBlock.-halted, NoticeBlock.-error { color: $error; }
    NoticeBlock.-question { color: $secondary; text-style: bold; border-left: outer $secondary; }
    NoticeBlock.-restore { color: $accent; }
    """


class EarlierMarker(Static):
    """The line at the top that says how many older blocks are not shown, and loads them."""

    DEFAULT_CSS = """
    EarlierMarker { color: $text-muted; text-align: center; width: 1fr; }
    EarlierMarker:hover { color: $accent; }
    """

    class Clicked(Message):
        """The user asked for older blocks."""

    def on_click(self) -> None:
        self.post_message(self.Clicked())


class ToolCallBlock(Static, can_focus=True):
    """A tool call inline in the stream: one line collapsed; arguments and result expanded."""

    DEFAULT_CSS = """
    ToolCallBlock { padding: 0 1; margin: 0 0 0 2; color: $text-muted; }
    ToolCallBlock:focus { background: $boost; color: $foreground; }
    ToolCallBlock.-expanded { color: $foreground; border-left: outer $panel-lighten-2; }
    """
    BINDINGS = [
        Binding("enter,space", "toggle", "Expand", id="agentcli.call.toggle",
                tooltip="Show or hide this tool call's arguments and result"),
    ]

    expanded: var[bool] = var(False, toggle_class="-expanded")
    """Whether arguments and result are shown."""

    class Selected(Message):
        """The user moved to this call in the stream."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id
            """The tool call's id."""

    def __init__(self, info: ToolCallInfo, clock: Callable[[], float]) -> None:
        super().__init__(id=call_widget_id(info.call_id))
        self.info = info
        self._clock = clock

    def render(self) -> Content:
        return render_call(self.info, self._clock(), expanded=self.expanded)

    def watch_expanded(self) -> None:
        self.refresh(layout=True)

    def action_toggle(self) -> None:
        self.expanded = not self.expanded

    def on_click(self) -> None:
        self.expanded = not self.expanded

    def on_focus(self) -> None:
        self.post_message(self.Selected(self.info.call_id))


def status_mark(info: ToolCallInfo) -> Content:
    return {
        "running": Content.styled("◌", "$tool-running"),
        "ok": Content.styled("✓", "$tool-ok"),
        "error": Content.styled("✗", "bold $tool-error"),
        "interrupted": Content.styled("⏸", "$warning"),
    }[info.status]


def render_call(info: ToolCallInfo, now: float, *, expanded: bool) -> Content:
    """A call's line (and, expanded, its arguments and result)."""
    elapsed = format_duration(info.elapsed(now))
    timing = f"running {elapsed}" if info.status == "running" else elapsed
    head = Content.assemble(
        status_mark(info), " ", (info.name, "bold"), "  ", info.preview, "  ", (timing, "$text-muted")
    )
    if not expanded:
        return head
    parts = [head, Content.styled("arguments", "italic $text-muted"), Content(info.pretty_arguments)]
    if info.status != "running":
        lines = (info.output or "").rstrip().splitlines()
        parts.append(Content.styled("result" if info.status == "ok" else f"result ({info.status})", "italic $text-muted"))
        parts.append(Content("\n".join(lines[:OUTPUT_LINES])))
        if len(lines) > OUTPUT_LINES:
            parts.append(Content.styled(f"… {len(lines) - OUTPUT_LINES} more lines in the tool panel", "$text-muted"))
        if info.error and info.error not in info.output:
            parts.append(Content.styled(info.error, "$tool-error"))
    return Content("\n").join(parts)


# -- records -----------------------------------------------------------------------------


@dataclass
class Record:
    """One block of the stream, whether or not it is mounted."""

    kind: str
    """user, answer, agent, call, notice."""
    text: str = ""
    classes: str = ""
    call_id: str | None = None
    widget: Widget | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Conversation(VerticalScroll, can_focus=True):
    """Owns the stream's DOM: records events as blocks, streams agent text, prunes old blocks."""

    DEFAULT_CSS = """
    Conversation { height: 1fr; padding: 0 1; scrollbar-gutter: stable; }
    """
    BLANK = True
    BINDINGS = [
        Binding("ctrl+u", "show_earlier", "Earlier", id="agentcli.stream.earlier", show=False,
                tooltip="Show older messages that were unloaded to keep the app fast"),
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
        self._stream: MarkdownStream | None = None
        self._streaming: Record | None = None
        self._marker = EarlierMarker("")
        self._marker.display = False
        self._call_records: dict[str, Record] = {}
        self._awaiting_permission = False

    def compose(self) -> Iterable[Widget]:
        yield self._marker

    def on_mount(self) -> None:
        self.anchor()

    # -- public --------------------------------------------------------------------------

    @property
    def mounted_blocks(self) -> int:
        return len(self.records) - self._first_mounted

    async def clear(self) -> None:
        """Forget every block (switching sessions)."""
        await self._end_stream(interrupted=False)
        await self.remove_children([r.widget for r in self.records if r.widget is not None])
        self.records.clear()
        self._call_records.clear()
        self._awaiting_permission = False
        self._first_mounted = 0
        self._update_marker()

    async def load_history(self, events: Iterable[Event]) -> None:
        """Show a reopened session's past: records for all of it, widgets for the newest page."""
        streamed: list[str] = []
        for event in events:
            if isinstance(event, TextDelta):
                streamed.append(event.text)
                continue
            if isinstance(event, AssistantMessage):
                text = event.text or "".join(streamed)
                streamed.clear()
                if text:
                    self.records.append(Record("agent", text, "-interrupted" if event.interrupted else ""))
                continue
            self._record_event(event)
        if streamed:
            self.records.append(Record("agent", "".join(streamed), "-interrupted"))
        self._first_mounted = max(0, len(self.records) - MAX_MOUNTED)
        widgets = [self._widget_for(record) for record in self.records[self._first_mounted :]]
        with self.app.batch_update():
            await self.mount_all(widgets)
        self._update_marker()
        self.anchor()

    def show_call(self, call_id: str) -> None:
        """Expand a tool call's block and scroll to it (selected in the tool panel)."""
        record = self._call_records.get(call_id)
        if record is None:
            return
        if record.widget is None:
            self.notify("That call is in the unloaded part of the stream; scroll up to load it.", severity="warning")
            return
        block = record.widget
        assert isinstance(block, ToolCallBlock)
        block.expanded = True
        self.release_anchor()
        self.scroll_to_widget(block, animate=False, top=True)

    def refresh_running(self) -> None:
        """Repaint running tool calls (their elapsed time)."""
        for call in self.calls.running:
            record = self._call_records.get(call.call_id)
            if record is not None and record.widget is not None:
                record.widget.refresh()

    # -- events --------------------------------------------------------------------------

    async def on_session_event_posted(self, message: SessionEventPosted) -> None:
        event = message.event
        if isinstance(event, TextDelta):
            await self._write(event.text)
            return
        if isinstance(event, AssistantMessage):
            streamed = self._streaming
            await self._end_stream(interrupted=event.interrupted)
            if streamed is None and event.text:
                await self._add(Record("agent", event.text, "-interrupted" if event.interrupted else ""))
            if event.interrupted:
                await self._add(Record("notice", "… reply interrupted", "-warning"))
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
            await self._end_stream(interrupted=False)
        record = self._record_event(event)
        if record is not None:
            await self._mount_new(record)

    def _record_event(self, event: Event) -> Record | None:
        """Turn an event into a record (appended), or None when the stream does not show it."""
        record: Record | None = None
        if isinstance(event, UserMessage):
            record = Record("user", event.text)
        elif isinstance(event, ClarificationAnswered):
            record = Record("answer", event.answer)
        elif isinstance(event, (ToolCallStarted, ToolCallFinished)):
            if event.call_id in self._call_records:
                return None
            if event.call_id not in self.calls:
                if isinstance(event, ToolCallStarted):
                    self.calls.started(event)
                else:
                    self.calls.finished(event)
            record = Record("call", call_id=event.call_id)
            self._call_records[event.call_id] = record
        elif isinstance(event, RetryScheduled):
            record = Record("notice", f"⟳ retry {event.attempt}/{event.max_attempts - 1} in {event.delay_s:.1f}s: "
                            f"{event.error}", "-warning")
        elif isinstance(event, Notice):
            record = Record("notice", f"! {event.text}", "-warning")
        elif isinstance(event, ErrorOccurred):
            record = Record("notice", f"✗ {event.kind} error: {event.message}", "-error")
        elif isinstance(event, StuckDetected):
            verb = "halting" if event.severity == "halt" else "sent a recovery hint"
            record = Record("notice", f"⚠ stuck ({event.rule}), {verb}: {event.evidence}", "-stuck")
        elif isinstance(event, ProgressReported):
            files = ", ".join(event.files_modified[:5]) or "no files"
            record = Record("notice", f"progress: {event.actions} actions, {event.successes} ok, {event.failures} "
                            f"failed, {event.checks_passing} checks passing · {files}")
        elif isinstance(event, ClarificationRequested):
            options = "".join(f"\n  {n}. {option}" for n, option in enumerate(event.options, start=1))
            record = Record("notice", f"? {event.question}{options}", "-question")
        elif isinstance(event, TurnEnded) and self._awaiting_permission:
            self._awaiting_permission = False
            return None  # the turn waits on an approval, which the permission notice shows
        elif isinstance(event, TurnEnded):
            labels = {"completed": "✓ completed", "clarify": "? waiting for your answer", "paused": "⏸ paused",
                      "halted": "■ halted", "error": "✗ error"}
            text = labels[event.outcome] + (f": {event.reason}" if event.reason and event.outcome != "clarify" else "")
            record = Record("notice", text, f"-turn -{event.outcome}")
        elif isinstance(event, SnapshotRestored):
            undo = f" — undo with u on the timeline (snapshot {event.undo_snapshot_id})" if event.undo_snapshot_id else ""
            record = Record("notice", f"↶ restored the workspace to snapshot #{event.target_seq}: {len(event.written)} "
                            f"written, {len(event.deleted)} deleted{undo}", "-restore")
        elif isinstance(event, ThoughtRecorded):
            record = Record("notice", f"💭 {event.number}/{event.total} {event.thought}")
        elif isinstance(event, PlanUpdated):
            steps = "\n".join(f"  {'☑' if step.done else '☐'} {step.title}" for step in event.steps)
            record = Record("notice", f"plan\n{steps}")
        elif isinstance(event, PermissionRequested):
            self._awaiting_permission = True
            record = Record("notice", f"🔒 {event.tool} wants to run: {event.summary}", "-question")
        elif isinstance(event, PermissionDecided):
            self._awaiting_permission = False
            verdict = {"once": "allowed once", "session": "allowed for this session", "always": "always allowed"}[
                event.scope] if event.allowed else "denied"
            record = Record("notice", f"🔒 {verdict}" + (f": {', '.join(event.rules)}" if event.rules else ""))
        elif isinstance(event, SessionStarted) and event.resumed:
            record = Record("notice", f"resumed session {event.session_id}")
        if record is not None:
            self.records.append(record)
        return record

    def _widget_for(self, record: Record) -> Widget:
        if record.kind == "agent":
            widget: Widget = AgentBlock(record.text, classes=record.classes)
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

    async def _write(self, text: str) -> None:
        if self._stream is None:
            record = Record("agent")
            self.records.append(record)
            await self._mount_new(record)
            assert isinstance(record.widget, AgentBlock)
            self._streaming = record
            self._stream = Markdown.get_stream(record.widget)
        assert self._streaming is not None
        self._streaming.text += text
        await self._stream.write(text)

    async def _end_stream(self, *, interrupted: bool) -> None:
        stream, record = self._stream, self._streaming
        self._stream = self._streaming = None
        if stream is not None:
            await stream.stop()
        if record is not None and interrupted:
            record.classes = "-interrupted"
            if record.widget is not None:
                record.widget.add_class("-interrupted")

    # -- mounting and pruning ------------------------------------------------------------

    async def _add(self, record: Record) -> None:
        self.records.append(record)
        await self._mount_new(record)

    async def _mount_new(self, record: Record) -> None:
        await self.mount(self._widget_for(record))
        if self.mounted_blocks > MAX_MOUNTED + PAGE and self.following:
            await self._prune()

    @property
    def following(self) -> bool:
        """True while the view sticks to the newest block (the user has not scrolled away)."""
        return self._anchored and not self._anchor_released

    async def _prune(self) -> None:
        """Unmount the oldest page (the records stay, to be mounted again on scroll-back)."""
        stop = self._first_mounted + PAGE
        streaming = self._streaming
        doomed = []
        for record in self.records[self._first_mounted : stop]:
            if record is streaming:
                break
            if record.widget is not None:
                doomed.append(record.widget)
                record.widget = None
            self._first_mounted += 1
        await self.remove_children(doomed)
        self._update_marker()

    async def action_show_earlier(self) -> None:
        """Mount the previous page of blocks above the oldest shown one, keeping the view still."""
        if self._first_mounted == 0:
            return
        start = max(0, self._first_mounted - PAGE)
        widgets = [self._widget_for(record) for record in self.records[start : self._first_mounted]]
        anchor_widget = next((r.widget for r in self.records[self._first_mounted :] if r.widget is not None), None)
        self._first_mounted = start
        self.release_anchor()
        with self.app.batch_update():
            await self.mount_all(widgets, after=self._marker)
            self._update_marker()
        if anchor_widget is not None:
            self.call_after_refresh(self.scroll_to_widget, anchor_widget, animate=False, top=True)

    def _update_marker(self) -> None:
        hidden = self._first_mounted
        self._marker.display = hidden > 0
        if hidden:
            self._marker.update(f"▲ {hidden:,} earlier blocks · scroll up or ctrl+u to show them")

    @on(EarlierMarker.Clicked)
    async def _earlier_clicked(self) -> None:
        await self.action_show_earlier()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 < old and self._first_mounted > 0:
            self.run_worker(self.action_show_earlier(), group="earlier", exclusive=True)

    @on(ToolCallBlock.Selected)
    def _call_focused(self, message: ToolCallBlock.Selected) -> None:
        message.stop()
        self.post_message(self.CallSelected(message.call_id))
