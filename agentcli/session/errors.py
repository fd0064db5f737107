"""What a Session command raises when it cannot do what was asked."""

from __future__ import annotations


class SessionStateError(Exception):
    """A command does not fit the state the session is in (e.g. an answer with no question)."""


class CommandFailed(Exception):
    """A command failed unexpectedly; the session goes on and its log has the details."""


def failure_line(error: BaseException, *, recorded: bool) -> str:
    """A front end's own failure in one line for the user (``Type: message (details in the
    session log)``); ``recorded``: whether :meth:`Session.record_failure` wrote its traceback."""
    message = " ".join(str(error).split())  # one line, whatever the exception says
    where = "details in the session log" if recorded else "the session log could not record it"
    return f"{type(error).__name__}{': ' + message if message else ''} ({where})"
