"""The chunk of an agent message being streamed into: one widget drawn from the text so far.

``Markdown.append`` parses the tail of the text into new block widgets on every append (a widget
per paragraph, item and table cell, with an unmounted one per table row and cell besides),
compares them with the mounted ones and drops them. Each is a few hundred objects in reference
cycles, so the garbage outlives the young generations and piles up until a full collection frees
hundreds of thousands of objects at once, holding the event loop for a second or more
(bench/tui_streaming.py). This widget instead parses the chunk's text again on each append (a
chunk is short: ``STREAM_CHUNK_CHARS``) and draws it as ``FinishedAgentBlock`` does, the same
look, with no widget per block. A chunk with a block the flat drawing does not know (a quote, a
rule, a table inside a list) turns into plain ``Markdown`` for the rest of its life.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual.await_complete import AwaitComplete

from agentcli.tui.widgets._agent_block import AgentBlock, FinishedAgentBlock
from agentcli.tui.widgets._agent_block import _ansi_colors as ansi_colors
from agentcli.tui.widgets._flat_markdown import FlatMarkdown, Part, flat_parts


def _flat(markdown: str) -> list[Part] | None:
    parts = flat_parts(markdown)
    if parts is None or (any(part.kind == "fence" for part in parts) and ansi_colors()):
        return None
    return parts


class LiveAgentBlock(FinishedAgentBlock):
    """An agent message chunk being streamed into, drawn flat while it can be."""

    def __init__(self, markdown: str, *, classes: str | None = None) -> None:
        parts = _flat(markdown)
        super().__init__(markdown, parts or [], classes=classes)
        self._flat_drawn = parts is not None
        """False once the text has a block only ``Markdown`` draws: it is then a Markdown widget."""

    @property
    def flat(self) -> bool:
        return self._flat_drawn

    @property
    def is_container(self) -> bool:
        return not self._flat_drawn

    @property
    def is_scrollable(self) -> bool:
        return not self._flat_drawn  # the compositor places the children of scrollable widgets only

    def update(self, markdown: str) -> AwaitComplete:
        """Called by ``Markdown`` on mount: Markdown's own when the text is not drawn flat."""
        if self._flat_drawn:
            return AwaitComplete(asyncio.sleep(0))
        return AgentBlock.update(self, markdown)

    def append(self, markdown: str) -> AwaitComplete:
        """Add streamed text: drawn again from the whole chunk, or appended to Markdown's blocks."""
        if not self._flat_drawn:
            return AgentBlock.append(self, markdown)
        source = self._markdown + markdown
        parts = _flat(source)
        self._markdown = source
        if parts is None:
            # From now on Markdown draws it: its blocks are mounted from the whole text.
            self._flat_drawn = False
            self._parts = []
            return AwaitComplete(self._to_markdown(source))
        self._parts = parts
        self.refresh(layout=True)
        return AwaitComplete(asyncio.sleep(0))

    async def _to_markdown(self, source: str) -> None:
        await AgentBlock.update(self, source)
        self.refresh(layout=True)

    def render(self) -> Any:
        if not self._flat_drawn:
            return AgentBlock.render(self)
        flat: FlatMarkdown = super().render()
        return flat
