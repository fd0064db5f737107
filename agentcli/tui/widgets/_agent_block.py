"""An agent message: one Markdown widget per message, streamed into a slice at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.widgets import Markdown

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
    """

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
