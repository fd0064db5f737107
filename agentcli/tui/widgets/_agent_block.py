"""An agent message chunk as a widget: ``Markdown`` (``AgentBlock``), or one widget that looks the same.

A chunk that is no longer streaming (history, or reopened in the window) is drawn by
``FinishedAgentBlock`` instead: the same look in one widget, not one per paragraph, list, item,
bullet and table cell. Mounting a page of those and laying out the window is what paging back
costs. The chunk being streamed into is ``_live_block.LiveAgentBlock``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.await_complete import AwaitComplete
from textual.color import Color
from textual.css.styles import RenderStyles
from textual.widgets import Markdown

from agentcli.tui.widgets._block_styles import BlockStyles
from agentcli.tui.widgets._flat_markdown import FlatMarkdown, Part, flat_parts
from agentcli.tui.widgets._flat_table import TableStyles
from agentcli.tui.widgets._laid_out import LaidOut
from agentcli.tui.widgets._part_cache import PartCache

MAX_APPEND_CHARS = 1000
"""Most text one ``Markdown.append`` gets: each append parses and mounts its blocks in one go."""


class AgentBlock(Markdown):
    """One agent message, streamed into while the model speaks."""

    DEFAULT_CSS = """
    AgentBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        layout: stream;
    }
    AgentBlock.-interrupted { border-left: outer $warning; }
    AgentBlock.-cont { margin: 0; }
    AgentBlock.-reasoned { margin: 0; }
    """

    def stream_ended(self) -> None:
        """Everything streamed into this chunk is in it (``SlicedStream`` calls this once)."""

    def on_markdown_table_of_contents_updated(self, message: Markdown.TableOfContentsUpdated) -> None:
        # Posted on every append; nothing here shows a table of contents, so it stops here
        # instead of queueing up in the conversation during a fast stream.
        message.stop()


class SlicedStream:
    """Like ``Markdown.get_stream``'s MarkdownStream, but each append is at most a slice.

    MarkdownStream joins everything that arrived during an append into the next one. That keeps
    up at model speeds, but a burst (a fast local model, a replayed reply, the coalescer's
    catch-up after a stall) becomes one append of thousands of characters, which parses and
    mounts hundreds of blocks without returning to the event loop: measured here, 8,000
    characters stalled input for over a second. Appending bounded slices, cut at line ends,
    lets keys and repaints in between; the pending text is one growing string, never a queue
    of messages.
    """

    def __init__(self, markdown: Markdown, max_chars: int = MAX_APPEND_CHARS, *,
                 after: SlicedStream | None = None, on_done: Callable[[], object] | None = None) -> None:
        """
        Args:
            markdown: The widget to append to.
            max_chars: The most text one append gets.
            after: A stream to let finish first (the previous chunk of the same reply), so one
                reply renders in order and never two appends compete.
            on_done: Called once everything is appended.
        """
        self.markdown = markdown
        self.max_chars = max_chars
        self._after = after
        self._on_done = on_done
        self._pending = ""
        self._wake = asyncio.Event()
        self._stopping = False
        self._task = asyncio.create_task(self._run())

    @property
    def pending(self) -> int:
        """Characters received but not yet appended."""
        return len(self._pending)

    def write(self, fragment: str) -> None:
        """Queue text; it is appended in the background, a slice at a time."""
        if fragment:
            self._pending += fragment
            self._wake.set()

    def finish(self) -> None:
        """No more text will come: append what is pending, then end (without waiting for it)."""
        self._stopping = True
        self._wake.set()

    @property
    def done(self) -> bool:
        return self._task.done()

    async def wait(self) -> None:
        """Wait until everything written is in the widget."""
        await asyncio.wait([self._task])

    def _next_slice(self) -> str:
        text = self._pending
        if len(text) <= self.max_chars:
            self._pending = ""
            return text
        cut = text.rfind("\n", 0, self.max_chars)
        cut = cut + 1 if cut > 0 else self.max_chars
        self._pending = text[cut:]
        return text[:cut]

    async def _run(self) -> None:
        try:
            await self._append_all()
        finally:
            if isinstance(self.markdown, AgentBlock):
                self.markdown.stream_ended()
            if self._on_done is not None:
                self._on_done()

    async def _append_all(self) -> None:
        if self._after is not None:
            await self._after.wait()
            self._after = None
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                if not self.markdown.is_attached:  # unloaded or the app is closing
                    self._pending = ""
                    return
                await asyncio.shield(self.markdown.append(self._next_slice()))
                await asyncio.sleep(0)  # let keys and repaints through between slices
            if self._stopping:
                return


# -- finished messages -------------------------------------------------------------------


class FinishedAgentBlock(AgentBlock, LaidOut):
    """An agent message that no longer changes, drawn as one widget that looks like ``AgentBlock``.

    ``Markdown`` mounts a widget per paragraph, list, item and bullet (about a dozen for a short
    reply with a list), and every one is styled on mount and laid out with the window, which is
    most of what mounting a page of history costs. Paragraphs, lists, headings, code and tables
    are drawn this way; ``finished_block`` keeps ``AgentBlock`` for anything else (quotes, rules).
    """

    # Its component classes (em, strong, code, bullet, fence, headings, tables) are not its own:
    # it reads them from the stream's one ``BlockStyles`` (``_block_styles``), which styles them.

    def __init__(self, markdown: str, parts: list[Part], *, classes: str | None = None) -> None:
        super().__init__(markdown, classes=classes)
        self._markdown = markdown
        self._parts = parts
        self._part_cache: PartCache | None = None
        """Lines of parts drawn before, while the chunk is streamed into (``LiveAgentBlock``)."""
        self._style_host: BlockStyles | None = None
        """Where its component classes are styled: the nearest ``block_styles`` of its ancestors."""

    def get_component_styles(self, *names: str) -> RenderStyles:
        host = self._style_host
        if host is None or not host.is_attached:
            hosts = (getattr(node, "block_styles", None) for node in self.ancestors)
            host = self._style_host = next(
                (found for found in hosts if isinstance(found, BlockStyles) and found.is_attached), None)
            if host is None:
                raise LookupError("a finished agent message is drawn inside a container with a mounted "
                                  "`block_styles` (BlockStyles), such as the Conversation")
        return host.get_component_styles(*names)

    @property
    def is_container(self) -> bool:
        return False  # Markdown's layout rule is set, but this widget has no children

    @property
    def is_scrollable(self) -> bool:
        return False

    def on_unmount(self) -> None:
        # Unloaded, this widget is cyclic garbage (a widget and its styles refer to each other)
        # that waits for a full collection, and so would everything it still holds: the lines it
        # drew (a few thousand strips, each with its caches) and its parts. Dropped now, they
        # are freed at once by reference counting, and the garbage is a few hundred objects.
        self._parts = []
        self._part_cache = None
        self._style_host = None
        self._styles_cache.clear()
        self._layout_cache.clear()

    def update(self, markdown: str) -> AwaitComplete:
        """Called by ``Markdown`` on mount: the parts were made with the widget."""
        return AwaitComplete(asyncio.sleep(0))

    def append(self, markdown: str) -> AwaitComplete:
        raise TypeError("a finished agent message is not streamed into; use AgentBlock")

    def render(self) -> FlatMarkdown:
        kinds = {part.kind for part in self._parts if part.kind and part.kind != "table"}
        table = None
        if any(part.table is not None for part in self._parts):
            base = self.get_visual_style("table")
            # As the grid draws keylines: their colour over the table's background.
            keyline = (base.background or Color(0, 0, 0, 0)) + self.get_component_styles("keyline").color
            table = TableStyles(base, self.get_visual_style("table", "table-header"), keyline)
        return FlatMarkdown(self._parts, {kind: self.get_visual_style(kind) for kind in kinds}, table,
                            self._part_cache)

    async def action_link(self, href: str) -> None:
        self.post_message(Markdown.LinkClicked(self, href))


def _ansi_colors() -> bool:
    """True if the app draws with the terminal's ANSI colours, where MarkdownFence looks different
    (no background or side padding, the ANSI highlight theme): code is then left to Markdown."""
    from textual._context import active_app

    try:
        return active_app.get().native_ansi_color
    except LookupError:
        return False


def finished_block(markdown: str, classes: str | None = None) -> AgentBlock:
    """The widget for a message that is not streaming: one widget when it can be, else Markdown."""
    parts = flat_parts(markdown)
    if parts is None or (any(part.kind == "fence" for part in parts) and _ansi_colors()):
        return AgentBlock(markdown, classes=classes)
    return FinishedAgentBlock(markdown, parts, classes=classes)
