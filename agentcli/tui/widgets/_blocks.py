"""The blocks of the message stream: what the user said, notices, tool calls, the window's edges.

Agent messages are Markdown widgets of their own (``_agent_block``); everything else in the
stream is one of these light widgets, drawn from a record (``_records``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from textual.binding import Binding
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from agentcli.describe import CALL_MARKS, clip_lines, more_lines
from agentcli.tui.calls import ToolCallInfo, format_duration

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


class NoticeBlock(Static):
    """A line of the describer's (``agentcli.describe``): a retry, an error, a question, a turn's end.

    Its classes are ``-{role}`` (and ``-turn`` for a turn's end): the describer says what kind of
    line it is, this stylesheet how that kind looks.
    """

    DEFAULT_CSS = """
    NoticeBlock { padding: 0 1; color: $text-muted; }
    NoticeBlock.-warning { color: $warning; }
    NoticeBlock.-error { color: $error; text-style: bold; }
    NoticeBlock.-stuck { color: $warning; border-left: outer $warning; }
    NoticeBlock.-turn { margin: 1 0 0 0; text-style: bold; }
    NoticeBlock.-turn-completed { color: $success; }
    NoticeBlock.-turn-paused, NoticeBlock.-turn-approval { color: $warning; }
    NoticeBlock.-turn-halted, NoticeBlock.-turn-error { color: $error; }
    NoticeBlock.-question, NoticeBlock.-permission {
        color: $secondary; text-style: bold; border-left: outer $secondary;
    }
    NoticeBlock.-restore { color: $accent; }
    NoticeBlock.-context { color: $text-muted; border-left: outer $primary; }
    """


class EarlierMarker(Widget):
    """A line at an end of the window saying how many blocks are not shown there; click to load.

    Not a ``Static``: ``Static.update`` repaints the whole widget, and finding how big it is
    when it is off screen (the marker under the window, while paging back) arranges every
    mounted block, the same work again as the layout that follows. ``show`` repaints a region.
    """

    DEFAULT_CSS = """
    EarlierMarker { height: auto; color: $text-muted; text-align: center; width: 1fr; }
    EarlierMarker:hover { color: $accent; }
    """

    class Clicked(Message):
        """The user asked for the blocks beyond this marker."""

        def __init__(self, later: bool) -> None:
            super().__init__()
            self.later = later
            """True for the marker under the window (newer blocks)."""

    def __init__(self, *, later: bool = False) -> None:
        super().__init__()
        self.later = later
        self._text = ""

    def render(self) -> Content:
        return Content(self._text)

    def show(self, text: str) -> None:
        """Say ``text``, laying out again only if its length changed (it may wrap differently)."""
        if text != self._text:
            relayout = len(text) != len(self._text)
            self._text = text
            # Any region: repainting the widget is the point, and a region spares _set_dirty
            # from asking for the widget's size.
            self.refresh(Region(0, 0, 10_000, 10), layout=relayout)

    def on_click(self) -> None:
        self.post_message(self.Clicked(self.later))


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

    # Shadows DOMNode's generic `toggle(attribute)` action on purpose: the key toggles this call.
    def action_toggle(self) -> None:  # type: ignore[override]
        self.expanded = not self.expanded

    def on_click(self) -> None:
        self.expanded = not self.expanded

    def on_focus(self) -> None:
        self.post_message(self.Selected(self.info.call_id))


_MARK_STYLES = {"running": "$tool-running", "ok": "$tool-ok", "error": "bold $tool-error",
                "interrupted": "$warning"}


def status_mark(info: ToolCallInfo) -> Content:
    """The call's mark (the headless printer's), in its status colour."""
    return Content.styled(CALL_MARKS[info.status], _MARK_STYLES[info.status])


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
        lines, hidden = clip_lines(info.output or "", OUTPUT_LINES)
        title = "result" if info.status == "ok" else f"result ({info.status})"
        parts.append(Content.styled(title, "italic $text-muted"))
        parts.append(Content("\n".join(lines)))
        if hidden:
            parts.append(Content.styled(f"{more_lines(hidden)} in the tool panel", "$text-muted"))
        if info.error and info.error not in info.output:
            parts.append(Content.styled(info.error, "$tool-error"))
    return Content("\n").join(parts)


# -- records -----------------------------------------------------------------------------

