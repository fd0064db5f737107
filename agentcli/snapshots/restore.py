"""Restore planning and application: change only the paths that differ between two trees.

Full checkouts are the wrong tool: `checkout-index -a -f` and libgit2's `checkout_tree(FORCE)`
rewrite every file (6-9 s at 19-38k files) and leave files the target lacks behind. Here the
plan is the tree diff between the workspace as just captured and the target, and applying it:

1. deletes what the target lacks (files and symlinks only; never a directory's other contents,
   never a nested repository, never an ignored file: ignored files are in neither tree),
2. flips executable bits where only the mode differs,
3. writes what is new or different, each through a temporary file renamed into place, so a
   path is never half-written and a symlink in the way is replaced rather than followed
   (`restorewrites.py`; many files are written from a few threads).

Before anything is touched every path is checked: it must stay inside the workspace, never
enter `.git`, and never go through a symlink or replace a directory holding files no snapshot
has. Any such path is a conflict, and a conflict stops the restore before it starts. That
check is by name; the changes themselves are made through folder descriptors opened without
following links (`restorefolders.py`), so a folder swapped for a link after the check stops the
restore instead of sending it through the link.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pygit2
from pygit2.enums import FileMode

from agentcli.snapshots.guards import safe_relative_path
from agentcli.snapshots.models import PlannedChange, RestoreConflict
from agentcli.snapshots.restorechecks import find_conflicts, plain_path
from agentcli.snapshots.restorefolders import Folders
from agentcli.snapshots.restorewrites import mode_for, write_files
from agentcli.snapshots.treediff import tree_changes, walk_budget


@dataclass(frozen=True)
class PlanParts:
    """What a plan is made of, before it is wrapped with its target snapshot."""

    changes: list[PlannedChange]
    conflicts: list[RestoreConflict]
    skipped: list[str]


def _kind(mode: int) -> Literal["file", "executable", "symlink"]:
    if mode == FileMode.LINK:
        return "symlink"
    if mode == FileMode.BLOB_EXECUTABLE:
        return "executable"
    return "file"


def plan_changes(
    repo: pygit2.Repository, workspace: Path, current_tree: str, target_tree: str, *, entries: int = 0
) -> PlanParts:
    """Computes what restoring `target_tree` over `current_tree` changes in the workspace.

    Reads the filesystem (to find conflicts) but writes nothing.

    Args:
        repo: The shadow repository.
        workspace: The workspace directory.
        current_tree: Tree of the workspace right now (a fresh capture).
        target_tree: Tree to restore.
        entries: About how many files the trees hold (the index's size): what decides how
            the two trees are compared (`treediff.walk_budget`).

    Returns:
        The changes in the order they will be applied, conflicts, and skipped gitlinks.
    """
    deletes: dict[str, PlannedChange] = {}
    writes: list[PlannedChange] = []
    chmods: list[PlannedChange] = []
    skipped: set[str] = set()
    conflicts: list[RestoreConflict] = []
    # A path that changes type comes as a deletion plus an addition, which is exactly the
    # order we apply them in.
    same = current_tree == target_tree
    for change in [] if same else tree_changes(repo, current_tree, target_tree, max_trees=walk_budget(entries)):
        old_present, new_present = change.old_mode != 0, change.new_mode != 0
        path = os.fsdecode(change.raw_path)
        if not plain_path(path) and safe_relative_path(path) != path:
            conflicts.append(RestoreConflict(path=path, reason="path leaves the workspace or enters .git"))
            continue
        if FileMode.COMMIT in (change.old_mode, change.new_mode):
            skipped.add(path)  # nested repositories are theirs to restore, never ours
            continue
        old_id = str(change.old_id) if change.old_id is not None else None
        new_id = str(change.new_id) if change.new_id is not None else None
        if (
            old_present
            and new_present
            and old_id == new_id
            and change.old_mode != change.new_mode
            and FileMode.LINK not in (change.old_mode, change.new_mode)
        ):
            chmods.append(
                PlannedChange(path=path, action="chmod", kind=_kind(change.new_mode), old_id=old_id, new_id=new_id)
            )
        elif new_present:
            writes.append(
                PlannedChange(path=path, action="write", kind=_kind(change.new_mode), old_id=old_id, new_id=new_id)
            )
        else:
            deletes[path] = PlannedChange(path=path, action="delete", kind=_kind(change.old_mode), old_id=old_id)
    conflicts.extend(find_conflicts(workspace, deletes, writes))
    ordered_deletes = sorted(deletes.values(), key=lambda c: (-c.path.count("/"), c.path))
    return PlanParts(
        changes=[*ordered_deletes, *sorted(chmods, key=lambda c: c.path), *sorted(writes, key=lambda c: c.path)],
        conflicts=conflicts,
        skipped=sorted(skipped),
    )


KEPT_BYTES_MAX = 4 * 1024 * 1024
"""At most this much of what a restore wrote is kept for its line counts."""


@dataclass
class Applied:
    """Paths a restore changed."""

    written: list[str]
    deleted: list[str]
    chmodded: list[str]
    files: dict[str, tuple[str, os.stat_result]] = field(default_factory=dict)
    """Regular files written: the blob written and the stat data of the descriptor it was written
    through, taken after the rename (which changes the ctime). `restored.update_index` enters
    them without reading the files again."""
    written_bytes: dict[str, bytes] = field(default_factory=dict)
    """What the first files written hold, for the result's line counts (`restorestats.py`)."""
    _kept: int = 0

    def keep_bytes(self, path: str, data: bytes) -> None:
        """Keeps a written file's bytes while they are few (else they are read again if needed)."""
        if len(data) <= KEPT_BYTES_MAX - self._kept:
            self.written_bytes[path] = data
            self._kept += len(data)

    def symlinks(self) -> list[str]:
        """The symbolic links written (every write but the regular files)."""
        return [path for path in self.written if path not in self.files]

    def touched(self) -> list[str]:
        """Every changed path (for a hinted capture afterwards)."""
        return [*self.deleted, *self.chmodded, *self.written]


def apply_changes(
    repo: pygit2.Repository,
    workspace: Path,
    changes: Iterable[PlannedChange],
    *,
    modes: dict[str, int] | None = None,
    umask: int | None = None,
) -> Applied:
    """Applies planned changes to the workspace (conflicts must have been ruled out).

    Every change is made relative to its folder's descriptor, each folder opened from its
    parent's without following a link (`restorefolders.py`): a folder swapped for a symlink
    since the plan stops the restore rather than have it write or delete through the link.

    Args:
        repo: The shadow repository, to read blobs from.
        workspace: The workspace directory.
        changes: Deletions, then chmods, then writes, as `plan_changes` orders them.
        modes: The target's recorded modes (see `layout.py`): a file written gets its mode
            before it is renamed into place, so a 0600 file is never readable by others meanwhile.
        umask: The process umask, when the caller read it already (else it is read now).

    Returns:
        The paths changed.

    Raises:
        RestoreStoppedError: A link or a file stands where a folder should be; the changes
            made before it stay (each whole), none is made through it.
    """
    applied = Applied(written=[], deleted=[], chmodded=[])
    emptied_dirs: set[str] = set()
    mask = _umask() if umask is None else umask
    writes: list[PlannedChange] = []
    # Closed on the way out, failures included, and only after write_files has waited for
    # every writer thread: none still writes into a folder closed under it.
    with Folders(workspace) as folders:
        for change in changes:
            parent, _, name = change.path.rpartition("/")
            if change.action == "delete":
                folder = folders.open(parent)
                if folder is not None:  # else gone already, and what it held with it
                    try:
                        os.unlink(name, dir_fd=folder)
                    except (FileNotFoundError, NotADirectoryError):
                        pass
                applied.deleted.append(change.path)
                while parent:
                    emptied_dirs.add(parent)
                    parent = parent.rpartition("/")[0]
            elif change.action == "chmod":
                folder = folders.open(parent)
                if folder is None:
                    raise FileNotFoundError(errno.ENOENT, "folder gone since the restore was planned", change.path)
                _chmod_in(folder, name, change.kind, mask)
                applied.chmodded.append(change.path)
            else:
                writes.append(change)
            folders.trim()
        if emptied_dirs:
            remove_empty_dirs(folders, emptied_dirs)
        # Every folder made (and opened) before any thread writes into one.
        for parent in dict.fromkeys(change.path.rpartition("/")[0] for change in writes):
            folders.open(parent, create=True)
            folders.trim()

        def record(change: PlannedChange, data: bytes, written: os.stat_result | None) -> None:
            applied.written.append(change.path)
            if written is not None:
                assert change.new_id is not None
                applied.files[change.path] = (change.new_id, written)
            applied.keep_bytes(change.path, data)

        write_files(repo, folders, writes, mask, modes or {}, record)
    return applied


def _chmod_in(folder: int, name: str, kind: str, mask: int) -> None:
    """Sets or clears a file's executable bits, through a descriptor of it where it can be opened
    (so a link swapped in for it is not followed), else by name within its folder."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags, dir_fd=folder)
    except PermissionError:
        # Not readable by us (mode 0200, say): by name, the one way left; only a regular file.
        current = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
        if stat.S_ISREG(current):
            os.chmod(name, mode_for(kind, current, mask), dir_fd=folder)
        return
    try:
        current = os.fstat(fd).st_mode
        if stat.S_ISREG(current):
            os.fchmod(fd, mode_for(kind, current, mask))
    finally:
        os.close(fd)


def remove_empty_dirs(folders: Folders, dirs: set[str]) -> None:
    """Removes the folders of `dirs` left empty, deepest first, so a folder emptied by removing
    its empty children goes too. rmdir refuses non-empty folders, which keeps ignored files safe."""
    for rel in sorted(dirs, key=lambda d: -d.count("/")):
        parent, _, name = rel.rpartition("/")
        folder = folders.open(parent)
        if folder is None:
            continue
        try:
            os.rmdir(name, dir_fd=folder)
        except OSError:
            continue
        folders.forget(rel)  # made again later (a file written below it) is another folder


def umask() -> int:
    """The process umask (see `_umask`)."""
    return _umask()


def _umask() -> int:
    """The process umask, read without changing it where the OS allows (os.umask is racy in threads)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
