"""Captures hinted by the watcher record exactly what a walk of the tree records.

Two stores watch the same workspace: one captures from the watcher's hints, the other walks the
tree every time. After any mix of file operations their trees must be identical.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snaphelpers import commit_all, git, git_add_all_tree, write

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots.layout import scan_layout
from agentcli.snapshots.restore import umask

pytestmark = [
    pytest.mark.may_skip(reason="the watcher uses inotify, which only Linux has"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only"),
]

FILES = [
    "f0",
    "f1.txt",
    "d0/f0",
    "d0/f1.txt",
    "d0/d1/f0",
    "d1/f0",
    "d1/d0/f1.txt",
    "d2/f0",
    "d2/f1.txt",
    "d2/d1/f0",
    "n0/f0",
    "n0/d0/f1.txt",
]
DIRS = ["d0", "d1", "d0/d1", "d1/d0", "d2", "n0"]
ANY = FILES + DIRS

ops = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(FILES), st.binary(max_size=40)),
    st.tuples(st.just("delete"), st.sampled_from(ANY)),
    st.tuples(st.just("rename"), st.sampled_from(ANY), st.sampled_from(ANY)),
    st.tuples(st.just("chmod"), st.sampled_from(FILES)),
    st.tuples(st.just("touch"), st.sampled_from(FILES)),
    st.tuples(st.just("symlink"), st.sampled_from(FILES), st.sampled_from([*ANY, "missing", "../outside"])),
    st.tuples(st.just("mkdir"), st.sampled_from(DIRS)),
    st.tuples(st.just("nested_repo"), st.sampled_from(DIRS)),
    st.tuples(st.just("nested_commit"), st.sampled_from(DIRS)),
    st.tuples(st.just("gitignore"), st.sampled_from(["", "d0/", "*.txt", "f0\n!d0/f0", "d1"])),
)


def apply(ws: Path, op: tuple[object, ...]) -> None:
    """Applies one operation; one that makes no sense in the current tree does nothing."""
    kind, *args = op
    try:
        if kind == "write":
            path, data = ws / str(args[0]), args[1]
            assert isinstance(data, bytes)
            if path.is_symlink() or path.is_dir():
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        elif kind == "delete":
            path = ws / str(args[0])
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        elif kind == "rename":
            src, dst = ws / str(args[0]), ws / str(args[1])
            if dst.is_dir() and not dst.is_symlink() or str(args[1]).startswith(str(args[0]) + "/"):
                return
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.rename(src, dst)
        elif kind == "chmod":
            path = ws / str(args[0])
            if path.is_file() and not path.is_symlink():
                path.chmod(path.stat().st_mode ^ 0o111)
        elif kind == "touch":
            path = ws / str(args[0])
            if path.is_file() and not path.is_symlink():
                os.utime(path, (1_700_000_000, 1_700_000_000))
        elif kind == "symlink":
            path = ws / str(args[0])
            if path.exists() or path.is_symlink():
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            target = str(args[1])
            os.symlink(os.path.relpath(ws / target, path.parent) if not target.startswith("..") else target, path)
        elif kind == "mkdir":
            (ws / str(args[0])).mkdir(parents=True, exist_ok=True)
        elif kind == "nested_repo":
            path = ws / str(args[0])
            if path.is_symlink() or (path.exists() and not path.is_dir()) or (path / ".git").exists():
                return
            path.mkdir(parents=True, exist_ok=True)
            (path / "inner.txt").write_text("inner\n")
            git(path, "init", "-q", "-b", "main")
            git(path, "add", "inner.txt")
            git(path, "commit", "-q", "-m", "inner")
        elif kind == "nested_commit":
            path = ws / str(args[0])
            if not (path / ".git").is_dir():
                return
            with open(path / "inner.txt", "a") as fh:
                fh.write("more\n")
            git(path, "commit", "-q", "-am", "more")
        elif kind == "gitignore":
            (ws / ".gitignore").write_text(str(args[0]) + "\n")
    except (OSError, subprocess.CalledProcessError):
        pass


def _fresh_workspace(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    write(ws / "f0", "zero\n")
    write(ws / "d0" / "f0", "d0 zero\n")
    write(ws / "d0" / "d1" / "f0", "deep\n")
    write(ws / "d1" / "f0", "one\n")
    commit_all(ws, "base")
    return ws


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=st.lists(st.lists(ops, min_size=1, max_size=5), min_size=1, max_size=5))
def test_hinted_captures_equal_full_walks(batches: list[list[tuple[object, ...]]], tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("prop")
    ws = _fresh_workspace(root)
    # A small untracked-directory limit, so the guard's verdict must also agree.
    hinted = SnapshotStore(ws, root / "hinted", watch=True, max_untracked_dir_files=2)
    walked = SnapshotStore(ws, root / "walked", max_untracked_dir_files=2)
    assert hinted.capture(session_id="s", reason="start").tree == walked.capture(session_id="s", reason="start").tree
    assert hinted.watching
    try:
        for batch in batches:
            for op in batch:
                apply(ws, op)
            from_hints = hinted.capture(session_id="s", reason="after bash", watched=True)
            from_walk = walked.capture(session_id="s", reason="after bash")
            assert from_hints.tree == from_walk.tree, batch
            # A walk reports every skipped path again; hints report those the batch touched.
            assert {s.path for s in from_hints.skipped} <= {s.path for s in from_walk.skipped}, batch
            # The layout kept from the watcher's paths equals a full scan of the workspace.
            recorded = hinted.capture(session_id="s", reason="layout", watched=True, record_layout=True)
            last = hinted.timeline("s")[-1]
            assert recorded.tree == last.tree
            assert hinted.layout_record(last.id) == scan_layout(ws, umask()), batch
    finally:
        hinted.close()
        shutil.rmtree(root, ignore_errors=True)


def test_a_hinted_capture_walks_nothing_but_what_changed(repo: Path, data_dir: Path) -> None:
    store = SnapshotStore(repo, data_dir, watch=True)
    store.capture(session_id="s", reason="start")
    assert store.watching
    write(repo / "src" / "app.py", "def main():\n    return 2\n")
    (repo / "build").mkdir()
    write(repo / "build" / "new.py", "N = 1\n")

    result = store.capture(session_id="s", reason="after bash", watched=True)

    assert result.snapshot is not None
    assert sorted(f.path for f in result.snapshot.files) == ["build/new.py", "src/app.py"]
    assert store.watching  # no fallback walk was needed
    nothing = store.capture(session_id="s", reason="after bash", watched=True)
    assert nothing.snapshot is None


def test_lost_events_fall_back_to_a_walk_and_the_watcher_restarts(repo: Path, data_dir: Path) -> None:
    store = SnapshotStore(repo, data_dir, watch=True)
    store.capture(session_id="s", reason="start")
    watcher = store._watcher
    assert watcher is not None
    watcher._max_hints = 3  # as if a command touched more paths than hints are worth
    for i in range(6):
        write(repo / "many" / f"f{i}.txt", f"{i}\n")

    result = store.capture(session_id="s", reason="after bash", watched=True)

    assert result.snapshot is not None and len(result.snapshot.files) == 6
    assert store.watching  # the walk restarted it
    write(repo / "README.md", "after the restart\n")
    after = store.capture(session_id="s", reason="after bash", watched=True)
    assert after.snapshot is not None and [f.path for f in after.snapshot.files] == ["README.md"]


def test_an_exclude_file_change_makes_the_watched_capture_walk(repo: Path, data_dir: Path) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    write(exclude, "secret.env\n")
    write(repo / "secret.env", "TOKEN=1\n")
    store = SnapshotStore(repo, data_dir, watch=True)
    store.capture(session_id="s", reason="start")
    # Nothing under .git is watched: the capture sees the exclude file changed and walks.
    write(exclude, "")

    result = store.capture(session_id="s", reason="after bash", watched=True)

    assert result.snapshot is not None
    assert [f.path for f in result.snapshot.files] == ["secret.env"]


def test_a_file_written_inside_a_nested_repository_is_judged_as_the_repository(repo: Path, data_dir: Path) -> None:
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    write(nested / "a.txt", "a\n")
    git(nested, "init", "-q", "-b", "main")
    git(nested, "add", "a.txt")
    git(nested, "commit", "-q", "-m", "a")
    store = SnapshotStore(repo, data_dir, watch=True)
    walked = SnapshotStore(repo, data_dir / "walked")
    store.capture(session_id="s", reason="start")
    write(nested / "untracked-inside.txt", "never ours\n")
    write(nested / "a.txt", "changed, uncommitted\n")

    hinted = store.capture(session_id="s", reason="after bash", watched=True)

    assert hinted.tree == walked.capture(session_id="s", reason="walk").tree
    assert store.watching


def test_a_file_added_to_an_oversized_untracked_directory_stays_out(repo: Path, data_dir: Path) -> None:
    for i in range(4):
        write(repo / "dump" / f"{i}.txt", f"{i}\n")
    store = SnapshotStore(repo, data_dir, watch=True, max_untracked_dir_files=3)
    walked = SnapshotStore(repo, data_dir / "walked", max_untracked_dir_files=3)
    first = store.capture(session_id="s", reason="start")
    assert [s.path for s in first.skipped] == ["dump"]
    write(repo / "dump" / "4.txt", "4\n")

    hinted = store.capture(session_id="s", reason="after bash", watched=True)

    # A walk counts the whole directory (5 files, over the limit); the hint must too.
    assert [(s.path, s.files) for s in hinted.skipped] == [("dump", 5)]
    assert hinted.tree == walked.capture(session_id="s", reason="walk").tree


def test_a_watcher_that_cannot_run_leaves_every_capture_walking(repo: Path, data_dir: Path) -> None:
    store = SnapshotStore(repo, data_dir, watch=True)
    watcher = store._watcher
    assert watcher is not None
    watcher._max_dirs = 2  # as if the tree had more directories than the watcher may watch
    store.capture(session_id="s", reason="start")
    assert not store.watching
    assert watcher.unavailable_reason is not None and "directories" in watcher.unavailable_reason
    write(repo / "src" / "util.py", "X = 2\n")

    result = store.capture(session_id="s", reason="after bash", watched=True)

    assert result.snapshot is not None and [f.path for f in result.snapshot.files] == ["src/util.py"]
    assert not store.watching


def test_a_directory_moved_away_and_back_is_followed(repo: Path, data_dir: Path, tmp_path: Path) -> None:
    store = SnapshotStore(repo, data_dir, watch=True)
    walked = SnapshotStore(repo, data_dir / "walked")
    store.capture(session_id="s", reason="start")
    outside = tmp_path / "parked"
    os.rename(repo / "src", outside)
    assert store.capture(session_id="s", reason="moved out", watched=True).tree == walked.capture(
        session_id="s", reason="walk"
    ).tree
    write(outside / "while-away.py", "A = 1\n")  # not in the workspace: nothing to record
    os.rename(outside, repo / "lib")
    write(repo / "lib" / "after.py", "B = 1\n")

    hinted = store.capture(session_id="s", reason="moved back", watched=True)

    assert hinted.tree == walked.capture(session_id="s", reason="walk").tree
    assert store.watching


def test_an_index_written_by_another_process_makes_the_next_watched_capture_walk(
    repo: Path, data_dir: Path, tmp_path: Path
) -> None:
    """Another store object on the same shadow stands in for a second agentcli process."""
    watching = SnapshotStore(repo, data_dir, watch=True)
    other = SnapshotStore(repo, data_dir)
    watching.capture(session_id="a", reason="start")
    write(repo / "src" / "app.py", "def main():\n    return 'from bash'\n")
    watching.capture(session_id="a", reason="after bash", watched=True)  # kept in memory only
    write(repo / "src" / "util.py", "X = 'from the other session'\n")
    other.capture(session_id="b", reason="after edit_file", paths_hint=["src/util.py"])  # writes the index

    result = watching.capture(session_id="a", reason="after bash", watched=True)

    assert result.tree == git_add_all_tree(repo, tmp_path / "x")


def test_the_store_writing_its_own_index_keeps_the_watcher_trusted(repo: Path, data_dir: Path) -> None:
    store = SnapshotStore(repo, data_dir, watch=True)
    first = store.capture(session_id="s", reason="start")
    assert first.snapshot is not None
    store.diff(first.snapshot)  # refreshes and writes the index: no other process involved
    assert not store._refresher.index_written_elsewhere()
    write(repo / "README.md", "changed\n")

    result = store.capture(session_id="s", reason="after bash", watched=True)

    assert result.snapshot is not None and [f.path for f in result.snapshot.files] == ["README.md"]
    assert store.watching


def test_hinted_captures_of_two_processes_keep_each_others_changes(repo: Path, data_dir: Path, tmp_path: Path) -> None:
    """Each store keeps recent index changes in memory; neither may lose the other's."""
    one = SnapshotStore(repo, data_dir)
    two = SnapshotStore(repo, data_dir)
    one.capture(session_id="a", reason="start")
    two.capture(session_id="b", reason="start")
    write(repo / "src" / "app.py", "def main():\n    return 'one'\n")
    one.capture(session_id="a", reason="after write_file", paths_hint=["src/app.py"])
    write(repo / "src" / "util.py", "X = 'two'\n")
    two.capture(session_id="b", reason="after write_file", paths_hint=["src/util.py"])
    write(repo / "README.md", "one again\n")

    result = one.capture(session_id="a", reason="after write_file", paths_hint=["README.md"])

    assert result.tree == git_add_all_tree(repo, tmp_path / "x")


def test_a_flooded_watcher_near_the_kernel_limit_closes_before_watching_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import agentcli.snapshots.watcher as watcher_module
    from agentcli.snapshots.watcher import TreeWatcher

    for n in range(6):
        write(tmp_path / f"d{n}" / "f.txt", "x\n")
    watcher = TreeWatcher(tmp_path)
    assert watcher.start(), watcher.unavailable_reason
    for n in range(6):
        for k in range(200):
            write(tmp_path / f"d{n}" / f"new{k}.txt", "y\n")
    closers: list[threading.Thread] = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start",
                        lambda self: (closers.append(self), real_start(self))[1])
    monkeypatch.setattr(watcher_module, "_watch_limit", lambda: 8)  # 7 watches: over half the limit
    watcher.skim_before_walk()
    assert watcher._inotify is None, "the flood made watching afresh cheaper"
    assert not [t for t in closers if t.name == "inotify-close"], "closed at once, not on a thread"
    assert watcher.start()
