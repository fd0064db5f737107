"""Keep Textual's ``Strip`` from caching itself, so a line drawn and dropped is freed at once.

``Strip.crop_extend`` and ``Strip.divide`` store their result in the strip's own cache, and when
the result is the strip itself (a line that already fits, a cut at its end) the strip refers to
itself: a reference cycle of ~20 objects (the strip, its seven ``FIFOCache``s and their dicts)
that only a garbage collection frees. Textual does this for most lines it draws, so while a reply
streams the collector runs its full passes every second or so over that garbage, and those passes
were every event-loop stall over 100 ms left in ``bench/tui_streaming.py``. Here the two methods
drop a self-entry right after it is made: the strip is returned as before, the cache keeps its
other entries, and computing the identity again is a length comparison.

This reaches into Textual's private cache attributes (Textual is pinned; the test
``tests/tui/test_strip_cycles.py`` fails if a release changes them, and checks that the drawn
result is unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.style import Style
from textual.strip import Strip

ORIGINAL_CROP_EXTEND = Strip.crop_extend
ORIGINAL_DIVIDE = Strip.divide
_installed = False


def _forget_self(cache: Any, strip: Strip) -> None:
    entries: dict[object, object] = cache._cache
    for key, value in list(entries.items()):
        if value is strip or (isinstance(value, list) and any(item is strip for item in value)):
            del entries[key]


def install() -> None:
    """Patch ``Strip.crop_extend`` and ``Strip.divide`` (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    crop_extend: Callable[[Strip, int, int, Style | None], Strip] = ORIGINAL_CROP_EXTEND
    divide: Callable[[Strip, Iterable[int]], Sequence[Strip]] = ORIGINAL_DIVIDE

    def crop_extend_uncycled(self: Strip, start: int, end: int, style: Style | None) -> Strip:
        strip = crop_extend(self, start, end, style)
        if strip is self:
            _forget_self(self._crop_extend_cache, self)
        return strip

    def divide_uncycled(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        strips = divide(self, cuts)
        if len(strips) == 1 and strips[0] is self:
            _forget_self(self._divide_cache, self)
        return strips

    Strip.crop_extend = crop_extend_uncycled  # type: ignore[method-assign]
    Strip.divide = divide_uncycled  # type: ignore[method-assign]
