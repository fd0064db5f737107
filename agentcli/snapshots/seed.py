"""The seed: the shadow index's first contents, copied from the user's index.

The user's index carries the stat data of every tracked file, so the first diff finds unchanged
files by `lstat` alone (measured: 15-150x faster than hashing everything). What a copy must not
keep is dropped or distrusted before any diff reads it: entries git itself would not look at
(assume-unchanged, skip-worktree, intent-to-add, conflicts) and entries whose blob is the
*cleaned* content of a converted file (`conversions.py`).

libgit2 loads the copy in full — it SHA-1s the whole file (its collision-detecting SHA-1, even
for a zero trailer: `index.skipHash` saves nothing in 1.9) and allocates every entry, ~50 ms at
100k entries — and only then can anything ask it about the entries. The checks that need only
the file's bytes (the flag scan, ~17 ms there in Python; whether any attribute source exists;
opening the user's repository) run on this thread meanwhile, since libgit2 runs without the GIL.
Only while a CPU is free (`splitwalk.cpus_idle`): beside a busy process the two threads share
one core and the load, the longer of the two, takes longer (measured in bench/README.md).
The load still verifies the checksum: a corrupt user index fails it and the caller seeds from
HEAD instead.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pygit2

from agentcli.snapshots._libgit2 import any_flagged_entry, untrustworthy_entries
from agentcli.snapshots.conversions import converted_entries, distrust, may_convert
from agentcli.snapshots.splitwalk import cpus_idle, worker_count


class _Load:
    """`repo.index` on a thread of its own; `result()` waits for it and re-raises its failure."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self._index: pygit2.Index | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="agentcli-seed-load", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._index = self._repo.index
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread by result()
            self._error = exc

    def result(self) -> pygit2.Index:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._index is not None
        return self._index

    def wait(self) -> None:
        """Waits for the thread without raising its failure (another is propagating)."""
        self._thread.join()


def _start_load(repo: pygit2.Repository) -> _Load | None:
    """The load on a thread, or None where no thread can be started (a `pids.max` or ulimit
    reached in a container): the copy is then loaded here, as on one CPU."""
    try:
        return _Load(repo)
    except RuntimeError:
        return None


def copy_user_index(source: Path, target: Path) -> bytes:
    """Copies the user's index to `target` with its mtime; returns the bytes copied.

    One read, and the times of the very file read (`fstat` of its descriptor): git replaces its
    index by a rename, so a stat of the path could be a newer file's. libgit2 compares entry
    mtimes with the index file's to find racily clean entries, exactly as git does, so the copy
    must carry the original's mtime.
    """
    with open(source, "rb") as fh:
        st = os.fstat(fh.fileno())
        raw = fh.read()
    tmp = target.with_name(f"{target.name}.seed{os.getpid()}")
    try:
        tmp.write_bytes(raw)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return raw


def seed_from_user_index(
    repo: pygit2.Repository,
    user_index: Path,
    common_dir: Path,
    target: Path,
    open_user_repo: Callable[[], pygit2.Repository | None],
    *,
    copied: Callable[[int], object] | None = None,
) -> str:
    """Seeds the shadow index at `target` from the user's index and drops what it must not trust.

    Args:
        repo: The shadow repository, whose index file is `target` and not loaded yet.
        user_index: The user's index file.
        common_dir: The user's common git directory (where `info/attributes` lives).
        target: The shadow's index file.
        open_user_repo: Opens the user's repository (read only), or None when it cannot.
        copied: Told the entry count once the copy is written, when a CPU is free (the split
            walk's handles start loading it then: `SplitWalk.prefetch`).

    Returns:
        How the copy was loaded: "thread" (beside the checks) or "here" (after them).

    Raises:
        OSError, pygit2.GitError, ValueError: The copy could not be made or loaded (a corrupt
            index fails libgit2's checksum); the caller seeds from HEAD instead.
    """
    raw = copy_user_index(user_index, target)
    load = _start_load(repo) if worker_count() >= 2 and cpus_idle(2) else None
    try:
        if load is not None and copied is not None:
            copied(int.from_bytes(raw[8:12], "big") if raw[:4] == b"DIRC" else 0)
        flagged = any_flagged_entry(raw)
        user_repo = open_user_repo()
        converts = may_convert(user_repo, common_dir, raw) if user_repo is not None else False
    except BaseException:
        if load is not None:
            load.wait()  # never leave the thread running; what failed here is what is raised
        raise
    index = load.result() if load is not None else repo.index
    dropped = untrustworthy_entries(index) if flagged is not False else []
    for path in dropped:
        for stage in (0, 1, 2, 3):
            try:
                index.remove(path, stage)
            except (OSError, pygit2.GitError, KeyError):
                pass
    converted: list[str] = []
    if user_repo is not None and converts is not False:
        converted = converted_entries(user_repo, common_dir, raw, index, possible=converts)
    distrust(index, converted)
    if dropped or converted:
        index.write()
    return "thread" if load is not None else "here"
