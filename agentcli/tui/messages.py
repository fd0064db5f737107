"""App-wide Textual messages. Widget-specific ones are nested in the widget that sends them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # a type only: the event classes are built after the TUI's first frame
    from agentcli.events import Event


@dataclass
class SessionEventPosted(Message):
    """A Session event, delivered to a widget that renders it.

    The session calls its subscribers synchronously on the event loop; the bridge wraps each
    event in one of these and posts it, so a widget's rendering never runs inside the session.
    """

    event: Event
    """The pydantic event, as the session emitted it."""
