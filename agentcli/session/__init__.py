"""The Session: the statechart, the work each state does, and the commands front ends send."""

from agentcli.permissions import Mode, Scope
from agentcli.session.errors import CommandFailed, SessionStateError
from agentcli.session.session import Session

__all__ = ["CommandFailed", "Mode", "Scope", "Session", "SessionStateError"]
