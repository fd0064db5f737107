"""Mounting blocks above the view without the view moving: where a block will be, and the shift.

Blocks mounted above what the user reads push it down by their height. Scrolling back to it
after the next frame (``scroll_to_widget`` after a refresh) shows one frame at the wrong place,
and cannot be done while the user reads, between key presses, unseen. Instead the stream
measures how far the first block it had moves — the same vertical arrangement Textual's layout
makes, of the blocks above it only — and moves the scroll offset by that much before the
frame is drawn, so the layout the mount causes is drawn with the view already in place.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget

AHEAD = 3
"""Screens of mounted blocks kept above the view while the user reads back: a page-up or
three find them mounted, and the next ones are mounted while the user reads."""
SLICE = 25
"""Blocks mounted above per step: a page, as reaching the top mounts. Smaller steps were
measured (4, 8, 12 blocks) and cost more in all: each step lays out the whole window twice (once
for its blocks, once more because their first layout sets their virtual size, a layout
reactive): 12-block steps took about twice the CPU per press of paging with pages (bench/README.md)."""
QUIET_S = 0.3
"""Steps start once the view has been still this long: a reader's pause, not the gap between
presses of someone flicking through pages (~150 ms) or of a key held down (~30 ms), whose
frames a step's layout would otherwise share and delay. Without a pause the page is mounted on
reaching the top, as before, with the view kept still."""


def top_of(container: Widget, widget: Widget, size: Size) -> int | None:
    """Where ``widget`` (a child of ``container``, a vertical stack) starts, in the stack's lines;
    None when it is not one of its displayed children (unmounted meanwhile).

    Arranges only the displayed children above it and itself, as the container's own layout
    would (margins collapse; each one's height is measured at ``size``'s width and cached by
    Textual, so the layout that follows measures nothing again).
    """
    stack: list[Widget] = []
    for child in container.children:
        if child.display:
            stack.append(child)
        if child is widget:
            break
    if not stack or stack[-1] is not widget:
        return None
    placements = container.layout.arrange(container, stack, size)
    return placements[-1].region.y


def tops(container: Widget, size: Size) -> dict[Widget, int]:
    """Where each displayed child of ``container`` starts, arranged now as its layout will be
    (right after a mount, before Textual's own layout has run; every child measured)."""
    stack = [child for child in container.children if child.display]
    return {placement.widget: placement.region.y for placement in container.layout.arrange(container, stack, size)}


def laid_out_tops(container: Widget) -> dict[Widget, int]:
    """Where each displayed child of ``container`` (a vertical stack) starts, from the sizes and
    margins of the last layout (adjacent margins collapse): a walk, not an arrangement. Blocks
    mounted since count as empty, so those under them are placed higher than they will be."""
    where: dict[Widget, int] = {}
    y, below = 0, 0
    for child in container.children:
        if not child.display:
            continue
        margin = child.styles.margin
        where[child] = start = y + max(below, margin.top)
        y, below = start + child.outer_size.height, margin.bottom
    return where


def shift_view(container: Widget, lines: int) -> None:
    """Move ``container``'s scroll offset down by ``lines`` (blocks were mounted above the view).

    Set without the validator, which would clamp it to the height before the blocks came, and
    without the watchers (the stream's would take it for the user's scroll). A page-up being
    animated is finished first, so it ends where the user was going, moved with the content.
    """
    if not lines:
        return
    container.app.animator.force_stop_animation(container, "scroll_y")
    container.set_reactive(Widget.scroll_target_y, container.scroll_target_y + lines)
    container.set_reactive(Widget.scroll_y, container.scroll_y + lines)
    if container.show_vertical_scrollbar:
        container.vertical_scrollbar.position = container.scroll_y


def presize(container: Widget) -> None:
    """Give ``container`` (the stream) the virtual size its next layout will, and its scrollbar
    the thumb for it, now (blocks were mounted or unloaded).

    Left to the layout, the new virtual size is a ``layout=True`` reactive that asks for a
    second pass over the whole window, and the scrollbar it resizes is repainted a frame after
    the blocks (bench/README.md, "History paging: one layout"). Arranged here with the
    container's own ``arrange``, which Textual caches for the layout that follows; what the
    compositor then measures is the same, so it changes nothing and asks for nothing. Should
    they ever differ, Textual's own update still runs: the cost comes back, not a wrong size.
    """
    size = container.scrollable_content_region.size
    if not size:
        return
    total = container.arrange(size).total_region
    virtual = Size(max(size.width, total.right), max(size.height, total.bottom))
    if virtual == container.virtual_size:
        return
    if (virtual.height > size.height) != container.show_vertical_scrollbar:
        # Whether the scrollbar shows (and so whether the stream scrolls at all) is decided by
        # Textual's own update of the size, which a silent change here would skip.
        return
    container.set_reactive(Widget.virtual_size, virtual)
    if container.show_vertical_scrollbar:
        container.vertical_scrollbar.window_virtual_size = virtual.height
