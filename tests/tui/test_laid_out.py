"""Lists that keep their scrollbar through the screen's layouts (``_laid_out.SteadyOptionList``)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import App
from textual.widget import Widget
from textual.widgets import Static

from agentcli.tui.widgets._laid_out import SteadyOptionList
from tests.tui.helpers import drain


class Listed(App[None]):
    CSS = "SteadyOptionList { height: 6; } Static { height: auto; }"

    def compose(self) -> Iterable[Widget]:
        yield SteadyOptionList(id="list")
        yield Static("above the fold", id="other")


async def test_a_steady_list_still_scrolls_and_sizes_its_scrollbar_as_options_come() -> None:
    app = Listed()
    async with app.run_test(size=(40, 20)) as pilot:
        options = app.query_one(SteadyOptionList)
        options.add_options([f"option {n}" for n in range(3)])
        await drain(pilot)
        assert options.max_scroll_y == 0 and not options.show_vertical_scrollbar
        options.add_options([f"option {n}" for n in range(3, 30)])
        await drain(pilot)
        assert options.virtual_size.height == 30 and options.show_vertical_scrollbar
        assert options.vertical_scrollbar.window_virtual_size == 30
        # A layout of the whole screen for another widget keeps the list's own height, and
        # does not repaint its scrollbar (a plain OptionList's is, a frame later).
        scrollbar = options.vertical_scrollbar
        repaints: list[object] = []
        plain_refresh = scrollbar.refresh
        scrollbar.refresh = lambda *args, **kwargs: repaints.append(args) or plain_refresh(*args, **kwargs)  # type: ignore[method-assign]
        app.query_one("#other", Static).update("a\nb\nc")
        await drain(pilot)
        assert not repaints, "the screen's layout repainted the list's scrollbar"
        height = options.scrollable_content_region.height
        assert options.virtual_size.height == 30 and options.max_scroll_y == 30 - height
        options.highlighted = 29
        await drain(pilot)
        assert options.scroll_y == options.max_scroll_y > 0, "the last option scrolled into view"


def test_the_private_hook_the_mixins_override_has_the_shape_they_expect() -> None:
    """``_size_updated`` is Textual's private API: a pinned Textual that renamed or reshaped it
    would leave the overrides never called (two layouts again) or failing at the first layout."""
    import inspect

    from textual.scroll_view import ScrollView

    from agentcli.tui.widgets._laid_out import LaidOut

    expected = ["self", "size", "virtual_size", "container_size", "layout"]
    for owner in (Widget, ScrollView):
        assert list(inspect.signature(owner._size_updated).parameters) == expected, owner
    assert list(inspect.signature(LaidOut._size_updated).parameters) == expected
    assert list(inspect.signature(SteadyOptionList._size_updated).parameters) == expected
