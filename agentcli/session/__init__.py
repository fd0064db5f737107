"""The Session: the statechart, the work each state does, and the commands front ends send."""

from agentcli.session.errors import CommandFailed, SessionStateError
from agentcli.session.session import Session

__all__ = ["CommandFailed", "Session", "SessionStateError"]
