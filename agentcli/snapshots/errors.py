"""Exception types raised by the snapshot store.

Every error names the thing that went wrong (a path, a ref, a file) and what the caller can do
about it, so the session layer can show the message to the user as is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # models import pydantic; catching a SnapshotError should not
    from agentcli.snapshots.models import RestoreConflict


class SnapshotError(Exception):
    """Base class of every error raised by `agentcli.snapshots`."""


class UnsafeWorkspaceError(SnapshotError):
    """The workspace is a directory the store refuses to snapshot without confirmation."""


class SnapshotNotFound(SnapshotError, LookupError):
    """A snapshot reference (sequence number, id prefix, tree hash) matched nothing."""


class AmbiguousSnapshotRef(SnapshotError, LookupError):
    """A snapshot reference matched more than one snapshot."""


class InvalidSessionId(SnapshotError, ValueError):
    """A session id cannot be used as a ref name and file name."""


class StoreBusyError(SnapshotError):
    """Another process held the store's lock for longer than the lock timeout."""


class RestoreConflictError(SnapshotError):
    """A restore would have to overwrite or delete something that no snapshot contains.

    Raised before anything in the workspace is changed. `conflicts` lists each blocked path.
    """

    def __init__(self, message: str, conflicts: list[RestoreConflict]) -> None:
        super().__init__(message)
        self.conflicts = conflicts


class RestoreStoppedError(SnapshotError):
    """A restore met something other than a folder where the plan had one (a symlink or a file
    put there while it wrote): it wrote nothing through it and stopped.

    What it wrote before is whole (each file the old one or the new), no temporary file is
    left, and the state before the restore was recorded first: restoring again once `path`
    is a folder (or gone) finishes the job. `path` is workspace-relative.
    """

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class CorruptStoreError(SnapshotError):
    """The shadow repository is missing objects a snapshot needs."""
