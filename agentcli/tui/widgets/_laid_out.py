"""Blocks whose size the layout sets do not ask for a second layout when it sets it.

Textual's full layout hands every widget the size it arranged (``Widget._size_updated``) and sets
its ``virtual_size`` there, a ``layout=True`` reactive: a widget mounted since the last layout
(virtual size 0×0 until then) asks for the whole screen to be laid out once more. A page of
25 blocks mounted above the view while paging back was laid out twice: the second pass (~10 ms
of CPU, the stream's ~80 blocks arranged again for nothing) and the wait for the next frame
slot made half of such a press's time (bench/README.md, "History paging: one layout").

For a block that arranges no children the size it was just given is the layout's own result:
nothing placed depends on it, so it is recorded without asking for another pass, as Textual
already does on its scroll path (``reflow_visible`` passes ``layout=False``). A block that is
a container at the moment (a live chunk left to ``Markdown``) keeps Textual's behaviour. A
change that needs a new layout (a block's text or height changed) still asks for one through
its own reactive or ``refresh(layout=True)``. The stream's own virtual size is set before the
layout instead (``_anchored.presize``).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import OptionList


class LaidOut(Widget):
    """Mixed in after a block's widget class (``class UserBlock(Static, LaidOut)``): the layout's
    size taken without a second layout. After, because Textual's CSS type chain follows a class's
    first base only: first, it would hide ``Static``'s rules (``height: auto``) from the block."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return super()._size_updated(size, virtual_size, container_size,
                                     layout=layout and (self.is_container or self.is_scrollable))


class SteadyOptionList(OptionList):
    """An ``OptionList`` whose scrollbar is not repainted by every layout of the screen.

    ``ScrollView._size_updated`` compares the virtual size the compositor hands it (its region:
    a scroll view arranges no children) with its own (its options' height, which it keeps), so
    every full layout of the app, a page of history mounted included, updated its scrollbar and
    repainted it a frame later for nothing. It is handed its own virtual size, which is the one
    it uses anyway; a change of its region or of its options still updates it.
    """

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return super()._size_updated(size, self.virtual_size, container_size, layout)
