"""Public value types of the snapshot store.

They are pydantic models so the session layer can put them into events and the session log
unchanged (`model_dump()`), and so the timeline files on disk are validated when read back.
All of them are frozen: a snapshot, once recorded, does not change.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class FileStat(_Frozen):
    """Line counts of one changed path, relative to the previous snapshot."""

    path: str
    """Path relative to the workspace, with `/` separators."""
    added: int
    """Lines added (0 for binary files)."""
    removed: int
    """Lines removed (0 for binary files)."""
    status: str = "modified"
    """One of `added`, `deleted`, `modified`, `renamed`, `typechange`."""
    binary: bool = False
    """True when either side is binary; the line counts are then 0."""


class Snapshot(_Frozen):
    """One entry of a session's timeline: a git tree of the workspace at a point in time."""

    id: str
    """Short stable id: the first 10 hex digits of sha1(session, seq, tree)."""
    seq: int
    """Sequence number within the session, starting at 1."""
    session_id: str
    tree: str
    """Full hex id of the git tree object."""
    created_at: str
    """UTC time in ISO 8601, millisecond precision."""
    reason: str
    """Why the snapshot was taken (`session start`, `after write_file`, `before restore`, ...)."""
    tool_call_id: str | None = None
    tool_name: str | None = None
    files: list[FileStat] = Field(default_factory=list)
    """Changed paths versus `base_tree` (at most 1000 of them); empty when there is no base."""
    files_omitted: int = 0
    """Changed paths left out of `files` because there were too many to list."""
    base_tree: str | None = None
    """Tree the stats compare against: the session's previous snapshot, or for a session's first
    snapshot the workspace's latest snapshot or the user's HEAD tree; None when there is none."""


class SkipReason(StrEnum):
    """Why a path was left out of a capture."""

    TOO_LARGE = "too_large"
    """An untracked file bigger than `max_file_bytes`."""
    TOO_MANY_FILES = "too_many_files"
    """An untracked directory holding more than `max_untracked_dir_files` files."""
    NESTED_REPO_WITHOUT_COMMITS = "nested_repo_without_commits"
    """A nested git repository whose HEAD has no commit, so there is nothing to record."""
    UNREADABLE = "unreadable"
    """The file could not be read (permissions)."""


class SkippedPath(_Frozen):
    """A path a capture did not record, and why."""

    path: str
    reason: SkipReason
    size: int | None = None
    """Size in bytes, for `too_large`."""
    files: int | None = None
    """Number of untracked files below the directory, for `too_many_files`."""

    def describe(self) -> str:
        """Returns a one-line explanation fit for the user."""
        if self.reason is SkipReason.TOO_LARGE:
            return f"{self.path}: skipped, untracked file of {self.size} bytes is over the size limit"
        if self.reason is SkipReason.TOO_MANY_FILES:
            return f"{self.path}/: skipped, untracked directory with {self.files} files is over the file-count limit"
        if self.reason is SkipReason.NESTED_REPO_WITHOUT_COMMITS:
            return f"{self.path}/: skipped, nested git repository has no commit to record"
        return f"{self.path}: skipped, cannot be read"


class CaptureResult(_Frozen):
    """Outcome of `SnapshotStore.capture`."""

    snapshot: Snapshot | None
    """The new timeline entry, or None when the tree equals the session's previous snapshot."""
    tree: str
    """Tree of the workspace as captured (also set when `snapshot` is None)."""
    skipped: list[SkippedPath] = Field(default_factory=list)
    duration_s: float


DiffStatus = Literal["added", "deleted", "modified", "renamed", "typechange"]


class FileDiff(_Frozen):
    """One file of a diff."""

    path: str
    """Path on the new side (on the old side for deletions)."""
    old_path: str | None = None
    """Path on the old side, set for renames."""
    status: DiffStatus
    added: int
    removed: int
    patch: str
    """Unified diff text of this file (`Binary files ... differ` for binary files)."""
    binary: bool
    old_mode: int | None = None
    new_mode: int | None = None


class DiffTotals(_Frozen):
    """Sums over all files of a diff."""

    files: int
    added: int
    removed: int


class DiffResult(_Frozen):
    """Outcome of `SnapshotStore.diff`."""

    old_tree: str
    new_tree: str
    """Tree of the new side; for the working tree, the tree a capture would record now."""
    working_tree: bool = False
    """True when the new side is the working tree."""
    files: list[FileDiff]
    totals: DiffTotals


RestoreAction = Literal["write", "delete", "chmod"]


class PlannedChange(_Frozen):
    """One path a restore will change."""

    path: str
    action: RestoreAction
    """`write` creates or replaces the path, `delete` removes it, `chmod` only flips the executable bit."""
    kind: Literal["file", "executable", "symlink"]
    """What the path is after the change (before it, for deletions)."""
    old_id: str | None = None
    new_id: str | None = None


class RestoreConflict(_Frozen):
    """A path a restore cannot change without losing data no snapshot holds."""

    path: str
    reason: str


class RestorePlan(_Frozen):
    """Exactly what `restore` would do to the workspace; computing it changes nothing there."""

    target: Snapshot
    current_tree: str
    """Tree of the workspace when the plan was made."""
    changes: list[PlannedChange]
    conflicts: list[RestoreConflict] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    """Nested repositories (gitlinks) that differ; a restore never touches them."""

    @property
    def writes(self) -> list[str]:
        """Paths that will be created or overwritten."""
        return [c.path for c in self.changes if c.action == "write"]

    @property
    def deletes(self) -> list[str]:
        """Paths that will be deleted."""
        return [c.path for c in self.changes if c.action == "delete"]

    @property
    def chmods(self) -> list[str]:
        """Paths whose executable bit will change."""
        return [c.path for c in self.changes if c.action == "chmod"]

    @property
    def is_noop(self) -> bool:
        """True when the workspace already matches the target."""
        return not self.changes


class RestoreResult(_Frozen):
    """Outcome of `SnapshotStore.restore`."""

    plan: RestorePlan
    undo: Snapshot
    """Snapshot of the workspace as it was just before the restore: restore it to undo."""
    after: Snapshot | None
    """Timeline entry recorded after the restore (None if the tree equals `undo`)."""
    tree: str
    """Tree of the workspace after the restore."""
    matches_target: bool
    """True when `tree` equals the target's tree (False only if nested repositories differ)."""
    duration_s: float


class DroppedSnapshot(_Frozen):
    """A snapshot whose ref gc removed to get under the size budget."""

    session_id: str
    seq: int
    id: str
    created_at: str


class GcResult(_Frozen):
    """Outcome of `SnapshotStore.gc`."""

    size_before: int
    size_after: int
    budget_bytes: int
    dropped: list[DroppedSnapshot] = Field(default_factory=list)
    """Oldest snapshots removed because the store was over budget (empty when it was not)."""
    objects_packed: int = 0
    objects_pruned: int = 0
    packs_rewritten: int = 0
    duration_s: float
