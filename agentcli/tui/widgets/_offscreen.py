"""Letting go of the lines the stream's blocks drew while they are far from the screen.

Every line Textual draws is a ``Strip`` with seven small caches (often with a reference to
itself in one of them: a crop that leaves it as it was), and a widget keeps two sets of them:
its content's lines (``_render_cache``, all of them, drawn at once) and its styled lines
(``_styles_cache``, those shown). The blocks of the window that the user paged past keep
theirs while they stay mounted: measured on a 2,000-message history, ~5,000 strips and 38,000
caches, the larger part of what every full garbage collection walked. A widget's lines are drawn
from its state, so a block scrolled back to draws the same lines again (test_offscreen_lines
compares them cell for cell).

Unloaded blocks are the other half: ``StylesCache`` keeps a method's ``lru_cache`` of 1,024
entries keyed by the cache itself (textual 8.2), so a removed widget's styled lines stayed
alive long after it was gone. They are cleared as the blocks are removed.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.geometry import Region
from textual.widget import Widget

KEEP_ABOVE = 3
"""Screens' height above the view whose blocks keep their lines. A page of older blocks mounted
while paging back is drawn for a frame at its top before the view returns to the block being
read, two or three screens below: those lines are shown by the next presses, not drawn again."""
KEEP_BELOW = 1
"""The same below the view (a page back and forth draws nothing again)."""


def drop_lines(widget: Widget) -> bool:
    """Let go of what a mounted widget drew; it is drawn anew when next shown. True if it held any."""
    if not widget._styles_cache._cache and not widget._render_cache.lines:
        return False
    # All of it dirty and the styled lines cleared, so it is drawn again when next shown. Not
    # ``refresh()``: that also drops the widget's measured height (each one is measured again,
    # its text wrapped, at the next layout) and posts a screen update for it. With a region:
    # without one, ``_set_dirty`` asks for the widget's size, which for a widget off screen
    # rebuilt the compositor's map of every widget once per pass (~3 ms a press).
    widget._set_dirty(Region(0, 0, *widget.outer_size))
    widget._styles_cache.clear()
    widget._render_cache = widget._render_cache._replace(lines=[])
    return True


def forget_lines(widgets: Iterable[Widget]) -> None:
    """For widgets being removed: clear the styled lines Textual's ``lru_cache`` would keep alive."""
    for widget in widgets:
        for node in widget.walk_children(Widget, with_self=True):
            node._styles_cache.clear()


def drop_far_lines(container: Widget) -> int:
    """Drop the lines of the children of ``container`` (a vertical stack) far from its view; how
    many widgets held some.

    Where each child is comes from its size and margins, stacked as the vertical layout stacks
    them (adjacent margins collapse), not from the compositor: asking it (``find_widget``) built
    the map of every widget, visible or not, on each pass. The screens kept on either side absorb
    any line this is off by.
    """
    height = container.scrollable_content_region.height
    if not height:
        return 0
    top = round(container.scroll_y) - height * KEEP_ABOVE
    bottom = round(container.scroll_y) + height * (1 + KEEP_BELOW)
    dropped, y, below = 0, 0, 0
    for child in container.children:
        if not child.display:
            continue
        margin = child.styles.margin
        start = y + max(below, margin.top)
        y, below = start + child.outer_size.height, margin.bottom
        if y <= top or start >= bottom:
            for node in child.walk_children(Widget, with_self=True):
                dropped += drop_lines(node)
    return dropped
