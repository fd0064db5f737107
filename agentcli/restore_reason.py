"""The reason on a snapshot a restore took: written by the snapshot store, read by front ends.

The log keeps the full form (``restored snapshot SESSION:SEQ (ID)``); the timeline shows
``restored #3`` for a snapshot of the session on screen. Kept out of ``agentcli.snapshots`` so the
TUI, which never imports the store, reads the same format the store writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PATTERN = re.compile(r"restored snapshot (?P<session>.+):(?P<seq>\d+) \((?P<id>[0-9a-f]+)\)")


@dataclass(frozen=True)
class RestoredFrom:
    """The snapshot a restore went back to."""

    session_id: str
    seq: int
    snapshot_id: str


def restore_reason(session_id: str, seq: int, snapshot_id: str) -> str:
    """The reason the store gives the snapshot it takes after restoring ``session_id:seq``."""
    return f"restored snapshot {session_id}:{seq} ({snapshot_id})"


def restored_from(reason: str) -> RestoredFrom | None:
    """What a restore's reason names; None for any other reason."""
    match = _PATTERN.fullmatch(reason)
    if match is None:
        return None
    return RestoredFrom(match["session"], int(match["seq"]), match["id"])


def short_reason(reason: str, session_id: str | None) -> str:
    """``restored #3`` for a restore within ``session_id``, ``restored #3 of SESSION`` for one
    of another session; any other reason as it is."""
    restored = restored_from(reason)
    if restored is None:
        return reason
    if restored.session_id == session_id:
        return f"restored #{restored.seq}"
    return f"restored #{restored.seq} of {restored.session_id}"
