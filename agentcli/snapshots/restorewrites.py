"""Writing a restore's files: whole, under a temporary name renamed into place, from threads.

A path is never half-written: each file is written under a temporary name in its folder, with
its final mode when the umask allows (else 0600, then its mode), and renamed over the old one,
so a reader sees the old file or the new one and a crash leaves one of them (on ext4 the
rename over a file makes the kernel write the new data out first). Creating a file and
renaming it over another wait on the filesystem far longer than they compute, so a restore
writing many files writes them from a few threads; blobs are read in the calling thread, the
repository's only user.
"""

from __future__ import annotations

import os
import secrets
import stat
import threading
import unicodedata
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pygit2

from agentcli.snapshots.layout import default_mode
from agentcli.snapshots.models import PlannedChange
from agentcli.snapshots.restorefolders import Folders

WRITE_THREADS = 4
"""A restore writing many files writes them from this many threads. Each write waits on the
filesystem far longer than it computes (a new inode, then the rename over the old one: 100
files at 10k took 95 ms of wall time for 34 ms of CPU), and the waits overlap: 0.56-0.66x the
wall time with 2-8 threads, the same CPU. Only system calls run there: blobs are read here."""

PARALLEL_WRITES_MIN = 8
"""Fewer files than this are written in the calling thread (starting threads costs more)."""

WRITE_BATCH_BYTES = 32 * 1024 * 1024
"""Blobs are read a batch of about this many bytes at a time, bounding what is held at once."""


def write_files(
    repo: pygit2.Repository,
    folders: Folders,
    writes: list[PlannedChange],
    mask: int,
    recorded: dict[str, int],
    record: Callable[[PlannedChange, bytes, os.stat_result | None], None],
) -> None:
    """Writes files and symlinks whose folders exist, on `WRITE_THREADS` threads when many.

    Each is written whole under a temporary name and renamed into place, so what another
    process sees of each path is the old file or the new one, on one thread or several.
    `record` is called here, in the plan's order, with the bytes written and (for a file) the
    stat data of its descriptor after the rename. A failure is raised once every write under
    way has finished (none is left running); no write still queued starts.

    Args:
        repo: The shadow repository, to read blobs from (in this thread only).
        folders: The workspace's folders, every one the writes go into made already; each
            write is made relative to its folder's descriptor (see `restorefolders.py`).
        writes: The plan's writes, in its order.
        mask: The process umask.
        recorded: The target's recorded modes (see `layout.py`).
        record: Told of each file written.
    """

    def write(job: tuple[int, PlannedChange, bytes]) -> os.stat_result | None:
        folder, change, data = job
        return _write(folder, change, data, mask, recorded.get(change.path))

    with ThreadPoolExecutor(WRITE_THREADS, thread_name_prefix="restore-write") as pool:
        # A pool starts no thread until asked: few writes, or names that may be one file, or
        # no thread to be had, and each is written here, in the plan's order.
        many = len(writes) >= PARALLEL_WRITES_MIN and distinct_everywhere(writes)
        each = pool.map if many and _all_started(pool) else map
        try:
            for batch in _read_blobs(repo, writes):
                # Folders are looked up here, before any of the batch's writes starts: the
                # descriptors stay open until its last write has returned, and are trimmed
                # only then, when no thread writes.
                jobs = [(_folder(folders, change), change, data) for change, data in batch]
                for (_fd, change, data), written in zip(jobs, each(write, jobs), strict=True):
                    record(change, data, written)
                folders.trim()
        except BaseException:
            # A failure (or an interrupt) starts no write still queued; those under way finish.
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _folder(folders: Folders, change: PlannedChange) -> int:
    """The descriptor of the folder `change` is written into (made again if removed meanwhile)."""
    folder = folders.open(change.path.rpartition("/")[0], create=True)
    assert folder is not None  # made where missing
    return folder


def _all_started(pool: ThreadPoolExecutor) -> bool:
    """Starts every thread of `pool` before any write; False where one cannot be started (a
    `pids.max` or ulimit reached), so the writes run in this thread rather than fail halfway
    through a restore whose deletions are done."""
    gate = threading.Barrier(WRITE_THREADS + 1)
    try:
        for _ in range(WRITE_THREADS):
            pool.submit(gate.wait)  # each blocks its thread, so the next needs a new one
    except RuntimeError:
        gate.abort()  # the threads started are let go (their wait fails, to no one's notice)
        return False
    gate.wait()
    return True


def distinct_everywhere(writes: list[PlannedChange]) -> bool:
    """Tells whether the paths name different files on every filesystem: where case or Unicode
    form is folded (macOS, Windows) two of them may be one file, and the plan's order, which
    one thread keeps, decides which write is left."""
    folded = {unicodedata.normalize("NFC", change.path).casefold() for change in writes}
    return len(folded) == len(writes)


def _read_blobs(repo: pygit2.Repository, writes: list[PlannedChange]) -> Iterator[list[tuple[PlannedChange, bytes]]]:
    """The blobs to write, read in batches of about `WRITE_BATCH_BYTES`, in the plan's order."""
    batch: list[tuple[PlannedChange, bytes]] = []
    size = 0
    for change in writes:
        assert change.new_id is not None  # a write names the blob it writes (plan_changes)
        blob = repo[change.new_id]
        assert isinstance(blob, pygit2.Blob)
        batch.append((change, blob.data))
        size += blob.size
        if size >= WRITE_BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _write(folder: int, change: PlannedChange, data: bytes, umask: int, mode: int | None) -> os.stat_result | None:
    """Writes a file or symlink under a temporary name in its folder (`folder`, a descriptor)
    and renames it into place; returns, for a file, the stat data of its descriptor, taken
    after the rename."""
    name = change.path.rpartition("/")[2]
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        # Emptied by the deletions (the plan checked it held nothing else); empty
        # subdirectories git never saw may remain, and go too (never through a link).
        for _root, dirs, _files, root_fd in os.fwalk(name, dir_fd=folder, topdown=False):
            for below in dirs:
                os.rmdir(below, dir_fd=root_fd)
        os.rmdir(name, dir_fd=folder)
        existing = None
    tmp = f".{name}.agentcli-{secrets.token_hex(4)}"
    if change.kind == "symlink":
        try:
            os.symlink(os.fsdecode(data), tmp, dir_fd=folder)
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            _discard(folder, tmp)
            raise
        return None
    executable = change.kind == "executable"
    keep = existing.st_mode if existing is not None and stat.S_ISREG(existing.st_mode) else None
    if mode is not None and bool(mode & 0o100) == executable:
        wanted = mode  # as recorded with the snapshot
    elif keep is not None:
        wanted = mode_for(change.kind, keep, umask)
    else:
        wanted = default_mode(executable, umask)
    # Raw descriptor calls: a file object per file cost more than the writes at 100 files. Made
    # with its final mode when the umask leaves it whole (never wider than wanted, so never
    # readable by others meanwhile); else 0600 and fchmod, a call and a watcher event more.
    whole = (wanted & umask) == 0 and (wanted & 0o7000) == 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, wanted if whole else 0o600, dir_fd=folder)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if not whole:
                os.fchmod(fd, wanted)
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            _discard(folder, tmp)
            raise
        # The descriptor is open across the rename, so this is the file now in place, ctime
        # (which the rename sets) included: the index entry needs no lstat or re-hash.
        written = os.fstat(fd)
        if stat.S_IMODE(written.st_mode) != wanted:
            # A folder's default ACL narrows a new file's mode in place of the umask: set it
            # (narrower until now, never wider).
            os.fchmod(fd, wanted)
            written = os.fstat(fd)
        return written
    finally:
        os.close(fd)


def _discard(folder: int, tmp: str) -> None:
    """Removes a temporary file a failed write left (if it was made at all)."""
    try:
        os.unlink(tmp, dir_fd=folder)
    except OSError:
        pass


def mode_for(kind: str, current: int | None, umask: int) -> int:
    """Permission bits for a file: keep the current ones, set or clear x where r is set (as git does)."""
    base = stat.S_IMODE(current) if current is not None else (0o666 & ~umask)
    base &= ~0o111
    if kind == "executable":
        base |= (base & 0o444) >> 2
    return base
