"""Adds changed regular files to the shadow index without libgit2's per-file filter setup.

`Index.add(path)` (`git_index_add_bypath`) loads the filter list of every file it adds — an
attribute lookup of ~80 µs in system calls — although the shadow repository turns every filter
off (`info/attributes`), so the blob is always the file's raw bytes. Here a regular file is read
with `os.read`, stored with `Repository.create_blob` (no filter) and entered with the stat data
of the descriptor it was read from, which is what `git_index_add_bypath` records too. Anything
else (a link, a nested repository, a file past `STREAM_BYTES`, an index that folds case or
distrusts file modes, a system without `O_NOFOLLOW`, a file that changed while it was read) goes to
`Index.add` as before.

The stat data are taken before the read: a file written after them carries a newer mtime or
size than the entry, so the next walk hashes it again (libgit2 itself `lstat`s, then reads).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pygit2
from pygit2 import C, ffi
from pygit2.errors import check_error

STREAM_BYTES = 1 << 20
"""Larger files go to libgit2, which hashes them in chunks instead of holding them in memory."""

_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_FLAGS |= getattr(os, "O_BINARY", 0)  # Windows: no newline translation


def add_files(repo: pygit2.Repository, index: pygit2.Index, workspace: Path, paths: list[str]) -> list[str]:
    """Adds the regular files among `paths` to `index`; returns the paths left for `Index.add`.

    Args:
        repo: The shadow repository (blobs are written to its object database).
        index: The shadow index.
        workspace: The workspace directory.
        paths: Workspace-relative paths the diff reported modified or new.

    Returns:
        The paths not added here, in their order.
    """
    # libgit2 decides instead: a link from a file without O_NOFOLLOW; each path's case against
    # the index's with core.ignorecase; the mode to keep when core.filemode is false.
    if not paths or not hasattr(os, "O_NOFOLLOW") or not stat_entries_trusted(repo):
        return paths
    root = os.fsencode(workspace) + b"/"
    raw = index._index
    centry = ffi.new("git_index_entry *")
    rest: list[str] = []
    for path in paths:
        encoded = os.fsencode(path)
        try:
            fd = os.open(root + encoded, _FLAGS)
        except OSError:
            rest.append(path)  # a link (O_NOFOLLOW), gone, unreadable: libgit2 says what it is
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > STREAM_BYTES:
                rest.append(path)
                continue
            data = os.read(fd, st.st_size + 1)
        except OSError:
            rest.append(path)
            continue
        finally:
            os.close(fd)
        if len(data) != st.st_size:
            rest.append(path)  # written while read: libgit2 takes it as it is then
            continue
        oid = repo.create_blob(data)
        c_path = ffi.new("char[]", encoded)
        fill_entry(centry, st, c_path, oid)
        check_error(C.git_index_add(raw, centry), io=True)
    return rest


def stat_entries_trusted(repo: pygit2.Repository) -> bool:
    """Whether an entry can be built from a file's stat data as libgit2 would: not where libgit2
    matches paths' case against the index (core.ignorecase) or keeps modes the files cannot
    hold (core.filemode false)."""
    return not config_flag(repo, "core.ignorecase", False) and config_flag(repo, "core.filemode", True)


def config_flag(repo: pygit2.Repository, name: str, default: bool) -> bool:
    try:
        return bool(repo.config.get_bool(name))
    except (KeyError, pygit2.GitError):
        return default


def fill_entry(centry: object, st: os.stat_result, c_path: object, oid: pygit2.Oid) -> None:
    """Sets `centry` as `git_index_entry__init_from_stat` would, for a regular file."""
    e = centry
    e.ctime.seconds = st.st_ctime_ns // 1_000_000_000 & 0x7FFFFFFF  # type: ignore[attr-defined]
    e.ctime.nanoseconds = st.st_ctime_ns % 1_000_000_000  # type: ignore[attr-defined]
    e.mtime.seconds = st.st_mtime_ns // 1_000_000_000 & 0x7FFFFFFF  # type: ignore[attr-defined]
    e.mtime.nanoseconds = st.st_mtime_ns % 1_000_000_000  # type: ignore[attr-defined]
    e.dev = st.st_rdev & 0xFFFFFFFF  # type: ignore[attr-defined]  # libgit2's choice (0 for a file)
    e.ino = st.st_ino & 0xFFFFFFFF  # type: ignore[attr-defined]
    e.mode = 0o100755 if st.st_mode & 0o100 else 0o100644  # type: ignore[attr-defined]
    e.uid = st.st_uid & 0xFFFFFFFF  # type: ignore[attr-defined]
    e.gid = st.st_gid & 0xFFFFFFFF  # type: ignore[attr-defined]
    e.file_size = st.st_size & 0xFFFFFFFF  # type: ignore[attr-defined]
    e.flags = 0  # type: ignore[attr-defined]
    e.flags_extended = 0  # type: ignore[attr-defined]
    e.path = c_path  # type: ignore[attr-defined]
    ffi.memmove(ffi.addressof(e, "id"), oid.raw, 20)
