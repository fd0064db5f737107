"""The cyclic garbage collector, paused while the program starts.

Start-up allocates hundreds of thousands of objects that live as long as the process (Textual's
and agentcli's modules, classes, styles, the first screen's widgets) and frees few: the collector
ran ~110 young and ~10 middle-generation passes over them before the TUI's first frame, 20 ms of
CPU that found next to nothing to free (bench/tui_startup.py). The command line pauses it on entry
(``pause``) and resumes it where start-up ends: the TUI just after its first frame, every other
command when it starts running (``resume``). Reference counting still frees everything that is
not in a cycle meanwhile; the first collection after ``resume`` sees the cycles left.

Only a pause made here is resumed here, so code that disables the collector for its own reasons
(``agentcli.llm.warmup``) keeps it disabled, and a program that never paused is left alone.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop automatic collection until ``resume`` (nothing if the collector is already off)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Restart automatic collection if ``pause`` stopped it (idempotent)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


def paused() -> bool:
    """Whether collection is stopped by ``pause`` and not yet resumed (for tests)."""
    return _paused
