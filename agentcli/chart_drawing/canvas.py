"""A character grid with tagged spans: what the layouts draw into and the widget styles.

A tag names what a run of cells shows (``node:thinking``, ``edge:thinking>executingTool``,
``box:phase_plan``…), so lighting a state or the transition just taken is a restyle of spans
already placed, never a relayout.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol


class NodeLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def parent(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def initial(self) -> bool: ...


class EdgeLike(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def event(self) -> str: ...
    @property
    def cond(self) -> str | None: ...


class GraphLike(Protocol):
    """``ChartGraph``'s shape (read-only members, so its frozen dataclasses fit)."""

    @property
    def nodes(self) -> Sequence[NodeLike]: ...
    @property
    def edges(self) -> Sequence[EdgeLike]: ...


@dataclass(frozen=True)
class Span:
    """A tagged run of columns ``[start, end)`` on one line."""

    start: int
    end: int
    tag: str


@dataclass
class Drawing:
    """Lines of text (all ``width`` wide), the tagged spans on each, and the count slots."""

    lines: list[str] = field(default_factory=list)
    spans: list[list[Span]] = field(default_factory=list)
    count_slots: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """State id -> (line, column, width): where the figure of its visits is written."""

    @property
    def width(self) -> int:
        return max((len(line) for line in self.lines), default=0)

    def tags(self) -> set[str]:
        return {span.tag for spans in self.spans for span in spans}

    def with_counts(self, counts: dict[str, int]) -> list[str]:
        """The lines with each visited state's figure written into its slot (``×3``, ``99+``)."""
        lines = list(self.lines)
        for node, (row, column, width) in self.count_slots.items():
            count = counts.get(node, 0)
            if count:
                text = format_count(count, width)
                lines[row] = lines[row][:column] + text + lines[row][column + width :]
        return lines

    def below(self, other: Drawing, gap: int = 0) -> Drawing:
        """This drawing with ``other`` under it (``gap`` blank lines between), as one rectangle."""
        result = Drawing(list(self.lines), [list(s) for s in self.spans], dict(self.count_slots))
        for _ in range(gap if self.lines and other.lines else 0):
            result.lines.append("")
            result.spans.append([])
        offset = len(result.lines)
        result.lines.extend(other.lines)
        result.spans.extend([list(s) for s in other.spans])
        for node, (row, column, width) in other.count_slots.items():
            result.count_slots[node] = (row + offset, column, width)
        width = result.width
        result.lines = [line.ljust(width) for line in result.lines]
        return result


COUNT_WIDTH = 3
"""Columns for a visit count after a state: ``×3``, ``×42``, ``99+``."""


def format_count(count: int, width: int = COUNT_WIDTH) -> str:
    """``×N`` left-aligned in ``width`` columns; too big to fit shows as ``99+``."""
    text = f"×{count}"
    if len(text) > width:
        text = "9" * (width - 1) + "+"
    return text.ljust(width)


class Canvas:
    """A growable grid of characters; each write may tag the cells it covers."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = []
        self.spans: list[list[Span]] = []
        self.count_slots: dict[str, tuple[int, int, int]] = {}

    def _reach(self, row: int, column: int) -> None:
        while len(self.rows) <= row:
            self.rows.append([])
            self.spans.append([])
        line = self.rows[row]
        if len(line) < column:
            line.extend(" " * (column - len(line)))

    def get(self, row: int, column: int) -> str:
        if row < len(self.rows) and column < len(self.rows[row]):
            return self.rows[row][column]
        return " "

    def put(self, row: int, column: int, text: str, *tags: str) -> None:
        """Write ``text`` at (row, column), tagging its cells with each of ``tags``."""
        self._reach(row, column + len(text))
        self.rows[row][column : column + len(text)] = list(text)
        for tag in tags:
            self.spans[row].append(Span(column, column + len(text), tag))

    def tag(self, row: int, start: int, end: int, tag: str) -> None:
        self._reach(row, end)
        self.spans[row].append(Span(start, end, tag))

    @property
    def height(self) -> int:
        return len(self.rows)

    @property
    def width(self) -> int:
        return max((len(row) for row in self.rows), default=0)

    def paste(self, other: Drawing, row: int, column: int) -> None:
        """Copy another drawing in at (row, column), spans and slots included."""
        for index, line in enumerate(other.lines):
            text = line.rstrip()
            if text:
                self.put(row + index, column, text)
            else:
                self._reach(row + index, 0)
            for span in other.spans[index]:
                self.tag(row + index, span.start + column, span.end + column, span.tag)
        for node, (line_no, col, width) in other.count_slots.items():
            self.count_slots[node] = (line_no + row, col + column, width)

    def boxed(self, title: str, tag: str, *, min_width: int = 0) -> Drawing:
        """This canvas inside a rounded box titled ``title`` (one column of padding each side)."""
        inner = max(self.width, len(title) + 3, min_width - 4)
        total = inner + 4
        lines = [f"╭─ {title} ".ljust(total - 1, "─") + "╮"]
        spans: list[list[Span]] = [[Span(0, total, tag)]]
        for index, row in enumerate(self.rows):
            lines.append("│ " + "".join(row).ljust(inner) + " │")
            spans.append([Span(0, 1, tag), Span(total - 1, total, tag),
                          *(Span(s.start + 2, s.end + 2, s.tag) for s in self.spans[index])])
        lines.append("╰" + "─" * (total - 2) + "╯")
        spans.append([Span(0, total, tag)])
        slots = {node: (row + 1, column + 2, width) for node, (row, column, width) in self.count_slots.items()}
        return Drawing(lines, spans, slots)

    def drawing(self) -> Drawing:
        width = self.width
        return Drawing(["".join(row).ljust(width) for row in self.rows], [list(s) for s in self.spans],
                       dict(self.count_slots))


def truncate(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns, the cut marked with ``…``."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def join_fitting(parts: Iterable[str], width: int, sep: str = ", ") -> str:
    """As many of ``parts`` as fit in ``width``, then ``…``."""
    out = ""
    for part in parts:
        candidate = f"{out}{sep}{part}" if out else part
        if len(candidate) > width - 2 and out:
            return out + sep.rstrip() + " …" if len(out) + 2 + len(sep.rstrip()) <= width else out + "…"
        out = candidate
    return truncate(out, width)
