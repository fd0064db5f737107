"""Refreshes stale stat data in bulk when most of the tree was touched without being changed.

A formatter run, a branch switched and back, `touch`: every file gets a new mtime and the same
bytes. libgit2 then hashes each one through its filter machinery — an attribute lookup per
file costing ~100 µs of system calls, 95% of such a capture (2.5-3.6x the git CLI). Git's racy
rules allow no shortcut: a changed mtime proves nothing about the content, so every file must be
read. What can be cut is the overhead around the read:

1. A sample of entries is compared with `lstat` (tens of microseconds). Only when most of the
   sample is stale does the bulk pass run; otherwise libgit2's diff does the work as usual.
2. The bulk pass `lstat`s every regular-file entry, and hashes those whose stat data changed but
   whose size and executable bit did not (a different size is a change; libgit2 takes it), right
   there on this thread: `os.open`/`os.read` and libgit2's blob hash of the bytes (`pygit2.hash`,
   the collision-detecting SHA-1 libgit2's diff uses; no filter, no attribute lookup).
3. Entries whose blob id matches get the new stat data in place, marked up to date, and the
   index is written so its timestamp is newer than their mtimes (else libgit2 would treat them
   as racily clean and hash them again). Files that did change are left alone for the diff.

The hash is git's blob hash of the raw bytes, which is what the store records: the shadow
repository turns every filter off (`info/attributes`).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
from pygit2 import C, ffi

SAMPLE = 32
"""Entries compared before deciding."""

STALE_SHARE = 0.5
"""The bulk pass runs when more than this share of the sample is stale."""

MIN_ENTRIES = 500
"""Below this many entries libgit2's own pass is quick enough."""

STREAM_BYTES = 1 << 20
"""Files larger than this are hashed by libgit2 in chunks rather than read whole into memory."""

_STAT_HEAD = struct.Struct("=iIiIIIIIII")
"""The head of a `git_index_entry`: ctime and mtime (seconds, nanoseconds), dev, ino, mode, uid,
gid, file_size; the id follows."""
_UPTODATE = 1 << 2  # GIT_INDEX_ENTRY_UPTODATE (flags_extended): libgit2 skips its racy check
_MODE_MASK = 0o170000
_REGULAR = 0o100000
_EXEC = 0o111


def mostly_stale(index: pygit2.Index, workspace: Path) -> bool:
    """Tells from a sample whether most entries' stat data no longer match their files."""
    raw = index._index
    count = C.git_index_entrycount(raw)
    if count < MIN_ENTRIES:
        return False
    stale = 0
    step = max(1, count // SAMPLE)
    for i in range(0, count, step):
        entry = C.git_index_get_byindex(raw, i)
        try:
            st = os.lstat(workspace / os.fsdecode(ffi.string(entry.path)))
        except OSError:
            continue
        if not _same_stat(entry, st):
            stale += 1
    return bool(stale > STALE_SHARE * min(SAMPLE, -(-count // step)))


def refresh_touched(index: pygit2.Index, workspace: Path) -> int:
    """Gives unchanged files their new stat data without libgit2's per-file overhead.

    One pass on this thread, hashing each stale file as its `lstat` finds it: 0.85x the wall
    time and 0.6x the CPU of the `lstat` loop feeding libgit2's file hash on a thread pool
    (10k touched files, paired runs; 0.80x / 0.73x at 100k). Every cffi call and every `lstat`
    gives up the GIL, so three threads trading it per file spent more time waking each other
    than the second core gave back (two threads each running this loop over half the index:
    1.06x one), and beside a CPU hog there is no second core to give.

    Args:
        index: The shadow index (changed in memory; the caller writes it).
        workspace: The workspace directory.

    Returns:
        How many entries were refreshed.
    """
    raw = index._index
    root = os.fsencode(workspace) + b"/"
    blob_hash = pygit2.hash
    open_, read, close = os.open, os.read, os.close
    # The entry was a regular file at its `lstat`. Swapped since: a link fails (O_NOFOLLOW), a
    # FIFO does not block (O_NONBLOCK), and the diff judges either.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    unchanged: list[tuple[Any, os.stat_result]] = []
    for entry, full, st in _stale_entries(raw, root):
        size = st.st_size
        try:
            if size > STREAM_BYTES:
                digest = pygit2.hashfile(os.fsdecode(full)).raw
            else:
                fd = open_(full, flags)
                try:
                    data = read(fd, size + 1)  # one byte more: a file grown since its lstat is a change
                finally:
                    close(fd)
                if len(data) != size:
                    continue
                digest = blob_hash(data).raw
        except (OSError, pygit2.GitError):
            continue  # unreadable or gone: the diff judges it
        if digest == ffi.buffer(entry.id.id, 20)[:]:
            unchanged.append((entry, st))
    # Written only after the loop: the entries are pointers into the index, valid while it is
    # not resized, and nothing here adds or removes entries. The file may have changed again
    # since its lstat; then its mtime or size differs from what is recorded here, and the next
    # diff hashes it anyway.
    if ffi.offsetof("git_index_entry", "id") == _STAT_HEAD.size:
        # The stat fields in one copy each: ten attribute writes through cffi cost ~2.5 µs
        # a file (0.25 s at 100k files).
        pack, memmove = _STAT_HEAD.pack, ffi.memmove
        for entry, st in unchanged:
            ctime_ns, mtime_ns = st.st_ctime_ns, st.st_mtime_ns
            head = pack(
                ctime_ns // 1_000_000_000 & 0x7FFFFFFF,
                ctime_ns % 1_000_000_000,
                mtime_ns // 1_000_000_000 & 0x7FFFFFFF,
                mtime_ns % 1_000_000_000,
                st.st_dev & 0xFFFFFFFF,
                st.st_ino & 0xFFFFFFFF,
                entry.mode,
                st.st_uid & 0xFFFFFFFF,
                st.st_gid & 0xFFFFFFFF,
                entry.file_size,
            )
            memmove(entry, head, _STAT_HEAD.size)
            entry.flags_extended |= _UPTODATE
    else:
        for entry, st in unchanged:
            _set_stat(entry, st)
            entry.flags_extended |= _UPTODATE
    return len(unchanged)


def _set_stat(entry: Any, st: os.stat_result) -> None:
    """What libgit2 records of a file's stat, field by field (where `_STAT_HEAD` does not fit)."""
    ctime_ns, mtime_ns = st.st_ctime_ns, st.st_mtime_ns
    entry.ctime.seconds = ctime_ns // 1_000_000_000 & 0x7FFFFFFF
    entry.ctime.nanoseconds = ctime_ns % 1_000_000_000
    entry.mtime.seconds = mtime_ns // 1_000_000_000 & 0x7FFFFFFF
    entry.mtime.nanoseconds = mtime_ns % 1_000_000_000
    entry.dev = st.st_dev & 0xFFFFFFFF
    entry.ino = st.st_ino & 0xFFFFFFFF
    entry.uid = st.st_uid & 0xFFFFFFFF
    entry.gid = st.st_gid & 0xFFFFFFFF


_Candidate = tuple[Any, bytes, os.stat_result]
"""An index entry (its cdata pointer, valid while the index is not changed), its file, its lstat."""


def _stale_entries(raw: Any, root: bytes) -> Iterator[_Candidate]:
    """Regular-file entries whose stat data changed but whose size and executable bit did not."""
    lstat = os.lstat
    get = C.git_index_get_byindex
    string = ffi.string
    for i in range(C.git_index_entrycount(raw)):
        entry = get(raw, i)
        mode = entry.mode
        if mode & _MODE_MASK != _REGULAR or entry.flags & 0x3000:  # files only, no conflict stages
            continue
        full = root + string(entry.path)
        try:
            st = lstat(full)
        except OSError:
            continue
        st_mode = st.st_mode
        if (
            st_mode & _MODE_MASK != _REGULAR
            or st.st_size & 0xFFFFFFFF != entry.file_size
            or (st_mode & _EXEC == 0) != (mode & _EXEC == 0)
            or _same_stat(entry, st)
        ):
            continue  # unchanged, or changed in a way the diff sees without hashing
        yield entry, full, st


def _same_stat(entry: Any, st: os.stat_result) -> bool:
    """Compares what libgit2 compares; nanoseconds only where the index recorded them.

    The mtime's seconds first: after a `touch` of everything that alone answers, and this runs
    once per entry."""
    mtime_ns = st.st_mtime_ns
    mtime = entry.mtime
    if mtime.seconds != mtime_ns // 1_000_000_000 & 0x7FFFFFFF:
        return False
    ctime_ns = st.st_ctime_ns
    ctime = entry.ctime
    return bool(
        ctime.seconds == ctime_ns // 1_000_000_000 & 0x7FFFFFFF
        and (mtime.nanoseconds == 0 or mtime.nanoseconds == mtime_ns % 1_000_000_000)
        and (ctime.nanoseconds == 0 or ctime.nanoseconds == ctime_ns % 1_000_000_000)
        and entry.ino == st.st_ino & 0xFFFFFFFF
        and entry.file_size == st.st_size & 0xFFFFFFFF
    )
