"""Walks the workspace in parallel libgit2 diffs to find the few paths a full capture must refresh.

A capture that must walk the tree spends ~75% of its time in the kernel's `lstat` (one per file,
measured with perf at 100k files), and libgit2's workdir walk runs on one thread; `git add -A`
spreads its `lstat`s over threads (preload-index). So the tree is cut into a few groups of
top-level entries (big directories cut one level further) and each group is diffed against the
shadow index on its own thread: pygit2 calls libgit2 through cffi, which releases the GIL, so the
walks overlap. The diffs only *read*: the deltas they report (modified, deleted, untracked,
ignored, unreadable, nested repositories) become the path hint of the one diff that updates the
index (`DISABLE_PATHSPEC_MATCH`, as after `write_file`), so what is recorded is exactly what the
single walk records (a property test compares both after random file operations).

Rejected (bench/README.md): `os.lstat` on a thread pool (the GIL); diffs updating one index at
once (libgit2's index is not safe to write from two threads).

What a read-only diff cannot do is keep the stat data of a file that was touched but not changed:
it hashes the file, finds the same blob and reports nothing, so that file would be hashed again
by every later walk. libgit2 counts the files it hashed (`git_diff_get_perfdata`, which pygit2 does
not expose; it is called through ctypes on the very library pygit2 loaded). A group that hashed
more files than it holds paths changed since the index was last written (those are hashed because
they are newer than the index file, "racily clean") is walked again by the updating diff, which
refreshes them. Where the library cannot be found, or no CPU is idle (`cpus_idle`), the store
walks on one thread as before.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2 import C, ffi
from pygit2.enums import DeltaStatus, DiffOption
from pygit2.errors import check_error
from pygit2.utils import StrArray

from agentcli.snapshots._libgit2 import pathspec
from agentcli.snapshots.diffperf import PerfData
from agentcli.snapshots.diffperf import perfdata as _perfdata
from agentcli.snapshots.splitgroups import Groups

MIN_ENTRIES = 8_000
"""Below this many index entries one walk is quick and the split's own costs exceed what it saves.

A "10k-file" repository splits (while a CPU is free: `cpus_idle`). With the cut's counts and the
other thread kept between walks, the split costs 8% more CPU than one walk at 10k files (27%
before) and 27% on a first capture (the other handle's index load); split ÷ one thread at 10k,
interleaved, this process favoured by the scheduler on a loaded machine: walks with 0 / 1
changed 0.62 / 0.79, first captures 0.98 (the CPU each thread used puts a free core at 0.59 /
0.75 / 0.90). At 5k the first capture lost (1.05): left on one thread (bench/README.md, perf-r10)."""

_Stamp = tuple[tuple[int, int, int] | None, ...]
"""The store's config and index files as a handle last read them (mtime, size, inode)."""

UNIT_SHARE = 2
"""A directory holding more than 1/(UNIT_SHARE x workers) of the entries is cut into its children,
so one big `src/` does not leave a thread idle (finer cuts cost more lookups than they balance)."""


@dataclass(frozen=True)
class Found:
    """What the parallel walk found."""

    paths: list[str]
    """Paths the updating diff must look at (files, or directories walked again in full)."""
    hashed: int
    """Files the read-only diffs hashed (stat data stale: touched, or changed after the index was written)."""


def worker_count() -> int:
    """Threads worth starting: the CPUs this process may run on, at most 4 (the walk is kernel-bound)."""
    return min(_cpu_count(), 4)


def cpus_idle(workers: int) -> bool:
    """Tells whether the CPUs are free enough for the split to pay.

    At 10k files with both cores busy (load 3-4) each half of a split walk took as long as a
    whole walk, and the split's own costs made the capture 1.1-1.6x slower: so it splits only
    while `workers - 1` CPUs besides this thread are free. On Linux the tasks running now decide
    (`/proc/loadavg`'s fourth field): the 1-minute load average lags both ways, a burst that
    ended and a busy process that started (the bench's CPU hog starts just before it; from a
    quiet 0.5 the average passes the bound only after about a minute). A busy count is read
    again, less this process's own running threads (the seed's load, the watcher's arming, a
    head start loading the index: part of the same capture, not neighbours), which also keeps a
    kernel thread's moment from taking a split away. A busy process (the hog) is in both
    readings; two can still miss a job between bursts, and then one capture pays the split's
    overhead. Elsewhere the load average (this process included) must leave a CPU free.
    """
    for again in (False, True):
        running = running_tasks()
        if running is None:
            break
        if again:
            running -= own_running() - 1
        # `running` includes this thread; the other workers need `workers - 1` more CPUs.
        if running + workers - 1 <= _cpu_count():
            return True
    else:
        return False
    try:
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    return load is None or load <= workers - 0.5


def own_running() -> int:
    """This process's threads running or ready to run now, this one included (/proc/self/task;
    ~15 us a thread, read only when the machine looks busy)."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # the thread ended
        end = stat.rfind(b")")  # the name, in parentheses, may hold spaces
        count += stat[end + 2 : end + 3] == b"R"
    return max(count, 1)


def running_tasks() -> int | None:
    """Tasks (threads) running or ready to run on the whole machine now, this one included;
    None where the kernel does not say (not Linux)."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            return int(fh.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class SplitWalk:
    """Parallel read-only walks of one shadow repository's workspace.

    Args:
        shadow_path: The shadow git directory.
        workspace: The workspace directory.
    """

    def __init__(self, shadow_path: Path, workspace: Path) -> None:
        self._path = shadow_path
        self._workspace = workspace
        self._repos: list[pygit2.Repository] = []
        self._stamp: _Stamp = ()
        self._prefetching: tuple[_Stamp, list[pygit2.Repository], list[threading.Thread]] | None = None
        self._loading: list[threading.Thread] = []  # every head start's threads, dropped ones too
        self._groups = Groups(workspace, UNIT_SHARE)
        # Kept between walks: starting a thread per walk cost 1.4-2 ms under load (the new thread
        # waits for a CPU and the GIL before `start` returns). Idle threads exit when it is dropped.
        self._pool: tuple[ThreadPoolExecutor, int] | None = None
        self.outcomes: Counter[str] = Counter()
        """How each `find` ended: "split", "busy" (no CPU free), "small" (or one CPU), "other"
        (no counters, no tree, one group, an error). What the bench prints, so a run says
        whether its walks were split."""

    def find(
        self,
        repo: pygit2.Repository,
        index: pygit2.Index,
        tree: Callable[[], pygit2.Tree | None],
        flags: int,
        pending: Iterable[str],
        is_ignored_dir: Callable[[str], bool],
    ) -> Found | None:
        """Diffs the workspace against `index` on several threads, without changing anything.

        Args:
            repo: The repository `index` belongs to: this thread's walk uses it (its own index
                is the one diffed, already loaded; a second handle would load the file again).
            index: The shadow index (read only here; the caller holds it and waits).
            tree: Gives the index's tree (its names include files deleted since), or None when
                that object is missing.
            flags: The capture's diff flags; `UPDATE_INDEX` is dropped.
            pending: Paths whose entries changed since the index file was written.
            is_ignored_dir: Tells whether a workspace-relative directory is ignored (such a
                directory is never cut into its children).

        Returns:
            The paths to refresh, or None when a single walk is the better choice (a small
            index, one CPU or none idle, no access to libgit2's counters, no tree object).
        """
        workers = worker_count()
        count = C.git_index_entrycount(index._index)
        perfdata = _perfdata()
        if workers < 2 or count < MIN_ENTRIES:
            self.outcomes["small"] += 1
            return None
        if not cpus_idle(workers):
            self.outcomes["busy"] += 1
            return None
        index_tree = tree() if perfdata is not None else None
        groups: list[list[str]] = []
        if index_tree is not None:
            try:
                groups = self._groups.cut(repo, index, index_tree, count, workers, is_ignored_dir)
            except (pygit2.GitError, KeyError, ValueError):
                groups = []  # a tree object missing from the store: the single walk meets it as before
        if len(groups) < 2:
            self.outcomes["other"] += 1
            return None
        read_flags = (int(flags) & ~int(DiffOption.UPDATE_INDEX)) | int(DiffOption.DISABLE_PATHSPEC_MATCH)

        def walk(job: tuple[pygit2.Repository, list[str]]) -> tuple[list[str], int]:
            try:
                return _read_only_diff(job[0], index, read_flags, job[1], perfdata)
            except (pygit2.GitError, OSError, KeyError, ValueError):
                # E.g. "no submodule named 'd2'": a gitlink entry whose folder is now a plain
                # one, which libgit2 looks up when the folder is named in the pathspec. The
                # updating diff walks this group whole and meets whatever the single walk would.
                return list(job[1]), sys.maxsize

        try:
            repos = [repo, *self._worker_repos(len(groups) - 1)]
            pool = self._thread_pool(len(groups) - 1)
            futures = [pool.submit(walk, (repos[i], groups[i])) for i in range(1, len(groups))]
            try:
                first = walk((repos[0], groups[0]))  # this thread walks a group too
            finally:
                others = [f.result() for f in futures]  # none left walking with handles the caller may drop
            results = [first, *others]
        except (pygit2.GitError, OSError, KeyError, ValueError):
            # Whatever failed here, the single walk meets again and reports as it always did:
            # splitting must never be why a capture fails.
            self.reset()
            self.outcomes["other"] += 1
            return None
        self.outcomes["split"] += 1
        pending_set = set(pending)
        paths: set[str] = set(pending_set)
        group_of = {unit: g for g, units in enumerate(groups) for unit in units}
        racy = [0] * len(groups)  # per group: entries changed in memory, which libgit2 hashes
        for path in pending_set:
            parts = path.split("/")
            for depth in range(1, len(parts) + 1):
                g = group_of.get("/".join(parts[:depth]))
                if g is not None:
                    racy[g] += 1
                    break
        hashed = 0
        for g, (units, (deltas, group_hashed)) in enumerate(zip(groups, results, strict=True)):
            paths.update(deltas)
            hashed += group_hashed
            if group_hashed > racy[g]:
                paths.update(units)  # stat data went stale: the updating diff walks the group and refreshes it
        return Found(paths=sorted(paths), hashed=hashed)

    def prefetch(self, entries: int) -> None:
        """Opens the other threads' handles now and loads their index file, each on a thread.

        Called as a seed's copy is written and as a walk returns: ~45 ms at 100k entries out of
        the next split's walk. Only where a split will follow (`entries` many, CPUs idle) and
        the handles held read an older file; a head start the file outran goes unused.
        """
        workers = worker_count()
        if workers < 2 or entries < MIN_ENTRIES or not cpus_idle(workers):
            return
        stamp = self._current_stamp()
        if self._prefetching is not None:
            if self._prefetching[0] == stamp:
                return  # under way for this very file
            # A stale head start (walks since were not split) is dropped, not waited for: its
            # threads touch only their own handles.
            self._prefetching = None
        if stamp == self._stamp and len(self._repos) >= workers - 1:
            return  # the handles held read this very file
        try:
            repos = [pygit2.Repository(str(self._path)) for _ in range(workers - 1)]
            threads = [threading.Thread(target=_load_index, args=(repo,), name="agentcli-split-prefetch", daemon=True)
                       for repo in repos]
            self._loading = [thread for thread in self._loading if thread.is_alive()]
            for thread in threads:  # one each: loaded side by side, as the split's threads would
                thread.start()
                self._loading.append(thread)
        except (pygit2.GitError, OSError, RuntimeError):
            return  # only a head start: the split opens its handles itself, or falls back
        self._prefetching = (stamp, repos, threads)

    def _take_prefetched(self) -> None:
        """Waits for a prefetch and keeps its handles if the files are still the ones they read."""
        if self._prefetching is None:
            return
        stamp, repos, threads = self._prefetching
        self._prefetching = None
        if stamp != self._current_stamp():
            return  # read an older file: not waited for (its threads touch only their handles)
        for thread in threads:
            thread.join()
        self._repos, self._stamp = repos, stamp

    def _current_stamp(self) -> _Stamp:
        return (_stamp(self._path / "config"), _stamp(self._path / "index"))

    def _worker_repos(self, count: int) -> list[pygit2.Repository]:
        """One repository handle per other thread (libgit2 objects are not shared between threads).

        Reopened (0.1-0.3 ms each) when the store's config or index file changed: libgit2 reads
        some settings once per handle, and judges a gitlink by the entries of the handle's own
        index (loaded from the file when first needed), not by the index diffed. What the file
        lacks, entries changed only in memory, the caller hands to the updating diff (`pending`).
        That load is the whole index file again (its SHA-1 included: ~45 ms of CPU at 100k
        entries), which is why this thread walks with the index's own repository.
        """
        self._take_prefetched()
        stamp = self._current_stamp()
        if stamp != self._stamp:
            self._repos = []
            self._stamp = stamp
        while len(self._repos) < count:
            self._repos.append(pygit2.Repository(str(self._path)))
        return self._repos[:count]

    def _thread_pool(self, threads: int) -> ThreadPoolExecutor:
        if self._pool is None or self._pool[1] < threads:
            if self._pool is not None:
                self._pool[0].shutdown(wait=False)  # idle: its threads exit
            self._pool = (ThreadPoolExecutor(max_workers=threads, thread_name_prefix="agentcli-split"), threads)
        return self._pool[0]

    def reset(self) -> None:
        """Drops the handles and the threads (after gc repacked the store, or the store closed)."""
        if self._pool is not None:
            self._pool[0].shutdown(wait=True)
            self._pool = None
        for thread in self._loading:
            thread.join()  # no thread left reading a store about to change
        self._loading = []
        self._prefetching = None
        self._repos = []
        self._stamp = ()


def _load_index(repo: pygit2.Repository) -> None:
    try:
        repo.index  # noqa: B018 - libgit2 loads the file on first access
    except (pygit2.GitError, OSError):
        pass  # the walk meets it again, and falls back as it always did


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _read_only_diff(
    repo: pygit2.Repository,
    index: pygit2.Index,
    flags: int,
    paths: list[str],
    perfdata: ctypes._CFuncPtr,  # type: ignore[name-defined]
) -> tuple[list[str], int]:
    """Diffs `paths` against `index`; returns the paths of the deltas and how many files were hashed."""
    copts = ffi.new("git_diff_options *")
    check_error(C.git_diff_options_init(copts, 1))
    copts.flags = flags
    copts.context_lines = 0
    cdiff = ffi.new("git_diff **")
    with StrArray(pathspec(paths)) as arr:
        arr.assign_to(ffi.addressof(copts, "pathspec"))
        check_error(C.git_diff_index_to_workdir(cdiff, repo._repo, index._index, copts))
    stats = PerfData(version=1)
    if perfdata(ctypes.byref(stats), int(ffi.cast("uintptr_t", cdiff[0]))) != 0:
        hashed = sys.maxsize  # unknown: have the whole group walked again
    else:
        hashed = int(stats.oid_calculations)
    diff = pygit2.Diff.from_c(bytes(ffi.buffer(cdiff)[:]), repo)  # owns and frees the C diff
    out: list[str] = []
    for delta in diff.deltas:
        side = delta.old_file if delta.status == DeltaStatus.DELETED else delta.new_file
        out.append(os.fsdecode(side.raw_path).rstrip("/"))
    return out, hashed
