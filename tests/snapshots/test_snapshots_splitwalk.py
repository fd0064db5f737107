"""A walk split over threads records exactly what one walk records.

`splitwalk.py` finds the changed paths with read-only diffs on several threads and hands them to
the one diff that updates the index. These tests force it on for tiny trees (it normally starts
at thousands of entries) and compare its trees with a single walk's (after random file
operations) and with the git CLI's (after a known set of changes).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from snaphelpers import commit_all, git, git_add_all_tree, ls_tree, shadow_git, write
from test_snapshots_watcher import _fresh_workspace, apply, ops

from agentcli.snapshots import SnapshotStore, splitwalk

pytestmark = [
    pytest.mark.may_skip(reason="the split walk reads libgit2's counters through /proc/self/maps: Linux only"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the split walk runs on Linux only"),
]


class Split:
    """Turns the split walk on or off for the captures that follow, and counts its uses."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.used = 0
        self._mp = mp
        mp.setattr(splitwalk, "worker_count", lambda: 3)  # three groups even on a one-CPU runner
        mp.setattr(splitwalk, "cpus_idle", lambda workers: True)  # and on a busy one
        original = splitwalk.SplitWalk.find

        def counting(walk: splitwalk.SplitWalk, *args: object, **kwargs: object) -> splitwalk.Found | None:
            found = original(walk, *args, **kwargs)  # type: ignore[arg-type]
            self.used += found is not None
            return found

        mp.setattr(splitwalk.SplitWalk, "find", counting)

    def on(self) -> None:
        self._mp.setattr(splitwalk, "MIN_ENTRIES", 0)

    def off(self) -> None:
        self._mp.setattr(splitwalk, "MIN_ENTRIES", 10**9)


@pytest.fixture
def split(monkeypatch: pytest.MonkeyPatch) -> Iterator[Split]:
    control = Split(monkeypatch)
    control.on()
    yield control


def test_libgit2_counters_are_reachable_so_the_split_walk_runs() -> None:
    assert splitwalk._perfdata() is not None


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=st.lists(st.lists(ops, min_size=1, max_size=5), min_size=1, max_size=5))
# A nested repository replaced by a plain folder: libgit2's read-only diff of a group naming it
# fails ("no submodule named 'd2'"); that group is left whole to the updating diff.
@example(batches=[[("nested_repo", "d2")], [("delete", "d2"), ("write", "d2/f0", b"")]])
def test_split_walks_equal_single_walks(
    batches: list[list[tuple[object, ...]]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("split")
    ws = _fresh_workspace(root)
    with pytest.MonkeyPatch.context() as mp:
        control = Split(mp)
        split_store = SnapshotStore(ws, root / "split", max_untracked_dir_files=2)
        single_store = SnapshotStore(ws, root / "single", max_untracked_dir_files=2)
        try:
            for batch in [[], *batches]:
                for op in batch:
                    apply(ws, op)
                control.on()
                used = control.used
                from_split = split_store.capture(session_id="s", reason="walk")
                assert control.used == used + 1, "the split walk did not run"
                control.off()
                from_single = single_store.capture(session_id="s", reason="walk")
                assert from_split.tree == from_single.tree, batch
                assert {s.path for s in from_split.skipped} == {s.path for s in from_single.skipped}, batch
        finally:
            split_store.close()
            single_store.close()
            shutil.rmtree(root, ignore_errors=True)


def test_a_touched_file_gets_its_stat_refreshed_by_a_split_walk(split: Split, store: SnapshotStore, repo: Path) -> None:
    store.capture(session_id="s", reason="start")
    for i in range(12):  # directories enough to be cut into groups
        write(repo / f"pkg{i}" / "mod.py", f"X = {i}\n")
    store.capture(session_id="s", reason="more files")
    target = repo / "src" / "app.py"
    os.utime(target, (1_700_000_000, 1_700_000_000))

    used = split.used
    assert store.capture(session_id="s", reason="touch").snapshot is None  # same content, same tree
    assert split.used == used + 1
    write(repo / "README.md", "an unrelated change, so the index is written\n")
    store.capture(session_id="s", reason="edit")

    debug = git(repo, "ls-files", "--debug", "src/app.py", env={"GIT_DIR": str(store.path), "GIT_WORK_TREE": str(repo)})
    # The read-only diffs hashed the file and found it unchanged; its group was walked again by
    # the updating diff, so the index carries the new mtime and no later walk hashes it again.
    assert "mtime: 1700000000:" in debug


def test_changes_in_every_kind_of_unit_are_found(
    split: Split, store: SnapshotStore, repo: Path, tmp_path: Path
) -> None:
    for i in range(20):
        write(repo / "big" / f"sub{i % 4}" / f"f{i}.txt", f"{i}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "big")
    store.capture(session_id="s", reason="start")
    write(repo / "big" / "sub1" / "f1.txt", "changed\n")  # inside a directory cut into children
    write(repo / "big" / "new.txt", "new\n")  # a new file beside the children
    write(repo / "top.txt", "top\n")  # a new top-level file
    (repo / "src" / "util.py").unlink()
    write(repo / "debug.log", "ignored\n")
    (repo / "bin" / "run.sh").chmod(0o644)

    used = split.used
    result = store.capture(session_id="s", reason="walk")
    assert split.used == used + 1
    assert result.tree == git_add_all_tree(repo, tmp_path / "git")
    assert result.snapshot is not None
    assert {f.path for f in result.snapshot.files} == {
        "big/sub1/f1.txt",
        "big/new.txt",
        "top.txt",
        "src/util.py",
        "bin/run.sh",
    }


def test_a_nested_repository_committed_to_after_the_index_was_written_is_recorded(
    split: Split, store: SnapshotStore, repo: Path
) -> None:
    store.capture(session_id="s", reason="start")  # the threads' repository handles open here
    nested = repo / "lib" / "vendored"
    write(nested / "inner.txt", "one\n")
    git(nested, "init", "-q", "-b", "main")
    git(nested, "add", "-A")
    git(nested, "commit", "-q", "-m", "one")
    for i in range(70):  # more changes than the index keeps in memory: it is written now
        write(repo / "gen" / f"f{i}.txt", f"{i}\n")
    first = store.capture(session_id="s", reason="nested repository")
    assert first.snapshot is not None and "lib/vendored" in {f.path for f in first.snapshot.files}

    write(nested / "inner.txt", "two\n")
    git(nested, "commit", "-q", "-am", "two")
    used = split.used
    second = store.capture(session_id="s", reason="nested commit")
    assert split.used == used + 1
    head = git(nested, "rev-parse", "HEAD").strip()
    assert second.snapshot is not None
    assert shadow_git(store, "ls-tree", second.tree, "lib/vendored").split()[2] == head


def test_a_busy_machine_walks_on_one_thread(monkeypatch: pytest.MonkeyPatch, store: SnapshotStore, repo: Path) -> None:
    monkeypatch.setattr(splitwalk, "MIN_ENTRIES", 0)
    monkeypatch.setattr(splitwalk, "worker_count", lambda: 2)
    monkeypatch.setattr(splitwalk, "_cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 3.0, 2.5))
    monkeypatch.setattr(splitwalk, "running_tasks", lambda: 2)  # this thread and a CPU hog
    monkeypatch.setattr(splitwalk, "own_running", lambda: 1)  # of this process, only this thread
    found: list[splitwalk.Found | None] = []
    original = splitwalk.SplitWalk.find

    def recording(walk: splitwalk.SplitWalk, *args: object, **kwargs: object) -> splitwalk.Found | None:
        found.append(original(walk, *args, **kwargs))  # type: ignore[arg-type]
        return found[-1]

    monkeypatch.setattr(splitwalk.SplitWalk, "find", recording)
    write(repo / "src" / "app.py", "changed\n")
    result = store.capture(session_id="s", reason="walk")
    assert found == [None]  # asked, declined: the walk ran on this thread
    assert store._refresher._split.outcomes == {"busy": 1}  # and the bench can tell why
    assert result.snapshot is not None and [f.path for f in result.snapshot.files] == ["src/app.py"]


def test_the_gate_counts_tasks_running_now_not_the_lagging_load_average(monkeypatch: pytest.MonkeyPatch) -> None:
    running = splitwalk.running_tasks()
    assert running is not None and running >= 1  # this thread, at least
    samples: list[int | None] = []
    monkeypatch.setattr(splitwalk, "running_tasks", lambda: samples.pop(0))
    monkeypatch.setattr(splitwalk, "own_running", lambda: 1)  # of this process, only this thread
    monkeypatch.setattr(splitwalk, "_cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 3.0, 2.5))  # a minute of work just ended
    samples[:] = [1]  # and now only this thread runs
    assert splitwalk.cpus_idle(2)
    samples[:] = [2, 2]  # a busy process on the other CPU, in both samples
    assert not splitwalk.cpus_idle(2)
    # A busy process that started less than a minute ago: the average has not caught up.
    monkeypatch.setattr(os, "getloadavg", lambda: (1.1, 0.6, 0.4))
    samples[:] = [2, 2]
    assert not splitwalk.cpus_idle(2)
    samples[:] = [3, 1]  # a kernel thread's moment in one sample does not take a split away
    assert splitwalk.cpus_idle(2) and not samples
    # Threads of ours (the seed's load, the watcher's arming) are not neighbours: the second
    # reading leaves them out.
    monkeypatch.setattr(splitwalk, "own_running", lambda: 2)
    samples[:] = [2, 2]
    assert splitwalk.cpus_idle(2)
    samples[:] = [3, 3]  # ours and a hog
    assert not splitwalk.cpus_idle(2)
    monkeypatch.setattr(splitwalk, "own_running", lambda: 1)
    monkeypatch.setattr(splitwalk, "_cpu_count", lambda: 8)
    samples[:] = [2, 2, 2]
    assert splitwalk.cpus_idle(4) and not splitwalk.cpus_idle(8)
    # Where the kernel does not say, the load average decides, this process included.
    monkeypatch.setattr(splitwalk, "running_tasks", lambda: None)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 3.0, 2.5))
    assert not splitwalk.cpus_idle(2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 1.0, 1.0))
    assert splitwalk.cpus_idle(2)


@pytest.mark.parametrize("afresh", [True, False], ids=["watched-afresh", "skimmed"])
def test_a_walk_after_a_flood_of_events_keeps_hints_working(
    monkeypatch: pytest.MonkeyPatch, repo: Path, data_dir: Path, tmp_path: Path, afresh: bool
) -> None:
    from agentcli.snapshots import watcher

    if afresh:  # so few folders that the flood is worth more than watching them all again
        monkeypatch.setattr(watcher, "DROP_BYTES_PER_DIR", 64)
    fresh_watches: list[str] = []
    original = watcher.TreeWatcher._watch_tree

    def counting(self: watcher.TreeWatcher, top: str) -> None:
        fresh_watches.append(top)
        original(self, top)

    monkeypatch.setattr(watcher.TreeWatcher, "_watch_tree", counting)
    store = SnapshotStore(repo, data_dir, watch=True)
    try:
        store.capture(session_id="s", reason="start")
        assert store.watching and fresh_watches == [""]
        for i in range(40):
            write(repo / "src" / f"gen{i}.py", f"N = {i}\n")
        walked = store.capture(session_id="s", reason="walk")
        # Dropped and every folder watched again, or the queue skimmed and the watches kept.
        assert fresh_watches == (["", ""] if afresh else [""])
        assert walked.snapshot is not None and len(walked.snapshot.files) == 40

        write(repo / "src" / "gen7.py", "N = 'seven'\n")
        write(repo / "docs" / "new.md", "in a directory made after the walk\n")
        hinted = store.capture(session_id="s", reason="after bash", watched=True)
        assert fresh_watches[-1] == "docs"  # the hints came from the watches the walk left
        assert hinted.tree == git_add_all_tree(repo, tmp_path / "git")
    finally:
        store.close()


def test_ignored_directories_with_tracked_files_deleted_directories_and_links_match_a_single_walk(
    monkeypatch: pytest.MonkeyPatch, repo: Path, data_dir: Path
) -> None:
    for i in range(6):
        write(repo / "vendor" / f"lib{i % 2}" / f"m{i}.py", f"{i}\n")  # tracked, then ignored below
        write(repo / "gone" / f"sub{i % 2}" / f"g{i}.txt", f"{i}\n")
        write(repo / "linked" / f"l{i}.txt", f"{i}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    write(repo / ".gitignore", "*.log\n__pycache__/\nvendor/\n")
    split = Split(monkeypatch)
    split.on()
    stores = {
        "split": SnapshotStore(repo, data_dir / "split"),
        "single": SnapshotStore(repo, data_dir / "single"),
    }

    def capture_both(reason: str) -> str:
        split.on()
        used = split.used
        tree = stores["split"].capture(session_id="s", reason=reason).tree
        assert split.used == used + 1
        split.off()
        assert stores["single"].capture(session_id="s", reason=reason).tree == tree, reason
        return tree

    capture_both("start")
    write(repo / "vendor" / "lib0" / "new.py", "ignored: vendor/ is ignored\n")
    write(repo / "vendor" / "lib1" / "m1.py", "tracked files stay tracked\n")
    shutil.rmtree(repo / "gone")
    shutil.rmtree(repo / "linked")
    os.symlink("src", repo / "linked")
    tree = capture_both("changes")
    entries = ls_tree(stores["split"], tree)
    assert "vendor/lib1/m1.py" in entries and "vendor/lib0/new.py" not in entries
    assert not any(path.startswith("gone/") for path in entries)
    assert entries["linked"][0] == "120000"
    for store in stores.values():
        store.close()


def test_a_seed_whose_cached_tree_git_never_wrote_still_captures(
    split: Split, repo: Path, data_dir: Path, tmp_path: Path
) -> None:
    write(repo / "staged.txt", "staged, never committed\n")
    git(repo, "add", "staged.txt")
    root = git(repo, "write-tree").strip()  # the index's tree cache now names this tree
    (repo / ".git" / "objects" / root[:2] / root[2:]).unlink()  # ... which is gone

    store = SnapshotStore(repo, data_dir)
    try:
        result = store.capture(session_id="s", reason="start")
    finally:
        store.close()
    assert result.tree == git_add_all_tree(repo, tmp_path / "git")


def test_a_group_whose_read_only_diff_fails_is_walked_whole_by_the_updating_diff(
    split: Split, monkeypatch: pytest.MonkeyPatch, store: SnapshotStore, repo: Path, tmp_path: Path
) -> None:
    original = splitwalk._read_only_diff
    failed: list[list[str]] = []

    def failing(repo_: pygit2.Repository, index: pygit2.Index, flags: int, paths: list[str], perf: object) -> object:
        if any(p == "src" or p.startswith("src/") for p in paths):
            failed.append(paths)
            raise pygit2.GitError("a directory vanished mid-walk")
        return original(repo_, index, flags, paths, perf)  # type: ignore[arg-type]

    monkeypatch.setattr(splitwalk, "_read_only_diff", failing)
    write(repo / "src" / "app.py", "changed\n")
    used = split.used
    result = store.capture(session_id="s", reason="walk")
    assert failed and split.used == used + 1  # split; the failed group went to the updating diff
    assert result.snapshot is not None and [f.path for f in result.snapshot.files] == ["src/app.py"]
    assert result.tree == git_add_all_tree(repo, tmp_path / "git")


def test_this_thread_walks_with_the_index_own_repository(split: Split, store: SnapshotStore, repo: Path) -> None:
    # A second handle loads the whole index file again on its first diff (~45 ms of CPU at 100k
    # entries): only the other threads get one. With three groups, two handles.
    write(repo / "src" / "app.py", "changed\n")
    result = store.capture(session_id="s", reason="walk")
    assert split.used == 1
    assert len(store._refresher._split._repos) == 2
    assert result.snapshot is not None and [f.path for f in result.snapshot.files] == ["src/app.py"]


def _prefetched(monkeypatch: pytest.MonkeyPatch) -> list[list[pygit2.Repository]]:
    """Records the handles each prefetch opened; the seed runs its load on a thread (a CPU is free)."""
    from agentcli.snapshots import seed

    monkeypatch.setattr(seed, "cpus_idle", lambda workers: True)
    opened: list[list[pygit2.Repository]] = []
    original = splitwalk.SplitWalk.prefetch

    def recording(walk: splitwalk.SplitWalk, entries: int) -> None:
        original(walk, entries)
        if walk._prefetching is not None:
            opened.append(walk._prefetching[1])

    monkeypatch.setattr(splitwalk.SplitWalk, "prefetch", recording)
    return opened


def test_a_first_capture_splits_with_handles_loaded_beside_the_seed(
    split: Split, repo: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = _prefetched(monkeypatch)
    write(repo / "src" / "app.py", "changed before the first capture\n")
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    assert split.used == 1 and len(opened) == 1
    assert store._refresher._split._repos == opened[0]  # the prefetched handles did the walk
    assert not [t for t in threading.enumerate() if t.name == "agentcli-split-prefetch"]
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")


def test_prefetched_handles_are_dropped_when_the_seed_rewrote_the_index(
    split: Split, repo: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An assume-unchanged entry is dropped from the copy and the index written again: the
    # prefetched handles read the file before that, so the split must open fresh ones.
    opened = _prefetched(monkeypatch)
    git(repo, "update-index", "--assume-unchanged", "src/app.py")
    write(repo / "src" / "app.py", "changed behind an assume-unchanged flag\n")
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    assert split.used == 1 and len(opened) == 1
    handles = store._refresher._split._repos
    assert handles and not any(h is p for h in handles for p in opened[0])
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")


def test_a_walk_that_wrote_the_index_prefetches_the_next_walks_handles(
    split: Split, store: SnapshotStore, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.capture(session_id="s", reason="start")
    opened = _prefetched(monkeypatch)
    walk = store._refresher._split
    index_file = store.path / "index"
    for i in range(70):  # past 64 changed entries the capture writes the index file
        write(repo / "gen" / f"f{i}.txt", f"{i}\n")
    written_before = index_file.stat().st_mtime_ns, index_file.stat().st_ino

    store.capture(session_id="s", reason="walk")

    assert (index_file.stat().st_mtime_ns, index_file.stat().st_ino) != written_before
    assert len(opened) == 1  # as it returned: handles for the file just written
    held = list(walk._repos)
    write(repo / "src" / "util.py", "changed\n")
    result = store.capture(session_id="s", reason="walk again")

    assert walk._repos == opened[0] and not any(h is p for h in walk._repos for p in held)
    assert not [t for t in threading.enumerate() if t.name == "agentcli-split-prefetch"]
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")


def _counting_searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each binary search the cut makes in the index (what the kept counts save)."""
    from agentcli.snapshots import splitgroups

    searched: list[str] = []
    original = splitgroups.index_lower_bound

    def counting(index: pygit2.Index, key: str, lo: int = 0, hi: int | None = None) -> int:
        searched.append(key)
        return original(index, key, lo, hi)

    monkeypatch.setattr(splitgroups, "index_lower_bound", counting)
    return searched


def _big_tree(repo: Path) -> None:
    """Two directories big enough to be cut into their children (over 1/6 of the entries each)."""
    for top in ("lib", "pkg"):
        for sub in range(4):
            for i in range(3):
                write(repo / top / f"m{sub}" / f"f{i}.py", f"{top} {sub} {i}\n")
    commit_all(repo, "big")


def test_a_second_cut_searches_the_index_only_under_changed_directories(
    split: Split, store: SnapshotStore, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _big_tree(repo)
    searched = _counting_searches(monkeypatch)
    store.capture(session_id="s", reason="start")
    assert "lib/m0" + "0" in searched  # the first cut counted the children of a cut directory

    searched.clear()
    assert store.capture(session_id="s", reason="nothing changed").snapshot is None
    assert split.used == 2 and searched == []  # same trees: every count was kept

    write(repo / "pkg" / "m2" / "f1.py", "changed\n")
    store.capture(session_id="s", reason="one changed")
    searched.clear()
    write(repo / "pkg" / "m2" / "f0.py", "changed too\n")  # the index's tree now differs under pkg/m2 only
    result = store.capture(session_id="s", reason="another")
    assert split.used == 4 and set(searched) == {"pkg0", "pkg/m20"}
    assert result.tree == git_add_all_tree(repo, tmp_path / "git")


def test_what_changed_on_disk_under_a_kept_listing_is_still_walked(
    split: Split, store: SnapshotStore, repo: Path, tmp_path: Path
) -> None:
    # The kept listings say what the index holds; the workspace is read every time. New names in
    # a cut directory, a cut directory become a link, a nested repository, all after a cut kept.
    _big_tree(repo)
    store.capture(session_id="s", reason="start")
    write(repo / "lib" / "new.txt", "new beside the cut children\n")
    write(repo / "lib" / "m9" / "deep.py", "a new folder in a cut directory\n")
    shutil.rmtree(repo / "pkg" / "m1")
    write(repo / "pkg" / "m1", "a file where a folder was\n")
    git(repo / "lib" / "m3", "init", "-q")
    commit_all(repo / "lib" / "m3", "nested")
    shutil.rmtree(repo / "src")
    (repo / "src").symlink_to("lib")

    result = store.capture(session_id="s", reason="walk")

    assert split.used == 2
    split.off()
    single = SnapshotStore(repo, tmp_path / "single")
    assert result.tree == single.capture(session_id="s", reason="walk").tree


@pytest.mark.parametrize("files", [50, 100])
def test_the_threshold_splits_trees_shaped_like_the_bench_and_records_what_git_does(
    files: int, monkeypatch: pytest.MonkeyPatch, repo: Path, data_dir: Path, tmp_path: Path
) -> None:
    # bench/snapshots.py's trees (40 files a folder, 100 folders a package) scaled down 100x, the
    # threshold with them (8,000 -> 80): 5k files stay on one thread, 10k split, one package left
    # whole and two cut into their folders; first capture and walks each record git's tree.
    monkeypatch.setattr(splitwalk, "MIN_ENTRIES", splitwalk.MIN_ENTRIES // 100)
    monkeypatch.setattr(splitwalk, "worker_count", lambda: 2)
    monkeypatch.setattr(splitwalk, "cpus_idle", lambda workers: True)
    paths = [f"pkg{i // 10 // 4}/mod{i // 10 % 4}/file{i:03d}.py" for i in range(files)]
    for i, rel in enumerate(paths):
        write(repo / rel, f"def f():\n    return {i}\n")
    commit_all(repo, "bench-shaped")
    store = SnapshotStore(repo, data_dir)
    expected = "split" if files + 5 >= splitwalk.MIN_ENTRIES else "small"

    results = [store.capture(session_id="s", reason="start")]
    trees = [git_add_all_tree(repo, tmp_path / "git0")]
    for step, changed in enumerate((paths[:1], paths[::7], [], ["pkg1/new.py"]), start=1):
        for rel in changed:
            write(repo / rel, "changed\n")
        results.append(store.capture(session_id="s", reason="walk"))
        trees.append(git_add_all_tree(repo, tmp_path / f"git{step}"))

    assert store._refresher._split.outcomes == {expected: len(results)}
    assert [r.tree for r in results] == trees
    assert results[3].snapshot is None  # nothing changed, nothing recorded


def test_the_other_threads_are_kept_between_walks_and_end_with_the_store(
    split: Split, store: SnapshotStore, repo: Path
) -> None:
    others = {t for t in threading.enumerate() if t.name.startswith("agentcli-split_")}  # stores of earlier tests

    def walkers() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("agentcli-split_")} - others

    store.capture(session_id="s", reason="start")
    first = walkers()
    write(repo / "src" / "app.py", "changed\n")
    result = store.capture(session_id="s", reason="walk")

    assert split.used == 2 and 1 <= len(first) <= 2  # three groups: this thread and up to two kept ones
    assert first <= walkers() and len(walkers()) <= 2  # kept and walking again: none per walk
    assert result.snapshot is not None and [f.path for f in result.snapshot.files] == ["src/app.py"]
    store.close()
    assert not walkers()


def test_the_seed_own_loading_thread_does_not_keep_the_handles_from_loading_beside_it(
    repo: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real gate, on two CPUs where only this thread and the seed's load run: the seed's
    # thread is ours, not a neighbour, so the split's handles still get their head start.
    opened = _prefetched(monkeypatch)
    monkeypatch.setattr(splitwalk, "MIN_ENTRIES", 0)
    monkeypatch.setattr(splitwalk, "worker_count", lambda: 2)
    monkeypatch.setattr(splitwalk, "_cpu_count", lambda: 2)
    monkeypatch.setattr(splitwalk, "running_tasks", lambda: 2)
    monkeypatch.setattr(splitwalk, "own_running", lambda: 2)  # this thread and the seed's load
    store = SnapshotStore(repo, data_dir)

    store.capture(session_id="s", reason="start")

    assert store._shadow.seeded == "thread" and len(opened) == 1


def test_own_running_threads_are_counted_from_the_kernel() -> None:
    assert splitwalk.own_running() >= 1  # this one
    stop = threading.Event()
    data = b"x" * (8 << 20)

    def hashing() -> None:
        while not stop.is_set():
            hashlib.sha256(data)  # in C without the GIL: running, not waiting for it

    worker = threading.Thread(target=hashing, daemon=True)
    worker.start()
    try:
        seen = 0
        while seen < 2:  # a condition, not a time: the kernel reports it once it runs
            seen = max(seen, splitwalk.own_running())
    finally:
        stop.set()
        worker.join()
