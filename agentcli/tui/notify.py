"""Calling the user back: when the agent waits for them (a question, an approval, a pause, the
end of a task) while the terminal is not focused, ring the bell or send a desktop notification
through the terminal (OSC 9 / OSC 777), as ``notify`` in the config says.

Nothing is sent while the terminal has focus (the screen says it; a headless test run counts as
focused), or with ``notify = "off"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.tui.app import AgentApp


def _clean(text: str) -> str:
    # A control character would end the escape sequence early (or start another).
    return "".join(ch if ch.isprintable() else " " for ch in text)[:200]


def call_back(app: AgentApp, title: str, body: str) -> str | None:
    """Tell the user the agent waits; returns what was sent (None: nothing, the user is here)."""
    if app.app_focus:
        return None
    try:
        how = app.settings.notify
    except RuntimeError:
        return None  # settings not loaded yet: nothing can be waiting
    if how == "off":
        return None
    if how == "bell":
        app.bell()
        return "\a"
    if how == "osc9":
        sequence = f"\x1b]9;{_clean(title)}: {_clean(body)}\x07"
    else:
        sequence = f"\x1b]777;notify;{_clean(title)};{_clean(body)}\x07"
    driver = app._driver  # Textual has no public way to write a sequence to the terminal
    if driver is not None:
        driver.write(sequence)
        driver.flush()
    return sequence
