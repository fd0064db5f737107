"""What a Session command raises when it cannot do what was asked."""

from __future__ import annotations


class SessionStateError(Exception):
    """A command does not fit the state the session is in (e.g. an answer with no question)."""


class CommandFailed(Exception):
    """A command failed unexpectedly; the session goes on and its log has the details."""
