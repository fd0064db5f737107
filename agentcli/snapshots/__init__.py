"""Filesystem snapshots: a git-tree timeline of the workspace, with diff and restore.

A leaf package: it imports only the standard library, pydantic, pygit2 and inotify_simple (the
watcher). Importing it is cheap; pygit2 and pydantic load on first use of a name below (see
`__getattr__`).

    from agentcli.snapshots import SnapshotStore
    store = SnapshotStore(workspace, data_dir)
    result = store.capture(session_id="S", reason="session start")
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "SnapshotStore": "store",
    "is_unsafe_workspace": "guards",
    "SnapshotError": "errors",
    "UnsafeWorkspaceError": "errors",
    "SnapshotNotFound": "errors",
    "AmbiguousSnapshotRef": "errors",
    "InvalidSessionId": "errors",
    "StoreBusyError": "errors",
    "RestoreConflictError": "errors",
    "RestoreStoppedError": "errors",
    "CorruptStoreError": "errors",
    "Snapshot": "models",
    "FileStat": "models",
    "CaptureResult": "models",
    "SkippedPath": "models",
    "SkipReason": "models",
    "DiffResult": "models",
    "FileDiff": "models",
    "DiffTotals": "models",
    "RestorePlan": "models",
    "PlannedChange": "models",
    "RestoreConflict": "models",
    "RestoreResult": "models",
    "GcResult": "models",
    "DroppedSnapshot": "models",
}

# Written out, not computed from _EXPORTS, so that linters and type checkers see the re-exports.
__all__ = [
    "AmbiguousSnapshotRef",
    "CaptureResult",
    "CorruptStoreError",
    "DiffResult",
    "DiffTotals",
    "DroppedSnapshot",
    "FileDiff",
    "FileStat",
    "GcResult",
    "InvalidSessionId",
    "PlannedChange",
    "RestoreConflict",
    "RestoreConflictError",
    "RestoreStoppedError",
    "RestorePlan",
    "RestoreResult",
    "SkipReason",
    "SkippedPath",
    "Snapshot",
    "SnapshotError",
    "SnapshotNotFound",
    "SnapshotStore",
    "StoreBusyError",
    "UnsafeWorkspaceError",
    "is_unsafe_workspace",
]

if TYPE_CHECKING:
    from agentcli.snapshots.errors import (
        AmbiguousSnapshotRef,
        CorruptStoreError,
        InvalidSessionId,
        RestoreConflictError,
        RestoreStoppedError,
        SnapshotError,
        SnapshotNotFound,
        StoreBusyError,
        UnsafeWorkspaceError,
    )
    from agentcli.snapshots.guards import is_unsafe_workspace
    from agentcli.snapshots.models import (
        CaptureResult,
        DiffResult,
        DiffTotals,
        DroppedSnapshot,
        FileDiff,
        FileStat,
        GcResult,
        PlannedChange,
        RestoreConflict,
        RestorePlan,
        RestoreResult,
        SkippedPath,
        SkipReason,
        Snapshot,
    )
    from agentcli.snapshots.store import SnapshotStore


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentcli.snapshots' has no attribute {name!r}")
    value = getattr(import_module(f"agentcli.snapshots.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value
