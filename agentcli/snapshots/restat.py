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
   the collision-detecting SHA-1 libgit2's diff uses; no filter, no attribute lookup). With a
   CPU free, a second process does the same for the last part of the index (`hashworker.py`).
3. Entries whose blob id matches get the new stat data in place, marked up to date, and the
   index is written so its timestamp is newer than their mtimes (else libgit2 would treat them
   as racily clean and hash them again). Files that did change are left alone for the diff.

The hash is git's blob hash of the raw bytes, which is what the store records: the shadow
repository turns every filter off (`info/attributes`).
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2
from pygit2 import C, ffi

if TYPE_CHECKING:
    from agentcli.snapshots.hashworker import HashWorker

SAMPLE = 32
"""Entries compared before deciding."""

STALE_SHARE = 0.5
"""The bulk pass runs when more than this share of the sample is stale."""

MIN_ENTRIES = 500
"""Below this many entries libgit2's own pass is quick enough."""

STREAM_BYTES = 1 << 20
"""Files larger than this are hashed by libgit2 in chunks rather than read whole into memory."""

WORKER_MIN_ENTRIES = 4_000
"""Below this many entries the hashing process's round trip (~3 ms) and the records handed to it
cost more than the half of the pass it takes off this thread."""

OWN_SHARE = 0.47
"""The share of the entries this thread hashes when the hashing process takes the rest: less
than half, because this thread also builds the process's records and writes every refreshed
entry back (~8 ms at 10k entries, against ~12.5 µs of CPU a file to judge and hash)."""

_STAT_HEAD = struct.Struct("=iIiIIIIIII")
"""The head of a `git_index_entry`: ctime and mtime (seconds, nanoseconds), dev, ino, mode, uid,
gid, file_size; the id follows."""
_ENTRY_HEAD = struct.Struct(_STAT_HEAD.format + "20sHH")
"""The first 64 bytes of a `git_index_entry`: `_STAT_HEAD`, the blob id, flags, extended flags."""
_RECORD_FITS = (
    ffi.sizeof("git_oid") == 20
    and ffi.offsetof("git_index_entry", "id") == 40
    and ffi.offsetof("git_index_entry", "flags") == 60
    and ffi.offsetof("git_index_entry", "flags_extended") == 62
)
"""The entry's layout is `_ENTRY_HEAD`'s: a record is one copy of its bytes."""
_RECORD_HEAD = struct.Struct("=IH")
"""Starts each record: the entry's position and its path's length."""
_REPLY = struct.Struct("=I" + _STAT_HEAD.format.removeprefix("="))
"""An entry to refresh: its position, then the values of `_STAT_HEAD`."""
_POSITION = struct.Struct("=I")
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
    root = os.fsencode(workspace) + b"/"  # bytes, not a Path per entry: ~0.2 ms of every walk
    for i in range(0, count, step):
        entry = C.git_index_get_byindex(raw, i)
        try:
            st = os.lstat(root + ffi.string(entry.path))
        except OSError:
            continue
        if not _same_stat(entry, st):
            stale += 1
    return bool(stale > STALE_SHARE * min(SAMPLE, -(-count // step)))


def refresh_touched(index: pygit2.Index, workspace: Path, worker: HashWorker | None = None) -> int:
    """Gives unchanged files their new stat data without libgit2's per-file overhead.

    One pass on this thread, hashing each stale file as its `lstat` finds it: 0.85x the wall
    time and 0.6x the CPU of the `lstat` loop feeding libgit2's file hash on a thread pool
    (10k touched files, paired runs; 0.80x / 0.73x at 100k). Every cffi call and every `lstat`
    gives up the GIL, so three threads trading it per file spent more time waking each other
    than the second core gave back (two threads each running this loop over half the index:
    1.06x one), and beside a CPU hog there is no second core to give. A second *process* has
    no GIL to trade: when `worker` is ready, it takes the last part of the index
    (`hashworker.py`) while this thread does the first.

    Args:
        index: The shadow index (changed in memory; the caller writes it).
        workspace: The workspace directory.
        worker: The store's hashing process, if it has one.

    Returns:
        How many entries were refreshed.
    """
    raw = index._index
    root = os.fsencode(workspace) + b"/"
    count = C.git_index_entrycount(raw)
    split = count
    sent = False
    if worker is not None and count >= WORKER_MIN_ENTRIES and worker.usable():
        split = int(count * OWN_SHARE)
        sent = worker.submit(root, entry_records(raw, split, count))
        if not sent:
            split = count
    started = time.monotonic()
    try:
        unchanged = [hash_records(root, entry_records(raw, 0, split))]
    except BaseException:
        if sent:
            assert worker is not None
            worker.close()  # nobody will read its reply; the next walk starts a fresh one
        raise
    if sent:
        assert worker is not None
        theirs = worker.result(time.monotonic() - started)
        # The worker gone or failing: its part is done here (nothing of it was applied).
        unchanged.append(theirs if theirs is not None else hash_records(root, entry_records(raw, split, count)))
    return _apply(raw, unchanged)


Records = bytes
"""Index entries for the bulk pass, one after another: `_RECORD_HEAD` (position, path length),
the entry's first 64 bytes (`_ENTRY_HEAD`), the path. Bytes rather than objects: handed to the
hashing process in one copy, and its memory does not grow with a list of them."""

Refreshed = bytes
"""Entries to refresh, one after another: `_REPLY` (position, then the stat data as `_STAT_HEAD`)."""


def entry_records(raw: Any, start: int, stop: int) -> Records:
    """The entries `start` to `stop` as records a process without the index can judge."""
    get = C.git_index_get_byindex
    string = ffi.string
    pack = _RECORD_HEAD.pack
    parts: list[bytes] = []
    append = parts.append
    if _RECORD_FITS:
        buffer = ffi.buffer
        size = _ENTRY_HEAD.size
        for i in range(start, stop):
            entry = get(raw, i)
            path = string(entry.path)
            append(pack(i, len(path)) + buffer(entry, size)[:] + path)
        return b"".join(parts)
    for i in range(start, stop):
        entry = get(raw, i)
        path = string(entry.path)
        head = _ENTRY_HEAD.pack(
            entry.ctime.seconds, entry.ctime.nanoseconds, entry.mtime.seconds, entry.mtime.nanoseconds,
            entry.dev, entry.ino, entry.mode, entry.uid, entry.gid, entry.file_size,
            ffi.buffer(ffi.addressof(entry, "id"))[:20], entry.flags, entry.flags_extended,
        )
        append(pack(i, len(path)) + head + path)
    return b"".join(parts)


def hash_records(root: bytes, records: Records) -> Refreshed:
    """Hashes each stale regular file of `records`; returns the new stat data of those unchanged.

    Runs here and in the hashing process alike: both halves of a split pass judge the same way.
    """
    blob_hash = pygit2.hash
    open_, read, close = os.open, os.read, os.close
    # The entry was a regular file at its `lstat`. Swapped since: a link fails (O_NOFOLLOW), a
    # FIFO does not block (O_NONBLOCK), and the diff judges either.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    out = bytearray()
    reply = _REPLY.pack
    for i, full, st, oid, mode, file_size in _stale_records(records, root):
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
        if digest == oid:
            ctime_ns, mtime_ns = st.st_ctime_ns, st.st_mtime_ns
            out += reply(
                i,
                ctime_ns // 1_000_000_000 & 0x7FFFFFFF,
                ctime_ns % 1_000_000_000,
                mtime_ns // 1_000_000_000 & 0x7FFFFFFF,
                mtime_ns % 1_000_000_000,
                st.st_dev & 0xFFFFFFFF,
                st.st_ino & 0xFFFFFFFF,
                mode,
                st.st_uid & 0xFFFFFFFF,
                st.st_gid & 0xFFFFFFFF,
                file_size,
            )
    return bytes(out)


def _apply(raw: Any, parts: list[Refreshed]) -> int:
    """Gives each entry its new stat data and marks it up to date; returns how many.

    Done only after every file was judged: the entries are pointers into the index, valid while
    it is not resized, and nothing here adds or removes entries. A file changed again since its
    `lstat` has another mtime or size than recorded here, and the next diff hashes it anyway.
    """
    get = C.git_index_get_byindex
    step = _REPLY.size
    position = _POSITION.unpack_from
    done = 0
    for part in parts:
        view = memoryview(part)
        if ffi.offsetof("git_index_entry", "id") == _STAT_HEAD.size == step - _POSITION.size:
            # The stat fields in one copy each: ten attribute writes through cffi cost ~2.5 µs
            # a file (0.25 s at 100k files).
            memmove = ffi.memmove
            for off in range(0, len(part), step):
                entry = get(raw, position(part, off)[0])
                memmove(entry, view[off + 4 : off + step], step - 4)
                entry.flags_extended |= _UPTODATE
        else:
            for values in _REPLY.iter_unpack(part):
                entry = get(raw, values[0])
                _set_stat(entry, values[1:])
                entry.flags_extended |= _UPTODATE
        done += len(part) // step
    return done


def _set_stat(entry: Any, values: tuple[int, ...]) -> None:
    """What libgit2 records of a file's stat, field by field (where `_STAT_HEAD` does not fit)."""
    (
        entry.ctime.seconds, entry.ctime.nanoseconds, entry.mtime.seconds, entry.mtime.nanoseconds,
        entry.dev, entry.ino, _mode, entry.uid, entry.gid, _size,
    ) = values


_Candidate = tuple[int, bytes, os.stat_result, bytes, int, int]
"""A stale entry: its position, its file, its lstat, its blob id, its mode and recorded size."""


def _stale_records(records: Records, root: bytes) -> Iterator[_Candidate]:
    """Regular-file entries whose stat data changed but whose size and executable bit did not."""
    lstat = os.lstat
    record_head, entry_head = _RECORD_HEAD.unpack_from, _ENTRY_HEAD.unpack_from
    head_size, entry_size = _RECORD_HEAD.size, _RECORD_HEAD.size + _ENTRY_HEAD.size
    off, end = 0, len(records)
    while off < end:
        i, length = record_head(records, off)
        ctime_s, ctime_ns, mtime_s, mtime_ns, _dev, ino, mode, _uid, _gid, file_size, oid, eflags, _ext = entry_head(
            records, off + head_size
        )
        path = records[off + entry_size : off + entry_size + length]
        off += entry_size + length
        if mode & _MODE_MASK != _REGULAR or eflags & 0x3000:  # files only, no conflict stages
            continue
        full = root + path
        try:
            st = lstat(full)
        except OSError:
            continue
        st_mode = st.st_mode
        if (
            st_mode & _MODE_MASK != _REGULAR
            or st.st_size & 0xFFFFFFFF != file_size
            or (st_mode & _EXEC == 0) != (mode & _EXEC == 0)
            or _same_times(mtime_s, mtime_ns, ctime_s, ctime_ns, ino, st)
        ):
            continue  # unchanged, or changed in a way the diff sees without hashing
        yield i, full, st, oid, mode, file_size


def _same_stat(entry: Any, st: os.stat_result) -> bool:
    """Compares what libgit2 compares, for a live entry (the sample of `mostly_stale`)."""
    mtime, ctime = entry.mtime, entry.ctime
    if entry.file_size != st.st_size & 0xFFFFFFFF:
        return False
    return _same_times(mtime.seconds, mtime.nanoseconds, ctime.seconds, ctime.nanoseconds, entry.ino, st)


def _same_times(mtime_s: int, mtime_ns: int, ctime_s: int, ctime_ns: int, ino: int, st: os.stat_result) -> bool:
    """Compares times and inode as libgit2 does; nanoseconds only where the index recorded them.

    The mtime's seconds first: after a `touch` of everything that alone answers, and this runs
    once per entry. (The size is compared by the callers.)"""
    st_mtime = st.st_mtime_ns
    if mtime_s != st_mtime // 1_000_000_000 & 0x7FFFFFFF:
        return False
    st_ctime = st.st_ctime_ns
    return bool(
        ctime_s == st_ctime // 1_000_000_000 & 0x7FFFFFFF
        and (mtime_ns == 0 or mtime_ns == st_mtime % 1_000_000_000)
        and (ctime_ns == 0 or ctime_ns == st_ctime % 1_000_000_000)
        and ino == st.st_ino & 0xFFFFFFFF
    )
