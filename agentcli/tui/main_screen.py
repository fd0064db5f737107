"""The app's first screen: Textual's, without restyling every widget again as it first shows.

When a screen becomes active Textual restyles all its widgets (``ScreenResume`` with
``refresh_styles``), since styles may have changed while it was hidden. For the first screen
nothing has: its widgets were styled as they mounted, just before, with the theme, the
stylesheet and the screen's width class already in place (``AgentApp._set_breakpoint_class``),
and a widget whose classes or pseudo-classes change (focus, say) is restyled then by Textual
anyway. The second pass cost ~7 ms of the first frame (bench/tui_startup.py);
tests/tui/test_first_frame.py checks that every widget's styles at the first frame are what a
full restyle gives. Later resumes (after a dialog, say) restyle as usual.
"""

from __future__ import annotations

from textual import events
from textual.screen import Screen


class MainScreen(Screen[None]):
    """The screen the app starts on (``AgentApp.get_default_screen``)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown = False

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Screen's own handler (Textual walks the class tree from here).
        if not self._shown:
            self._shown = True
            event.refresh_styles = False
