"""A finished message's paragraphs, lists, headings, code and tables, laid out and drawn as
``Markdown`` lays out its block widgets (textual 8.2.8), in one ``Visual``.

test_finished_blocks compares the two renderings cell by cell and style by style.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Markdown

from agentcli.tui.widgets._flat_table import Table, TableStyles
from agentcli.tui.widgets._part_cache import PartCache, part_key


@dataclass
class Part:
    """A paragraph of a finished message, placed as ``Markdown`` would place its widget."""

    content: Content
    marks: list[str] = field(default_factory=list)
    """Left of the first line, one per list it is in: the bullet if it starts that item, else
    blanks as wide (Markdown's bullet widget is as tall as its item, in the bullet's colour)."""
    gap: int = 0
    """Blank lines above it (the margin between top-level blocks)."""
    kind: str = ""
    """"" for a paragraph, "h1" to "h6" for a heading, "fence" for code (also its component class),
    "table" for a table."""
    table: Table | None = None
    key: tuple[Hashable | None] | None = field(default=None, init=False, repr=False, compare=False)
    """What its lines depend on, once worked out (``_part_cache.part_key``): a part never changes."""

    @property
    def indent(self) -> int:
        return sum(len(mark) for mark in self.marks)


@dataclass
class _Node:
    kind: str
    """paragraph, bullet_list, ordered_list, list_item, h1-h6 or fence."""
    content: Content | None = None
    info: str = ""
    children: list[_Node] = field(default_factory=list)
    rows: list[list[Content]] = field(default_factory=list)
    """A table's cells, the header row first."""


def _tree(source: str) -> list[_Node] | None:
    """Paragraphs, lists, headings, code and tables of ``source``, or None if it has any other kind
    of block (or a heading, code or table inside a list: Markdown's layout of those is not copied)."""
    from markdown_it import MarkdownIt
    from textual.widgets._markdown import MarkdownBlock

    root = _Node("root")
    stack = [root]
    for token in MarkdownIt("gfm-like").parse(source):
        kind = token.type
        if kind in ("paragraph_open", "bullet_list_open", "ordered_list_open", "list_item_open"):
            node = _Node(kind.removesuffix("_open"), info=token.info)
            stack[-1].children.append(node)
            stack.append(node)
        elif kind in ("paragraph_close", "bullet_list_close", "ordered_list_close", "list_item_close"):
            if not stack.pop().children and kind == "list_item_close":
                return None  # an empty item: Markdown's layout of it is not worth copying
        elif kind == "heading_open" and len(stack) == 1:
            node = _Node(token.tag)
            stack[-1].children.append(node)
            stack.append(node)
        elif kind == "heading_close":
            stack.pop()
        elif kind in ("fence", "code_block") and len(stack) == 1:
            from textual.highlight import HighlightTheme, highlight

            # As MarkdownFence highlights outside ANSI mode (finished_block is not used there).
            code = highlight(token.content.rstrip(), language=token.info or None, theme=HighlightTheme)
            stack[-1].children.append(_Node("fence", code))
        elif kind == "table_open" and len(stack) == 1:
            node = _Node("table")
            stack[-1].children.append(node)
            stack.append(node)
        elif stack[-1].kind == "table" and kind in _TABLE_TOKENS:
            if kind == "table_close":
                stack.pop()
            elif kind == "tr_open":
                stack[-1].rows.append([])
            elif kind in ("th_open", "td_open"):
                stack[-1].rows[-1].append(Content(""))
            elif kind == "inline":
                stack[-1].rows[-1][-1] = MarkdownBlock._token_to_content(cast(Any, None), token)
        elif kind == "inline" and stack[-1].kind in ("paragraph", "h1", "h2", "h3", "h4", "h5", "h6"):
            # The inline styling of Markdown's own blocks (a private helper that reads no state:
            # Textual is pinned, and test_finished_blocks compares the two renderings).
            stack[-1].content = MarkdownBlock._token_to_content(cast(Any, None), token)
        else:
            return None  # tables, quotes, rules, html: drawn by Markdown
    tables = [node.rows for node in root.children if node.kind == "table"]
    if any(not rows or any(len(row) != len(rows[0]) for row in rows) for rows in tables):
        return None  # a ragged table: the grid would place its cells differently
    return root.children


_TABLE_TOKENS = {"table_close", "thead_open", "thead_close", "tbody_open", "tbody_close", "tr_open", "tr_close",
                 "th_open", "th_close", "td_open", "td_close", "inline"}


def flat_parts(source: str) -> list[Part] | None:
    """A message as parts laid out like ``Markdown`` lays out its blocks (textual 8.2.8), or None
    if it has blocks other than paragraphs, lists, headings, code and tables.

    Markdown gives a top-level paragraph or list a bottom margin of 1 and nested ones none; a
    list item is a bullet (``Markdown.BULLETS`` by depth, or numbers right-aligned to the
    widest) beside a column of its paragraphs and lists.
    """
    tree = _tree(source)
    if tree is None:
        return None
    parts: list[Part] = []

    def place(nodes: list[_Node], marks: list[str], depth: int, gap: int) -> None:
        for node in nodes:
            if node.kind == "table":
                parts.append(Part(Content(""), [], gap, "table", Table(node.rows)))
            elif node.kind in MARGINS:
                parts.append(Part(node.content or Content(""), [], gap, node.kind))
            elif node.kind == "paragraph":
                parts.append(Part(node.content or Content(""), marks, gap))
            else:
                items = [item for item in node.children if item.kind == "list_item"]
                if node.kind == "ordered_list":
                    try:
                        start = int(items[0].info) if items else 1
                    except ValueError:
                        start = 1
                    width = max((len(f"{n}. ") for n in range(start, start + len(items))), default=0) + 1
                    symbols = [f"{n}. ".rjust(width) for n in range(start, start + len(items))]
                    inner = depth
                else:
                    symbols = [Markdown.BULLETS[depth % len(Markdown.BULLETS)]] * len(items)
                    inner = depth + 1
                for item, symbol in zip(items, symbols, strict=True):
                    place(item.children, [*marks, symbol], inner, gap)
                    marks, gap = [" " * len(mark) for mark in marks], 0
            marks, gap = [" " * len(mark) for mark in marks], 0

    # The stream layout collapses margins: the larger of one block's bottom and the next's top
    # (the first block's top margin included).
    below = 0
    for node in tree:
        top, bottom = MARGINS.get(node.kind, (0, 1))
        place([node], [], 0, max(below, top))
        below = bottom
    return parts


MARGINS = {"h1": (2, 1), "h2": (2, 1), "h3": (1, 1), "h4": (1, 1), "h5": (1, 1), "h6": (1, 1), "fence": (1, 1)}
"""Top and bottom margins of Markdown's block widgets other than paragraphs and lists (0, 1)."""


def _no_key(part: Part) -> None:
    """A finished message is drawn once: its parts are not worth keying (``part_key`` hashes them)."""
    return None


class FlatMarkdown(Visual):
    """Draws the parts of a finished message, each wrapped to the width left of its bullets."""

    def __init__(self, parts: list[Part], styles: dict[str, Style], table: TableStyles | None = None,
                 cache: PartCache | None = None) -> None:
        self.parts = parts
        self.styles = styles
        """The style of each heading level and of code, from the widget's component classes."""
        self.table = table
        """How tables are coloured (None if there is none)."""
        self.cache = cache
        """Lines and heights of parts drawn before (a chunk being streamed into), or None."""
        self.trailing = MARGINS.get(parts[-1].kind, (0, 1))[1] if parts else 0
        """The bottom margin of the last top-level block (Markdown's height includes it)."""

    @staticmethod
    def _measure(part: Part, rules: RulesMap, width: int) -> int:
        if part.kind == "fence":
            return part.content.plain.count("\n") + 3  # one line of padding above and below
        if part.table is not None:
            return part.table.height(width)
        return part.content.get_height(rules, max(1, width - part.indent))

    def part_heights(self, rules: RulesMap, width: int) -> list[int]:
        """Each part's height at ``width``, its gap above included."""
        cache, key = (self.cache, part_key) if self.cache is not None else (PartCache(), _no_key)
        heights = [part.gap + cache.height(key(part), width, partial(self._measure, part, rules, width))
                   for part in self.parts]
        cache.end_measure()
        return heights

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return container_width

    def get_height(self, rules: RulesMap, width: int) -> int:
        return sum(self.part_heights(rules, width)) + self.trailing

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        if not width:
            return []
        # A selection is drawn into the lines: those are not kept.
        if self.cache is not None and options.selection is None:
            cache, key = self.cache, part_key
        else:
            cache, key = PartCache(), _no_key
        cache.begin_render((width, style, tuple(sorted(self.styles.items())), self.table))
        # Margins show only the background, as the space around Markdown's block widgets does.
        background = Style(background=style.background)
        blank = cache.lines(("blank",), lambda: Content(" " * width).render_strips(width, None, background, options))[0]
        lines: list[Strip] = []
        for part in self.parts:
            lines.extend([blank] * part.gap)
            lines.extend(cache.lines(key(part), partial(self._draw, part, width, style, options)))
        lines.extend([blank] * self.trailing)
        cache.end_render()
        return lines if height is None else lines[:height]

    def _draw(self, part: Part, width: int, style: Style, options: RenderOptions) -> list[Strip]:
        if part.kind == "fence":
            return self._fence(part.content, width, options)
        if part.table is not None:
            assert self.table is not None
            return part.table.render(width, self.table, options)
        if part.kind:
            return self._heading(part, width, options)
        body = part.content.render_strips(max(1, width - part.indent), None, style, options)
        if not part.indent:
            return body
        heads = [Content.styled("".join(part.marks), ".bullet"), Content.styled(" " * part.indent, ".bullet")]
        head, margin = (head.render_strips(part.indent, None, style, options)[0] for head in heads)
        return [Strip.join([head if n == 0 else margin, line]) for n, line in enumerate(body)]
    def _heading(self, part: Part, width: int, options: RenderOptions) -> list[Strip]:
        style = self.styles[part.kind]
        content = part.content
        if part.kind == "h1" and content.cell_length < width:
            # MarkdownH1's content-align: center (its padding takes the heading's text style);
            # a heading that wraps fills the width anyway.
            left = (width - content.cell_length) // 2
            right = width - content.cell_length - left
            pad = style + Style(reverse=False)  # as the alignment padding is styled
            content = Content(" " * left).stylize(pad) + content + Content(" " * right).stylize(pad)
        return content.render_strips(width, None, style, options)

    def _fence(self, code: Content, width: int, options: RenderOptions) -> list[Strip]:
        # MarkdownFence: a Label padded 1 2 that never wraps, in a container that clips it.
        style = self.styles["fence"]
        rich = Style(background=style.background).rich_style  # padding shows only the background
        blank = Strip.blank(width, rich)
        lines = [blank]
        indent = Strip.blank(2, rich)
        for line in code.split("\n"):
            line = line.expand_tabs()  # as the Label does, so a tab is as wide as it looks
            strips = [indent]
            if line.cell_length:
                strips.append(line.render_strips(line.cell_length, None, style, options)[0])
            lines.append(Strip.join(strips).crop_extend(0, width, rich))
        lines.append(blank)
        return lines
