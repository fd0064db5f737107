"""The index after a restore, set from what the restore wrote instead of captured again.

A restore knows exactly what it changed: the blobs it wrote (their ids are in the plan), the
files it deleted and the modes it set. When the watcher reports no other path changed while it
ran, a capture afterwards could only find those changes, so the store updates the index entries
of those paths and writes the tree, with no refresh of the workspace (no ignore rules loaded,
no diff against the working tree). Anything else the watcher saw — a path the restore did not
touch, a `.gitignore`, a folder holding files the restore did not write — sends the store back
to a capture hinted with every path seen.

A regular file the restore wrote is entered from what the restore already knows: the blob it
wrote and the stat data of the descriptor it wrote through (taken after the rename), exactly
the fields `Index.add` would fill after reading the file again and hashing it (~50 µs a file,
most of a restore's per-file cost past the write). That is only valid while the file is still
the one written, so each is `lstat`ed first, after the watcher's record was taken: a file
changed since (its mtime, ctime, size or inode differ) goes to `Index.add`, which hashes it as
it is, and a change after the `lstat` reaches the watcher's next record. Links, files whose
mode the layout step set afterwards, and indexes that fold case or distrust file modes go to
`Index.add` too.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
from pygit2 import C, ffi
from pygit2.errors import check_error

# The two ways of entering a file without libgit2's re-read share one entry builder.
from agentcli.snapshots.rawadd import fill_entry, stat_entries_trusted
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


def not_looked_at(seen: Iterable[str], looked_at: set[str], attributes: Iterable[str] = ()) -> list[str]:
    """The paths the layout cache must look at again: what the watcher saw, less the files the
    restore already showed it (after their writes) and the temporary names, gone since.

    `attributes` are the paths whose attributes changed (the watcher's IN_ATTRIB): the restore
    gives a file its mode before its rename, so such a change on a path it showed the cache
    came after, from someone else (a `chmod` between the write and this drain), and the path
    is looked at again whatever the restore showed.
    """
    changed = set(attributes)
    return [
        path
        for path in seen
        if (path not in looked_at or path in changed) and _TEMP_NAME.match(path.rpartition("/")[2]) is None
    ]


def update_index(repo: pygit2.Repository, index: pygit2.Index, workspace: Path, applied: Applied) -> list[str]:
    """Sets the index entries of the paths a restore changed; returns those paths.

    Deletions first, so a file replacing a folder (or a folder replacing a file) never meets
    the old entry.
    """
    for path in applied.deleted:
        try:
            index.remove(path)
        except (OSError, KeyError, pygit2.GitError):
            pass  # not in the index (never captured): nothing to drop
    known = applied.files if stat_entries_trusted(repo) else {}
    remodded = set(applied.chmodded)
    root = os.fsencode(workspace) + b"/"
    centry = ffi.new("git_index_entry *")
    for path in dict.fromkeys([*applied.chmodded, *applied.written]):
        written = known.get(path)
        if written is None or path in remodded:
            index.add(path)
            continue
        blob, st = written
        encoded = os.fsencode(path)
        try:
            now = os.lstat(root + encoded)
        except OSError:
            now = None
        if now is None or not same_file(st, now):
            index.add(path)  # changed since it was written (or gone: Index.add says so)
            continue
        c_path = ffi.new("char[]", encoded)
        fill_entry(centry, st, c_path, pygit2.Oid(hex=blob))
        check_error(C.git_index_add(index._index, centry), io=True)
    return applied.touched()


_unchecked = threading.Lock()


@contextmanager
def unchecked_tree_writes() -> Iterator[None]:
    """Lets libgit2 write the restore's trees without looking up every entry they hold.

    With strict object creation (libgit2's default) each tree written checks that every entry
    exists: a header read per entry, through the store's Python backend and then the packs
    (a deltified blob's size means walking its chain). At 10k files a 100-file restore rewrites
    trees holding ~4,400 entries, and that check was 8 ms of the 21 ms its write took. Every
    entry here is known to exist: the restore's blobs were checked before anything was written
    (`SnapshotStore._plan` makes a missing one a conflict) and the rest come from trees written
    with the check. The option is process-wide and libgit2 cannot be asked for it, so it is
    set back to the default afterwards; another thread's object written meanwhile is merely not
    checked either.
    """
    with _unchecked:
        pygit2.settings.enable_strict_object_creation(False)
        try:
            yield
        finally:
            pygit2.settings.enable_strict_object_creation(True)


def same_file(written: os.stat_result, now: os.stat_result) -> bool:
    """Tells whether `now` is the file as written: every field an index entry holds is equal."""
    return (
        written.st_ino == now.st_ino
        and written.st_dev == now.st_dev
        and written.st_mode == now.st_mode
        and written.st_size == now.st_size
        and written.st_mtime_ns == now.st_mtime_ns
        and written.st_ctime_ns == now.st_ctime_ns
        and written.st_uid == now.st_uid
        and written.st_gid == now.st_gid
    )

