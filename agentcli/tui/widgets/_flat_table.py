"""A markdown table drawn as lines of a finished message, laid out as ``Markdown`` lays out its own.

``MarkdownTable`` is a grid widget with a widget per cell, keylines drawn around them: a table of
ten rows is thirty widgets to style and lay out with the window, and garbage to collect when it
is unloaded. A finished message draws the same table here, with Textual's own column resolver and
keyline canvas (textual 8.2.8; test_finished_blocks compares the two renderings cell by cell).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from rich.style import Style as RichStyle
from textual._resolve import resolve
from textual.canvas import Canvas, Rectangle
from textual.color import Color
from textual.content import Content
from textual.css.scalar import Scalar
from textual.css.styles import RulesMap
from textual.geometry import Offset, Size
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions

CELL_RULES = cast(RulesMap, {"text_wrap": "wrap", "text_overflow": "ellipsis"})
"""A cell's text rules (``MarkdownTableContent``'s cells wrap, and end a cut word with …)."""
PADDING = 2
"""A cell's padding, one cell either side."""


@dataclass(frozen=True)
class TableStyles:
    """How a table is coloured, from the finished block's component classes."""

    base: Style
    """Body cells and the canvas: the text colour on the table's background."""
    header: Style
    keyline: Color


@dataclass
class Table:
    """A table's cells, the header row first; every row as wide as the header."""

    rows: list[list[Content]]
    _layouts: dict[int, tuple[list[tuple[int, int]], list[int]]] = field(default_factory=dict, repr=False)
    """Columns and row heights by width: the height and the lines are asked for at each layout."""

    def layout(self, width: int) -> tuple[list[tuple[int, int]], list[int]]:
        if (found := self._layouts.get(width)) is None:
            columns = self.columns(width)
            found = self._layouts[width] = (columns, self.row_heights(columns))
        return found

    def columns(self, width: int) -> list[tuple[int, int]]:
        """Each column's offset and width inside the keyline frame, as the grid resolves them:
        as wide as its widest cell, stretched to fill the width or shrunk towards its longest word."""
        widths = [max(cell.get_optimal_width(CELL_RULES, width) for cell in column) + PADDING
                  for column in zip(*self.rows, strict=True)]
        minimums = [max([1] + [cell.get_minimal_width(CELL_RULES) + PADDING for cell in column])
                    for column in zip(*self.rows, strict=True)]
        inner = Size(max(0, width - 2), 0)
        return resolve([Scalar.from_number(w) for w in widths], inner.width, 1, inner, inner,
                       expand=True, shrink=True, minimums=minimums)

    def row_heights(self, columns: list[tuple[int, int]]) -> list[int]:
        return [max(cell.get_height(CELL_RULES, max(0, w - PADDING)) for cell, (_, w) in zip(row, columns, strict=True))
                for row in self.rows]

    def height(self, width: int) -> int:
        heights = self.layout(width)[1]
        return sum(heights) + len(heights) - 1 + 2  # a keyline between rows, and the frame

    def render(self, width: int, styles: TableStyles, options: RenderOptions) -> list[Strip]:
        columns, heights = self.layout(width)
        tops = [sum(heights[:n]) + n for n in range(len(heights))]
        canvas = Canvas(width, sum(heights) + len(heights) + 1)
        # As the grid's keylines: a rectangle around each cell, its sides in the gutters.
        boxes = [Rectangle(Offset(x, y), w + 2, h + 2, styles.keyline)
                 for y, h in zip(tops, heights, strict=True) for x, w in columns]
        # The canvas gives a Rich renderable of strips; its strips are what is drawn here.
        lines = list(canvas.render(boxes, styles.base.rich_style)._strips)
        cell_options = RenderOptions(options.get_style, CELL_RULES)
        blank = Style(background=styles.base.background).rich_style
        for number, (row, top, height) in enumerate(zip(self.rows, tops, heights, strict=True)):
            for cell, (x, w) in zip(row, columns, strict=True):
                body = self._cell(cell, w, height, styles.header if number == 0 else styles.base, number == 0,
                                  cell_options, blank)
                for n, strip in enumerate(body):
                    line = lines[top + 1 + n]
                    lines[top + 1 + n] = Strip.join([line.crop(0, x + 1), strip, line.crop(x + 1 + w, width)])
        return lines

    @staticmethod
    def _cell(cell: Content, width: int, height: int, style: Style, header: bool, options: RenderOptions,
              background: RichStyle) -> list[Strip]:
        """A cell as its Static draws it: padded one cell either side; a header aligned to the
        bottom of its row (``content-align: left bottom``), a body cell at the top."""
        inner = max(0, width - PADDING)
        lines = cell.render_strips(inner, None, style, options)
        fill = (style + Style(reverse=False)).rich_style
        if header:
            lines = list(Strip.align(lines, fill, inner, height, "left", "bottom"))
        lines = [line.extend_cell_length(inner, background) for line in lines[:height]]
        # Lines under the text (the row is taller) are the Static's own blank lines, in its style.
        lines += [Strip.blank(inner, style.rich_style)] * (height - len(lines))
        edge = Strip.blank(1, background)
        return [Strip.join([edge, line, edge]) for line in lines]
