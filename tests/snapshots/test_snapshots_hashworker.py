"""The hashing process: a bulk refresh split with it records exactly what one thread does."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pygit2
import pytest
from snaphelpers import git, git_add_all_tree, ls_tree, write
from test_snapshots_restat import _many_files

import agentcli.snapshots.capture as capture
from agentcli.snapshots import SnapshotStore, restat
from agentcli.snapshots.hashworker import HashWorker
from agentcli.snapshots.restat import MIN_ENTRIES, entry_records, mostly_stale

FILES = MIN_ENTRIES + 200


@pytest.fixture(autouse=True)
def _small_worker_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real threshold (4,000 entries) would make every test here slow; the split is the same.
    monkeypatch.setattr(restat, "WORKER_MIN_ENTRIES", 100)
    monkeypatch.setattr(capture, "WORKER_MIN_ENTRIES", 100)


def _workspace(tmp_path: Path) -> Path:
    return _many_files(tmp_path, FILES)


def _wait_ready(worker: HashWorker) -> None:
    deadline = time.monotonic() + 60
    while not worker.usable():
        assert worker.failed is None, worker.failed
        assert time.monotonic() < deadline, "the hashing process never said it was ready"
        time.sleep(0.02)


def _store_with_worker(tmp_path: Path) -> tuple[Path, SnapshotStore, HashWorker, int]:
    """A watching store over a fresh workspace, its first capture taken and its process ready."""
    ws = _workspace(tmp_path)
    store = SnapshotStore(ws, tmp_path / "data", watch=True)
    store.capture(session_id="s", reason="start")
    worker = store._refresher.hash_worker
    _wait_ready(worker)
    pid = worker.pid()
    assert pid is not None
    return ws, store, worker, pid


def _entries(store: SnapshotStore) -> dict[str, tuple[object, ...]]:
    """Every index entry's mode, id and stat data, as written to disk."""
    store._refresher.flush_index()
    index = pygit2.Index(str(store.path / "index"))
    raw = index._index
    out: dict[str, tuple[object, ...]] = {}
    for i in range(len(index)):
        c = pygit2.C.git_index_get_byindex(raw, i)
        path = pygit2.ffi.string(c.path).decode()
        out[path] = (
            c.mode, bytes(pygit2.ffi.buffer(pygit2.ffi.addressof(c, "id"))[:20]).hex(), c.file_size,
            c.mtime.seconds, c.mtime.nanoseconds, c.ctime.seconds, c.ctime.nanoseconds, c.ino, c.uid, c.gid,
        )
    return out


def _touch_and_edit(ws: Path, stamp: int) -> None:
    """Every file touched; edits of each kind in the first part of the index (this thread's)
    and in the last (the process's: `d6/` sorts last)."""
    for path in ws.rglob("*.txt"):
        os.utime(path, (stamp, stamp))
    for d in ("d0", "d6"):
        first = sorted((ws / d).iterdir())
        same = first[0]  # same size, same mtime as the rest: only a hash tells
        same.write_bytes(same.read_bytes().replace(b"file", b"FILE"))
        os.utime(same, (stamp, stamp))
        write(first[1], "grown\n" * 40)
        first[2].chmod(0o755)
        first[3].unlink()
        first[4].unlink()
        first[4].symlink_to(first[5].name)


def test_a_split_refresh_records_the_trees_and_entries_one_thread_does(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    split = SnapshotStore(ws, tmp_path / "split", watch=True)
    single = SnapshotStore(ws, tmp_path / "single", watch=True)
    single._refresher.hash_worker.failed = "off for the comparison"  # never starts
    split.capture(session_id="s", reason="start")
    single.capture(session_id="s", reason="start")
    worker = split._refresher.hash_worker
    _wait_ready(worker)

    _touch_and_edit(ws, 1_700_000_000)
    assert mostly_stale(split._shadow.index(), ws)
    a = split.capture(session_id="s", reason="touched")
    b = single.capture(session_id="s", reason="touched")

    assert worker.answered == 1  # the process took its part
    assert a.tree == b.tree == git_add_all_tree(ws, tmp_path / "x")
    assert a.snapshot is not None
    assert len(a.snapshot.files) == 10
    assert _entries(split) == _entries(single)
    env = {"GIT_DIR": str(split.path), "GIT_WORK_TREE": str(ws), "GIT_INDEX_FILE": str(split.path / "index")}
    assert git(ws, "diff-files", "--name-only", env=env) == ""  # every entry refreshed, none left to hash

    # Rewritten after the capture with the same size, its mtime set back to the one recorded:
    # only the ctime and inode the process recorded tell it changed, so they must be the file's.
    victim = sorted((ws / "d6").iterdir())[10]
    recorded = os.lstat(victim)
    victim.write_bytes(victim.read_bytes().replace(b"file", b"fiLE"))
    os.utime(victim, ns=(recorded.st_atime_ns, recorded.st_mtime_ns))
    again = split.capture(session_id="s", reason="rewritten")
    assert again.snapshot is not None
    assert [f.path for f in again.snapshot.files] == [victim.relative_to(ws).as_posix()]
    assert again.tree == git_add_all_tree(ws, tmp_path / "y")
    split.close()
    single.close()


def test_a_dead_process_costs_speed_not_correctness(tmp_path: Path) -> None:
    ws, store, worker, pid = _store_with_worker(tmp_path)
    os.kill(pid, signal.SIGKILL)

    _touch_and_edit(ws, 1_700_000_000)
    result = store.capture(session_id="s", reason="touched")

    assert result.tree == git_add_all_tree(ws, tmp_path / "x")
    assert worker.failed is not None and worker.answered == 0
    env = {"GIT_DIR": str(store.path), "GIT_WORK_TREE": str(ws), "GIT_INDEX_FILE": str(store.path / "index")}
    store._refresher.flush_index()
    assert git(ws, "diff-files", "--name-only", env=env) == ""  # this thread refreshed its part
    store.close()


def test_a_process_that_stops_answering_is_ended_and_its_part_hashed_here(tmp_path: Path) -> None:
    """Stopped (a hung disk, starved of CPU), it is waited for about as long as this thread's own
    share took, at least a second, not indefinitely; the capture is still exact."""
    ws, store, worker, pid = _store_with_worker(tmp_path)
    os.kill(pid, signal.SIGSTOP)
    try:
        _touch_and_edit(ws, 1_700_000_000)
        result = store.capture(session_id="s", reason="touched")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)  # so a failed test leaves nothing stopped
    assert result.tree == git_add_all_tree(ws, tmp_path / "x")
    assert worker.failed is not None and "TimeoutError" in worker.failed and worker.answered == 0
    assert _gone(pid)
    env = {"GIT_DIR": str(store.path), "GIT_WORK_TREE": str(ws), "GIT_INDEX_FILE": str(store.path / "index")}
    store._refresher.flush_index()
    assert git(ws, "diff-files", "--name-only", env=env) == ""
    store.close()


def test_code_in_the_workspace_is_never_imported_by_the_process(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The workspace is agentcli's current folder: a `select.py` or an `agentcli/` package there
    (written by a model in the sandbox, or in a cloned repository) must not run as the user."""
    ws = tmp_path / "ws"
    marker = tmp_path / "imported"
    plant = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    for module in ("select.py", "struct.py", "agentcli/__init__.py", "agentcli/snapshots/__init__.py"):
        write(ws / module, plant)
    monkeypatch.chdir(ws)
    worker = HashWorker()
    worker.start()
    try:
        _wait_ready(worker)
    finally:
        worker.close()
    assert not marker.exists(), marker.read_text()


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1].startswith("Z")  # a zombie has exited
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_process_dies_with_the_store_and_with_its_parent(tmp_path: Path) -> None:
    ws, store, worker, pid = _store_with_worker(tmp_path)
    store.close()
    assert _gone(pid)

    # A parent killed outright: the process sees its input close and exits.
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        import agentcli.snapshots.capture as capture, agentcli.snapshots.restat as restat
        restat.WORKER_MIN_ENTRIES = capture.WORKER_MIN_ENTRIES = 100
        from agentcli.snapshots import SnapshotStore
        store = SnapshotStore(Path({str(ws)!r}), Path({str(tmp_path / "other")!r}), watch=True)
        store.capture(session_id="s", reason="start")
        worker = store._refresher.hash_worker
        while not worker.usable():
            time.sleep(0.02)
        print(worker.pid(), flush=True)
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert not _gone(child)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30
    while not _gone(child):
        assert time.monotonic() < deadline, "the hashing process outlived its parent"
        time.sleep(0.02)


def test_records_are_the_same_built_field_by_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path)
    (ws / "d1" / "f0001.txt").chmod(0o755)
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    raw = store._shadow.index()._index
    copied = entry_records(raw, 0, FILES)
    monkeypatch.setattr(restat, "_RECORD_FITS", False)
    assert entry_records(raw, 0, FILES) == copied
    store.close()


def test_the_watcher_is_armed_before_the_walk_and_misses_nothing_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher arms on a thread while the index loads and the bulk refresh runs; the walk
    waits for it, so a change made just after the walk is queued for the next capture."""
    ws = _workspace(tmp_path)
    store = SnapshotStore(ws, tmp_path / "data", watch=True)
    original = capture.diff_index_to_workdir
    armed_at_walk: list[bool] = []

    def walk(repo: pygit2.Repository, index: pygit2.Index, flags: int, paths: list[str] | None = None) -> pygit2.Diff:
        if paths is None:
            assert store._watcher is not None
            armed_at_walk.append(store._watcher.running)
        diff = original(repo, index, flags, paths)
        if len(armed_at_walk) == 1:
            write(ws / "late" / "after-the-walk.txt", "late\n")
        return diff

    monkeypatch.setattr(capture, "diff_index_to_workdir", walk)
    _touch_and_edit(ws, 1_700_000_000)  # the first capture's seed is stale: the bulk pass runs too
    first = store.capture(session_id="s", reason="start")
    assert armed_at_walk == [True]
    assert "late/after-the-walk.txt" not in ls_tree(store, first.tree)

    after = store.capture(session_id="s", reason="after bash", watched=True)
    assert armed_at_walk == [True]  # the watcher vouched: no second walk
    assert "late/after-the-walk.txt" in ls_tree(store, after.tree)
    assert after.tree == git_add_all_tree(ws, tmp_path / "x")
    store.close()


def test_a_store_that_does_not_watch_never_starts_one(tmp_path: Path) -> None:
    """A one-shot command's store (no watcher) would pay the process's start for nothing."""
    ws = _workspace(tmp_path)
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    _touch_and_edit(ws, 1_700_000_000)
    assert store.capture(session_id="s", reason="touched").tree == git_add_all_tree(ws, tmp_path / "x")
    assert store._refresher.hash_worker.pid() is None
    store.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_dropped_without_close_ends_its_process() -> None:
    worker = HashWorker()
    worker.start()
    _wait_ready(worker)
    pid = worker.pid()
    assert pid is not None
    del worker
    gc.collect()
    deadline = time.monotonic() + 30
    while not _gone(pid):
        assert time.monotonic() < deadline, "the dropped worker's process still runs"
        time.sleep(0.02)


def test_a_refresh_that_fails_midway_ends_the_process_and_the_next_walk_starts_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its reply to a refresh that raised would be read by nobody, and then taken for the next
    refresh's: the process is ended instead, and a fresh one serves later captures."""
    ws, store, worker, first_pid = _store_with_worker(tmp_path)
    original = restat.hash_records

    def failing(root: bytes, records: restat.Records) -> restat.Refreshed:
        raise OSError("the disk went away")

    monkeypatch.setattr(restat, "hash_records", failing)
    _touch_and_edit(ws, 1_700_000_000)
    with pytest.raises(OSError, match="the disk went away"):
        store.capture(session_id="s", reason="touched")
    assert worker.pid() is None and worker.failed is None
    assert first_pid is not None and _gone(first_pid)

    monkeypatch.setattr(restat, "hash_records", original)
    assert store.capture(session_id="s", reason="walk").tree == git_add_all_tree(ws, tmp_path / "x")
    _wait_ready(worker)  # started again after that walk
    for path in ws.rglob("*.txt"):
        if not path.is_symlink():
            os.utime(path, (1_700_000_100, 1_700_000_100))
    assert store.capture(session_id="s", reason="touched again").tree == git_add_all_tree(ws, tmp_path / "y")
    assert worker.answered == 1
    store.close()
