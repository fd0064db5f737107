"""The lines and heights of a streamed chunk's parts, kept from one render to the next.

A chunk being streamed into is drawn again on every append, but only its last paragraph (or
table) changed. Wrapping every part again costs CPU, and worse, every line Textual draws becomes
reference-cycle garbage (a ``Strip`` caches itself in its own caches when a crop or a padding
leaves it as it was): the chunk's lines, drawn anew at each frame, filled the young generations
and set off a full collection about once a second, each 0.1-0.2 s under load
(bench/tui_streaming.py). Handing back the same strips for the parts that did not change lets
Textual's own per-strip caches answer, and lets the widget repaint only the lines from the first
changed part down (``LiveAgentBlock.append``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from textual.content import Content
from textual.strip import Strip

if TYPE_CHECKING:
    from agentcli.tui.widgets._flat_markdown import Part

PartKey = Hashable


def _content_key(content: Content) -> tuple[str, tuple[object, ...]]:
    return content.plain, tuple(content.spans)


def part_key(part: Part) -> PartKey | None:
    """What a part's lines depend on besides the width and the widget's styles, or None if that
    cannot be told by value (a style in it is not hashable): such a part is drawn every time."""
    if part.key is None:
        part.key = (_key(part),)
    return part.key[0]


def _key(part: Part) -> PartKey | None:
    table = None if part.table is None else tuple(tuple(_content_key(cell) for cell in row) for row in part.table.rows)
    key = (part.kind, tuple(part.marks), _content_key(part.content), table)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class PartCache:
    """Each part's lines (at one width and look) and heights (by width), kept while it is in use.

    Entries not asked for in a render or a measure are dropped at the next one, so the cache holds
    at most the chunk's current parts; any change of the width or styles drops the lines.
    """

    def __init__(self) -> None:
        self._look: Hashable = None
        self._lines: dict[PartKey, list[Strip]] = {}
        self._used: dict[PartKey, list[Strip]] = {}
        self._heights: dict[tuple[PartKey, int], int] = {}
        self._measured: dict[tuple[PartKey, int], int] = {}

    def clear(self) -> None:
        self._look = None
        self._lines.clear()
        self._used.clear()
        self._heights.clear()
        self._measured.clear()

    def begin_render(self, look: Hashable) -> None:
        """Start drawing with ``look`` (width, styles): lines drawn with another are dropped."""
        if look != self._look:
            self._look = look
            self._lines.clear()
        self._used = {}

    def lines(self, key: PartKey | None, draw: Callable[[], list[Strip]]) -> list[Strip]:
        """The lines under ``key`` (``part_key``, or another key for lines that are not a part)."""
        if key is None:
            return draw()
        found = self._used.get(key)
        if found is None:
            found = self._lines.get(key)
        if found is None:
            found = draw()
        self._used[key] = found
        return found

    def end_render(self) -> None:
        self._lines, self._used = self._used, {}

    def height(self, key: PartKey | None, width: int, measure: Callable[[], int]) -> int:
        """The height under ``key`` (``part_key``) at ``width``."""
        if key is None:
            return measure()
        found = self._measured.get((key, width))
        if found is None:
            found = self._heights.get((key, width))
        if found is None:
            found = measure()
        self._measured[(key, width)] = found
        return found

    def end_measure(self) -> None:
        self._heights, self._measured = self._measured, {}
