"""The component-class styles every finished agent message is drawn with, kept once per stream.

Textual makes a virtual node (a ``DOMNode`` with its own styles, matched against the whole
stylesheet) for each of a widget's ``COMPONENT_CLASSES`` whenever the widget is styled: on
mount, and again whenever its ancestors' pseudo-classes change (the conversation taking focus).
A finished message has fifteen (``em``, ``strong``, ``code_inline``, ``bullet``, ``fence``, six
headings, three for tables), so each page of history mounted made 375 nodes and the styles of
80 mounted messages were 1,200 nodes the garbage collector walked at every full collection, all
with the same values. ``FinishedAgentBlock`` reads them from one hidden ``BlockStyles`` instead,
found among its ancestors (``Conversation.block_styles``), so CSS still decides how they look.
"""

from __future__ import annotations

from typing import Any

from textual.css.styles import RulesMap
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

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, RulesMap] = {}
        """The component styles the blocks around were last drawn with."""

    def notify_style_update(self) -> None:
        super().notify_style_update()
        # Textual rebuilds the component styles just after this call (Stylesheet.apply): look
        # once it has. A widget's own component styles changing repaints it; theirs must too.
        self.call_next(self._repaint_users)

    def _repaint_users(self) -> None:
        current = {name: styles.get_rules() for name, styles in self._component_styles.items()}
        if current == self._seen or self.parent is None:
            return
        first, self._seen = not self._seen, current
        if first:
            return
        for child in self.parent.children:
            user: Any = child
            if getattr(user, "_style_host", None) is self:
                user.notify_style_update()  # drops the visual styles it cached from these
                user.refresh()  # a style changes no width, so no layout: its lines are drawn again
