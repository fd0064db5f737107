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

While it streams, the lines of the parts that did not change are kept (``PartCache``) and only
the lines from the first changed part down are repainted; it is laid out again (with the whole
conversation) only when its height changes.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from textual.await_complete import AwaitComplete
from textual.css.styles import RulesMap
from textual.geometry import Region

from agentcli.tui.widgets._agent_block import AgentBlock, FinishedAgentBlock
from agentcli.tui.widgets._agent_block import _ansi_colors as ansi_colors
from agentcli.tui.widgets._flat_markdown import MARGINS, FlatMarkdown, Part, flat_parts
from agentcli.tui.widgets._part_cache import PartCache, part_key


def _flat(markdown: str) -> list[Part] | None:
    parts = flat_parts(markdown)
    if parts is None or (any(part.kind == "fence" for part in parts) and ansi_colors()):
        return None
    return parts


def _flat_or_held(source: str) -> tuple[list[Part] | None, bool]:
    """The parts to draw ``source`` flat, and whether its last line is held back to get them.

    A line still arriving can make a block the flat drawing does not know for a moment (a list's
    next "-" before its words: an empty item). It waits for its line to end."""
    parts = _flat(source)
    if parts is None and "\n" in source and not source.endswith("\n"):
        parts = _flat(source[: source.rindex("\n") + 1])
        return parts, parts is not None
    return parts, False


class LiveAgentBlock(FinishedAgentBlock):
    """An agent message chunk being streamed into, drawn flat while it can be."""

    def __init__(self, markdown: str, *, classes: str | None = None) -> None:
        parts, held = _flat_or_held(markdown)
        super().__init__(markdown, parts or [], classes=classes)
        self._flat_drawn = parts is not None
        """False once the text has a block only ``Markdown`` draws: it is then a Markdown widget."""
        self._part_cache = PartCache()
        self._held = held
        """The last line (still arriving) is not drawn yet: with it, the text is not flat."""

    def stream_ended(self) -> None:
        # Nothing changes any more: the kept lines would only be more for the collector to walk.
        self._part_cache = None
        if self._held:  # the held line never became flat: Markdown draws the whole text
            self.call_next(self._to_markdown_now, self._markdown)

    def notify_style_update(self) -> None:
        # A theme or style change can restyle the lines (the bullets' class) under the same keys.
        if self._part_cache is not None:
            self._part_cache.clear()
        super().notify_style_update()

    @property
    def shown(self) -> str:
        """The text on screen: the source, but for a last line held back until it ends."""
        return self._markdown[: self._markdown.rindex("\n") + 1] if self._held else self._markdown

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
        parts, self._held = _flat_or_held(source)
        self._markdown = source
        if parts is None:
            return self._to_markdown_now(source)
        old, self._parts = self._parts, parts
        self._refresh_changed(old, parts)
        return AwaitComplete(asyncio.sleep(0))

    def _refresh_changed(self, old: list[Part], new: list[Part]) -> None:
        """Repaint from the first part that changed down; lay out again only if the height did."""
        width = self.content_size.width
        if self._part_cache is None or not width or not self.is_mounted:
            self.refresh(layout=True)
            return
        first = next((n for n, (a, b) in enumerate(zip(old, new, strict=False))
                      if part_key(a) is None or part_key(a) != part_key(b)), min(len(old), len(new)))
        rules = cast(RulesMap, self.styles)  # as Textual measures a visual: with the widget's styles
        before = FlatMarkdown(old, {}, cache=self._part_cache).part_heights(rules, width)
        after = FlatMarkdown(new, {}, cache=self._part_cache).part_heights(rules, width)
        if sum(before) + _trailing(old) != sum(after) + _trailing(new):
            self.refresh(layout=True)  # taller: the conversation lays it out (and repaints it all)
            return
        top = sum(after[:first])
        bottom = sum(after) + _trailing(new)
        if top < bottom:
            self.refresh(Region(0, top, width, bottom - top))

    def _to_markdown_now(self, source: str) -> AwaitComplete:
        # From now on Markdown draws it: its blocks are mounted from the whole text.
        self._flat_drawn = False
        self._held = False
        self._parts = []
        return AwaitComplete(self._to_markdown(source))

    async def _to_markdown(self, source: str) -> None:
        await AgentBlock.update(self, source)
        # Markdown.update assumes the last line starts the last block, and the appends after it
        # would parse from there: a list or table that began earlier would be replaced by its
        # last item. They parse from where the last top-level block starts (a private field,
        # as in textual 8.2.8, which is pinned).
        from markdown_it import MarkdownIt

        starts = [token.map[0] for token in MarkdownIt("gfm-like").parse(source) if token.map and token.level == 0]
        self._last_parsed_line = starts[-1] if starts else 0
        self.refresh(layout=True)

    def render(self) -> Any:
        if not self._flat_drawn:
            return AgentBlock.render(self)
        flat: FlatMarkdown = super().render()
        return flat


def _trailing(parts: list[Part]) -> int:
    return MARGINS.get(parts[-1].kind, (0, 1))[1] if parts else 0
