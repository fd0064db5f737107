"""The index after a restore, set from what the restore wrote instead of captured again.

A restore knows exactly what it changed: the blobs it wrote (their ids are in the plan), the
files it deleted and the modes it set. When the watcher reports no other path changed while it
ran, a capture afterwards could only find those changes, so the store updates the index entries
of those paths and writes the tree, with no refresh of the workspace (no ignore rules loaded,
no diff against the working tree). Anything else the watcher saw — a path the restore did not
touch, a `.gitignore`, a folder holding files the restore did not write — sends the store back
to a capture hinted with every path seen.

Entries are added with `Index.add`, which hashes the file as it is on disk (not the blob id the
plan names): a file changed again between its write and now is recorded as it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import pygit2

from agentcli.snapshots.restore import Applied

_TEMP_NAME = re.compile(r"^\.(.+)\.agentcli-[0-9a-f]{8}$")
"""The temporary name a file is written under before its rename (`restore._write`)."""


def only_ours(workspace: Path, seen: Iterable[str], applied: Applied, layout_dirs: Iterable[str]) -> bool:
    """Tells whether every path the watcher saw is one the restore changed.

    Args:
        workspace: The workspace directory.
        seen: The watcher's paths since the undo point.
        applied: What the restore changed.
        layout_dirs: Empty folders the layout step may have made or removed.

    Returns:
        True when nothing else changed: the index can be set from `applied` alone.
    """
    touched = set(applied.touched())
    gone = set(applied.deleted).difference(applied.written)
    folders = _with_ancestors([*touched, *layout_dirs])
    for path in seen:
        if path in gone and os.path.lexists(os.path.join(workspace, path)):
            # Deleted, yet there: a folder the restore made in its place (holding only what it
            # wrote), or another process made it again.
            if os.path.isdir(os.path.join(workspace, path)) and _holds_only(workspace, path, touched, folders):
                continue
            return False
        if path in touched:
            continue
        parent, _, name = path.rpartition("/")
        match = _TEMP_NAME.match(name)
        if match is not None and (f"{parent}/{match[1]}" if parent else match[1]) in touched:
            continue
        if path in folders and _holds_only(workspace, path, touched, folders):
            continue
        return False
    return True


def _with_ancestors(paths: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for path in paths:
        parent = path.rpartition("/")[0]
        while parent and parent not in out:
            out.add(parent)
            parent = parent.rpartition("/")[0]
        out.add(path)
    return out


def _holds_only(workspace: Path, folder: str, touched: set[str], folders: set[str]) -> bool:
    """A folder the restore made or removed: anything in it must be the restore's own.

    A folder made now is watched only from its creation on, so a file another process put in
    it first would never be reported; listing it is what rules that out.
    """
    try:
        names = os.listdir(os.path.join(workspace, folder))
    except FileNotFoundError:
        return True  # removed (emptied by the deletions)
    except NotADirectoryError:
        return folder in touched
    except OSError:
        return False
    return all(f"{folder}/{name}" in touched or f"{folder}/{name}" in folders for name in names)


def not_looked_at(seen: Iterable[str], looked_at: set[str]) -> list[str]:
    """The paths the layout cache must look at again: what the watcher saw, less the files the
    restore already showed it (after their writes) and the temporary names, gone since."""
    return [
        path
        for path in seen
        if path not in looked_at and _TEMP_NAME.match(path.rpartition("/")[2]) is None
    ]


def update_index(index: pygit2.Index, applied: Applied) -> list[str]:
    """Sets the index entries of the paths a restore changed; returns those paths.

    Deletions first, so a file replacing a folder (or a folder replacing a file) never meets
    the old entry.
    """
    for path in applied.deleted:
        try:
            index.remove(path)
        except (OSError, KeyError, pygit2.GitError):
            pass  # not in the index (never captured): nothing to drop
    for path in dict.fromkeys([*applied.chmodded, *applied.written]):
        index.add(path)
    return applied.touched()
