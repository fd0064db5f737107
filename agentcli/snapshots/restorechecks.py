"""The checks a restore plan makes before anything is touched (see `restore.py`).

A path must be plain (no `..`, no `.git`, normalized), and every write must land where the
workspace holds a real folder or nothing: never through a symlink or a file no snapshot has,
never over a folder holding files no snapshot has. Any such path is a conflict.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agentcli.snapshots.models import PlannedChange, RestoreConflict

_UNSAFE_PARTS = frozenset(("", ".", ".."))


def plain_path(path: str) -> bool:
    """A path already normalized and safe by `safe_relative_path`'s rules, told without pathlib.

    Tree paths almost always are; building a `PurePosixPath` for each cost more per file than
    the write. False sends the path to `safe_relative_path`, which decides.
    """
    if "\0" in path or os.sep != "/":
        return False
    for part in path.split("/"):
        if part in _UNSAFE_PARTS or (len(part) == 4 and part.lower() == ".git"):
            return False
    return True


def find_conflicts(
    workspace: Path, deletes: dict[str, PlannedChange], writes: list[PlannedChange]
) -> list[RestoreConflict]:
    conflicts: list[RestoreConflict] = []
    checked_dirs: dict[str, str | None] = {}
    for change in writes:
        parts = change.path.split("/")
        # Every ancestor must be a real directory, missing, or something we delete first.
        for i in range(1, len(parts)):
            ancestor = "/".join(parts[:i])
            if ancestor not in checked_dirs:
                checked_dirs[ancestor] = _ancestor_problem(workspace, ancestor, deletes)
            problem = checked_dirs[ancestor]
            if problem:
                conflicts.append(RestoreConflict(path=change.path, reason=problem))
                break
        else:
            problem = _target_problem(workspace, change.path, deletes)
            if problem:
                conflicts.append(RestoreConflict(path=change.path, reason=problem))
    return conflicts


def _ancestor_problem(workspace: Path, ancestor: str, deletes: dict[str, PlannedChange]) -> str | None:
    try:
        st = os.lstat(os.path.join(workspace, ancestor))
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISDIR(st.st_mode):
        return None
    if ancestor in deletes:
        return None
    what = "a symlink" if stat.S_ISLNK(st.st_mode) else "a file"
    return (
        f"{ancestor} is {what} that no snapshot contains (ignored or skipped); "
        "restoring would replace it with a directory"
    )


def _target_problem(workspace: Path, path: str, deletes: dict[str, PlannedChange]) -> str | None:
    try:
        st = os.lstat(os.path.join(workspace, path))
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    # A directory stands where the target has a file: fine only if every file in it goes away.
    extra: list[str] = []
    for root, dirs, files in os.walk(workspace / path):
        rel_root = os.path.relpath(root, workspace).replace(os.sep, "/")
        if ".git" in dirs:
            extra.append(f"{rel_root}/.git")
            dirs.remove(".git")
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            rel = f"{rel_root}/{name}"
            if rel not in deletes:
                extra.append(rel)
        if len(extra) >= 3:
            break
    if extra:
        return (
            f"{path} is a directory holding files no snapshot contains (e.g. {', '.join(extra[:3])}); "
            "restoring would delete them"
        )
    return None
