"""A line Textual draws and drops is freed at once, not left for the garbage collector.

``agentcli.tui._strip_cycles`` stops ``Strip.crop_extend`` and ``Strip.divide`` from storing a
strip in its own cache (a reference cycle per line drawn: the streamed reply's garbage). These
tests pin both halves: Textual still makes the cycle without the patch (when a release stops,
the patch can go), and with it the results are the same and no cyclic garbage is left.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from agentcli.tui import _strip_cycles


def _strips() -> list[Strip]:
    bold = Style(bold=True)
    return [Strip([Segment("hello "), Segment("world", bold)], 11), Strip([Segment("ab")], 2), Strip([], 0)]


def _draw(strips: list[Strip]) -> list[list[Segment]]:
    """What Textual's compositor asks of a line: crops that fit, cuts at its end, and others."""
    drawn: list[list[Segment]] = []
    for strip in strips:
        length = strip.cell_length
        for start, end in ((0, length), (0, length + 3), (1, length), (0, max(length - 1, 0))):
            drawn.append(list(strip.crop_extend(start, end, None)))
        for cuts in ([length], [1, length], [length + 5]):
            drawn.extend(list(part) for part in strip.divide(cuts))
    return drawn


def _cyclic_garbage(work: Callable[[], object]) -> int:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        work()
        return gc.collect()
    finally:
        if enabled:
            gc.enable()


@pytest.fixture
def unpatched() -> Iterator[None]:
    """Textual's own methods for the test; whatever this process had is put back after it."""
    had = (Strip.crop_extend, Strip.divide, _strip_cycles._installed)
    Strip.crop_extend = _strip_cycles.ORIGINAL_CROP_EXTEND  # type: ignore[method-assign]
    Strip.divide = _strip_cycles.ORIGINAL_DIVIDE  # type: ignore[method-assign]
    _strip_cycles._installed = False
    yield
    Strip.crop_extend, Strip.divide, _strip_cycles._installed = had  # type: ignore[method-assign]


def test_textual_still_caches_a_strip_in_itself(unpatched: None) -> None:
    assert _cyclic_garbage(lambda: _draw(_strips())) > 0


def test_patched_strips_draw_the_same_and_leave_no_cyclic_garbage(unpatched: None) -> None:
    before = _draw(_strips())
    _strip_cycles.install()
    assert _draw(_strips()) == before
    assert _cyclic_garbage(lambda: _draw(_strips())) == 0
    strip = _strips()[0]
    cropped = strip.crop_extend(1, 5, None)
    assert strip.crop_extend(1, 5, None) is cropped, "results other than the strip itself stay cached"
