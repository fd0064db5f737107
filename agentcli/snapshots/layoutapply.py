"""Making a restored workspace's modes and empty folders match a snapshot's layout record.

Kept apart from `restore.py`, which writes the files: this runs after it, only for snapshots
with a record (see `layout.py`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agentcli.snapshots.errors import RestoreStoppedError
from agentcli.snapshots.guards import safe_relative_path
from agentcli.snapshots.layout import Layout, default_mode, scan_layout
from agentcli.snapshots.restore import remove_empty_dirs, umask
from agentcli.snapshots.restorefolders import Folders


def apply_layout(
    workspace: Path, target: Layout, current: Layout | None = None, *, mask: int | None = None
) -> list[str]:
    """Makes modes and empty folders match a snapshot's record, after its files are restored.

    Folders left empty that the snapshot did not have go (``rmdir``: never one with anything in
    it); the empty folders it had come back (never through a symlink); each regular file gets
    the recorded mode, or the default one when the record has none for it. `current` is the
    layout now when the caller knows it; else the workspace is scanned. `mask` is the umask
    when the caller read it already.

    Returns:
        The files whose mode changed.
    """
    if mask is None:
        mask = umask()
    if current is None:
        current = scan_layout(workspace, mask)
    wanted_dirs = {rel for rel in target.empty_dirs if safe_relative_path(rel) == rel}
    # A folder that held only an empty folder the snapshot lacks is left empty by its removal,
    # and goes too (rmdir: never one with anything in it); the wanted ones come back below.
    unwanted: set[str] = set()
    for rel in set(current.empty_dirs) - wanted_dirs:
        while rel:
            unwanted.add(rel)
            rel = rel.rpartition("/")[0]
    changed: list[str] = []
    if not unwanted and not wanted_dirs and not target.modes and not current.modes:
        return changed  # nothing to look at: not even the workspace's folder is opened
    # Through folder descriptors, as the restore's writes (see `restorefolders.py`): a folder
    # swapped for a link meanwhile stops this too, rather than have a mode set through it.
    with Folders(workspace) as folders:
        remove_empty_dirs(folders, unwanted)
        for rel in sorted(wanted_dirs):
            try:
                folders.open(rel, create=True)
            except (OSError, RestoreStoppedError):
                pass  # a file or link now stands where the folder was: it wins, as in the plan
            folders.trim()
        for rel in sorted(set(target.modes) | set(current.modes)):
            if safe_relative_path(rel) != rel:
                continue
            parent, _, name = rel.rpartition("/")
            folder = folders.open(parent)
            if folder is not None and _set_mode(folder, name, target.modes.get(rel), mask):
                changed.append(rel)
            folders.trim()
    return changed


def _set_mode(folder: int, name: str, recorded: int | None, mask: int) -> bool:
    """Give a regular file its recorded mode (default: as git checks one out); never through a link."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags, dir_fd=folder)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return False
        executable = bool(info.st_mode & 0o100)
        want = recorded if recorded is not None and bool(recorded & 0o100) == executable else None
        if want is None:
            want = default_mode(executable, mask)
        if stat.S_IMODE(info.st_mode) == want:
            return False
        os.fchmod(fd, want)
        return True
    finally:
        os.close(fd)
