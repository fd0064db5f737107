"""The Session: the statechart, the runtime that does each state's work, and the commands."""

from agentcli.session.session import Session, SessionStateError

__all__ = ["Session", "SessionStateError"]
