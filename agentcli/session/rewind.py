"""Rewind points: the user's messages, with where each sits in the model's view and the snapshot
of the workspace from just before its turn changed anything.

Built from events, so the live session and a resumed one (fed the log in order) agree. A rewind
is a ``ConversationRewound`` event: the log keeps everything after it, and an undo is one more
such event that puts the dropped messages back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agentcli.events import (
    AssistantMessage,
    ContextCompacted,
    ConversationRewound,
    Event,
    SnapshotCaptured,
    UserMessage,
)


@dataclass
class RewindPoint:
    """One user message the session can go back to before."""

    number: int
    """1 for the first message of the branch."""
    text: str
    message_index: int | None
    """Its position in the model's view; None once a compaction summarized it away (then only
    the code can go back)."""
    snapshot_id: str | None
    """The workspace before its turn changed anything; None with snapshots off."""
    sealed: bool = False
    """The model has answered it: later snapshots are of the turn's own changes."""


@dataclass
class RewindTracker:
    """Follows the events of a session and keeps its rewind points."""

    points: list[RewindPoint] = field(default_factory=list)
    _last_snapshot: str | None = None
    _dropped: list[list[RewindPoint]] = field(default_factory=list)
    """The points each rewind dropped, newest last, for its undo."""

    def see(self, event: Event, message_count: int) -> None:
        """Take in one event; ``message_count`` is the size of the model's view before it."""
        if isinstance(event, UserMessage):
            self.points.append(RewindPoint(len(self.points) + 1, event.text, message_count, self._last_snapshot))
        elif isinstance(event, SnapshotCaptured):
            self._last_snapshot = event.snapshot_id
            if self.points and not self.points[-1].sealed:
                self.points[-1].snapshot_id = event.snapshot_id  # the turn's baseline capture
        elif isinstance(event, AssistantMessage):
            if self.points:
                self.points[-1].sealed = True
        elif isinstance(event, ContextCompacted) and event.replaced:  # a cut alone moves no message
            for point in self.points:
                if point.message_index is not None:
                    at = point.message_index - event.replaced + 1
                    point.message_index = at if point.message_index >= event.replaced else None
        elif isinstance(event, ConversationRewound):
            if event.code_only:
                return  # the files went back, every message stays a point
            if (event.restored or event.undo) and self._dropped:
                self.points += self._dropped.pop()
            elif not (event.restored or event.undo):
                self._dropped.append([replace(p) for p in self.points[event.point - 1:]])
                del self.points[event.point - 1:]
