"""The blocks of the message stream: what the user said, notices, tool calls, the model's
reasoning, the window's edges.

Agent messages are Markdown widgets of their own (``_agent_block``); everything else in the
stream is one of these light widgets, drawn from a record (``_records``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from textual.binding import Binding
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions
from textual.widgets import Static

from agentcli.describe import CALL_MARKS, clip_lines, more_lines
from agentcli.tui.call_details import call_detail
from agentcli.tui.calls import ToolCallInfo, format_duration
from agentcli.tui.widgets._laid_out import LaidOut

if TYPE_CHECKING:
    from textual.css.styles import RulesMap

OUTPUT_LINES = 24
"""Lines of a tool's result shown inline when expanded; the panel shows all of it."""

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def call_widget_id(call_id: str) -> str:
    """A DOM id for a tool call's block (call ids may hold characters ids may not)."""
    return "call-" + _ID_UNSAFE.sub("_", call_id)


# -- blocks ------------------------------------------------------------------------------


class UserBlock(Static, LaidOut):
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


class NoticeBlock(Static, LaidOut):
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


class EarlierMarker(LaidOut):
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


class ToolCallBlock(Static, LaidOut, can_focus=True):
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
    """A call's line and, for edits and commands, their diff or output under it (a few lines
    collapsed, all expanded: ``agentcli.tui.call_details``); other tools show arguments and
    result when expanded."""
    elapsed = format_duration(info.elapsed(now))
    timing = f"running {elapsed}" if info.status == "running" else elapsed
    head = Content.assemble(
        status_mark(info), " ", (info.name, "bold"), "  ", info.preview, "  ", (timing, "$text-muted")
    )
    finished = info.status != "running"
    detail = call_detail(info.name, info.arguments, info.output if finished else "", finished, expanded)
    if detail is not None:
        parts = [head, detail]
        if info.status in ("error", "interrupted") and info.name != "bash" and info.output.strip():
            # A refused edit: why (old_string not found, outside the workspace) under its diff.
            parts.append(Content.styled(clip_lines(info.output, 3)[0][0], "$tool-error"))
        if finished and info.error and info.error not in info.output:
            parts.append(Content.styled(info.error, "$tool-error"))
        return Content("\n").join(parts)
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


class ReasoningBlock(LaidOut, can_focus=True):
    """The model's reasoning before a reply: dimmed, expanded while it streams, then one line.

    Streamed into with ``append``, a coalesced delta at a time. The text is plain (reasoning is
    notes, not a document: no Markdown widgets), each of its lines is wrapped once and kept
    (``_WrappedLines``), and the block draws through the line API, so an append re-wraps only the
    line it grows and a frame draws only the lines on screen. Drawing the whole text per delta
    costs more the longer the model thinks: 22 ms a delta at 100k characters, measured here.
    """

    DEFAULT_CSS = """
    ReasoningBlock { height: auto; margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    ReasoningBlock.-expanded { margin: 1 0 1 0; }
    ReasoningBlock:focus { background: $boost; }
    ReasoningBlock:hover { color: $foreground 70%; }
    ReasoningBlock.-interrupted { border-left: outer $warning; }
    """
    # One key, shown as what it will do now (check_action hides the other).
    BINDINGS = [
        Binding("enter,space", "expand", "Expand", id="agentcli.reasoning.expand",
                tooltip="Show the model's reasoning before this reply"),
        Binding("enter,space", "collapse", "Collapse", id="agentcli.reasoning.collapse",
                tooltip="Fold the model's reasoning to its header line"),
    ]

    expanded: var[bool] = var(True, toggle_class="-expanded")
    """Whether the reasoning's text is shown under its header line."""
    live: var[bool] = var(False, toggle_class="-live")
    """The model is still reasoning (the header says "thinking…")."""

    class Toggled(Message):
        """The user expanded or collapsed the block (the stream remembers it for the record)."""

        def __init__(self, block: ReasoningBlock, expanded: bool) -> None:
            super().__init__()
            self.block = block
            """The block that was toggled."""
            self.expanded = expanded
            """Whether it is now expanded."""

    def __init__(self, text: str = "", *, expanded: bool = True, live: bool = False,
                 classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.lines = _WrappedLines(text)
        self.set_reactive(ReasoningBlock.expanded, expanded)
        self.set_reactive(ReasoningBlock.live, live)
        self.set_class(expanded, "-expanded")
        self.set_class(live, "-live")

    @property
    def text(self) -> str:
        return self.lines.text

    def append(self, text: str) -> None:
        """Add streamed reasoning: the line it grows is wrapped again, the others are kept."""
        if text:
            self.lines.append(text)
            # Only an expanded block grows; a collapsed one repaints its header's count.
            self.refresh(layout=self.expanded)

    def header(self, width: int) -> Content:
        """The first line: what the block is, and how to open or close it."""
        if self.live:
            return Content.assemble(("▾ ", "bold"), ("thinking…", "italic"))
        count = self.lines.height(max(1, width - REASONING_INDENT))
        size = f"thought for {count:,} line{'s' if count != 1 else ''}"
        hint = "enter collapses" if self.expanded else "enter expands"
        return Content.assemble(("▾ " if self.expanded else "▸ ", "bold"), size, (f" — {hint}", "dim"))

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1 + self.lines.height(max(1, width - REASONING_INDENT)) if self.expanded else 1

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.visual_style
        # The widget's styles are read as the rules map, as Visual.to_strips passes them.
        options = RenderOptions(self._get_style, cast("RulesMap", self.styles))
        if y == 0:
            line = self.header(width).truncate(width, ellipsis=True)
            return line.render_strips(width, 1, style, options)[0].adjust_cell_length(width, style.rich_style)
        inner = max(1, width - REASONING_INDENT)
        if not self.expanded or y > self.lines.height(inner):
            return Strip.blank(width, style.rich_style)
        body = self.lines.line(y - 1, inner).render_strips(inner, 1, style + Style(italic=True), options)[0]
        indent = Strip.blank(REASONING_INDENT, style.rich_style)
        return Strip.join([indent, body]).adjust_cell_length(width, style.rich_style)

    def watch_expanded(self) -> None:
        self.refresh(layout=True)
        self.refresh_bindings()

    def watch_live(self) -> None:
        self.refresh()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # False hides the binding (None would show it dimmed), so the footer names what enter does.
        if action == "expand":
            return not self.expanded
        if action == "collapse":
            return self.expanded
        return True

    def action_expand(self) -> None:
        self._set_expanded(True)

    def action_collapse(self) -> None:
        self._set_expanded(False)

    def on_click(self) -> None:
        self._set_expanded(not self.expanded)

    def _set_expanded(self, expanded: bool) -> None:
        """The user's choice: shown, and told to the stream, which keeps it for the record."""
        self.expanded = expanded
        self.post_message(self.Toggled(self, expanded))


REASONING_INDENT = 2
"""Cells the reasoning's text is indented under its header's arrow."""


class _WrappedLines:
    """A text's lines wrapped at one width, kept in order: an append re-wraps only the line it
    grows (and wraps the new ones); a new width wraps everything once."""

    def __init__(self, text: str = "") -> None:
        self._lines = text.split("\n")
        self._width = 0
        self._wrapped: list[Content] = []
        """The wrapped lines of ``_lines[:len(_starts)]`` at ``_width``."""
        self._starts: list[int] = []
        """Where each source line's wrapped lines start in ``_wrapped``."""

    @property
    def text(self) -> str:
        return "\n".join(self._lines)

    def append(self, text: str) -> None:
        grown = len(self._lines) - 1
        first, *more = text.split("\n")
        self._lines[grown] += first
        self._lines += more
        if grown < len(self._starts):
            del self._wrapped[self._starts[grown] :]
            del self._starts[grown:]

    def _wrap(self, width: int) -> list[Content]:
        width = max(1, width)  # 0 for a frame while a resize narrows the screen: wrap(0) raises
        if width != self._width:
            self._width, self._wrapped, self._starts = width, [], []
        for index in range(len(self._starts), len(self._lines)):
            self._starts.append(len(self._wrapped))
            self._wrapped += Content(self._lines[index]).expand_tabs().wrap(width) or [Content("")]
        return self._wrapped

    def height(self, width: int) -> int:
        """Lines the text takes at ``width`` cells."""
        return len(self._wrap(width))

    def line(self, y: int, width: int) -> Content:
        """The ``y``th line of the text wrapped at ``width`` cells."""
        return self._wrap(width)[y]


# -- records -----------------------------------------------------------------------------

