"""The component-class styles every finished agent message is drawn with, kept once per stream.

Textual makes a virtual node (a ``DOMNode`` with its own styles, matched against the whole
stylesheet) for each of a widget's ``COMPONENT_CLASSES`` whenever the widget is styled: on
mount, and again whenever its ancestors' pseudo-classes change (the conversation taking focus).
A finished message has fifteen (``em``, ``strong``, ``code_inline``, ``bullet``, ``fence``, six
headings, three for tables), so each page of history mounted made 375 nodes and the styles of
80 mounted messages were 1,200 nodes the garbage collector walked at every full collection, all
with the same values. ``FinishedAgentBlock`` reads them from one hidden ``BlockStyles`` instead,
found among its ancestors (``Conversation.block_styles``), so CSS still decides how they look.
A theme switch restyles every node (each drops its cached visual styles) and repaints the
screen, so the messages follow it (test_finished_blocks switches between two dark themes).
"""

from __future__ import annotations

from textual.widget import Widget

COMPONENTS = frozenset({"em", "strong", "s", "code_inline", "bullet", "fence", "h1", "h2", "h3", "h4", "h5", "h6",
                        "table", "table-header", "keyline"})


class BlockStyles(Widget):
    """Never shown: holds the component classes of the finished messages around it."""

    COMPONENT_CLASSES = set(COMPONENTS)
    DEFAULT_CSS = """
    BlockStyles {
        display: none;
        &:dark > .code_inline { background: $warning 10%; color: $text-warning 95%; }
        &:light > .code_inline { background: $error 5%; color: $text-error 95%; }
        &:ansi > .code_inline { background: ansi_default; }
        & > .em { text-style: italic; }
        & > .strong { text-style: bold; }
        & > .s { text-style: strike; }
        & > .bullet { color: $text-primary; }
        &:light > .bullet { color: $text-secondary; }
        & > .fence { color: rgb(210,210,210); background: black 10%; }
        &:light > .fence { background: white 30%; }
        & > .h1 { color: $markdown-h1-color; background: $markdown-h1-background; text-style: $markdown-h1-text-style; }
        & > .h2 { color: $markdown-h2-color; background: $markdown-h2-background; text-style: $markdown-h2-text-style; }
        & > .h3 { color: $markdown-h3-color; background: $markdown-h3-background; text-style: $markdown-h3-text-style; }
        & > .h4 { color: $markdown-h4-color; background: $markdown-h4-background; text-style: $markdown-h4-text-style; }
        & > .h5 { color: $markdown-h5-color; background: $markdown-h5-background; text-style: $markdown-h5-text-style; }
        & > .h6 { color: $markdown-h6-color; background: $markdown-h6-background; text-style: $markdown-h6-text-style; }
        &:light > .table { background: white 30%; }
        & > .table-header { color: $primary; }
        & > .keyline { color: $foreground 20%; }
    }
    """
