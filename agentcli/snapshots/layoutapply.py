"""Making a restored workspace's modes and empty folders match a snapshot's layout record.

Kept apart from `restore.py`, which writes the files: this runs after it, only for snapshots
with a record (see `layout.py`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agentcli.snapshots.guards import safe_relative_path
from agentcli.snapshots.layout import Layout, default_mode, scan_layout
from agentcli.snapshots.restore import ensure_dir, remove_empty_dirs, umask


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
    remove_empty_dirs(workspace, unwanted)
    for rel in sorted(wanted_dirs):
        try:
            ensure_dir(workspace, rel)
        except OSError:
            pass  # a file now stands where the folder was: the file wins, as in the plan
    changed: list[str] = []
    for rel in sorted(set(target.modes) | set(current.modes)):
        if safe_relative_path(rel) != rel:
            continue
        if _set_mode(workspace / rel, target.modes.get(rel), mask):
            changed.append(rel)
    return changed


def _set_mode(path: Path, recorded: int | None, mask: int) -> bool:
    """Give a regular file its recorded mode (default: as git checks one out); never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
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
