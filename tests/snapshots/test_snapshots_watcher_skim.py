"""Before a walk the watcher steps over the queued file events instead of watching afresh.

What it must still take from the queue are the events about the watches themselves: a new or
moved directory, a `.git` making a nested repository, an overflow. Each test floods the queue
with touches (so the skim, not a fresh start, runs) and mixes one such event in; a skim that
stepped over it would leave a directory unwatched or a repository unhinted, and a later watched
capture would miss a change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from snaphelpers import commit_all, git, git_add_all_tree, write

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots.watcher import TreeWatcher

pytestmark = [
    pytest.mark.may_skip(reason="the watcher uses inotify, which only Linux has"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only"),
]


def _tree_of(root: Path, dirs: int = 4, files: int = 30) -> list[Path]:
    made = []
    for d in range(dirs):
        for f in range(files):
            made.append(write(root / f"d{d}" / f"f{f}.txt", f"{d}/{f}\n"))
    return made


def _touch(paths: list[Path], stamp: int) -> None:
    for path in paths:
        os.utime(path, (stamp, stamp))


def test_a_skim_keeps_the_watcher_and_watches_a_directory_made_in_the_flood(tmp_path: Path) -> None:
    files = _tree_of(tmp_path)
    watcher = TreeWatcher(tmp_path)
    assert watcher.start(), watcher.unavailable_reason
    inotify = watcher._inotify
    _touch(files[:60], 1_700_000_000)
    write(tmp_path / "made" / "deep" / "first.txt", "1\n")  # made while the queue filled
    _touch(files[60:], 1_700_000_000)

    watcher.skim_before_walk()

    assert watcher._inotify is inotify, "skimmed, not dropped: the watcher runs on"
    assert watcher.take() is not None
    write(tmp_path / "made" / "deep" / "later.txt", "2\n")
    taken = watcher.take()
    assert taken is not None and "made/deep/later.txt" in taken.paths


def test_a_skim_follows_a_directory_moved_in_the_flood(tmp_path: Path) -> None:
    files = _tree_of(tmp_path)
    watcher = TreeWatcher(tmp_path)
    assert watcher.start(), watcher.unavailable_reason
    _touch(files, 1_700_000_000)
    os.rename(tmp_path / "d1", tmp_path / "moved")

    watcher.skim_before_walk()

    assert watcher.running
    write(tmp_path / "moved" / "f0.txt", "changed\n")
    taken = watcher.take()
    assert taken is not None and "moved/f0.txt" in taken.paths
    assert not any(p.startswith("d1/") for p in taken.paths), "the old name's watch was dropped"


def test_a_skim_sees_a_git_file_that_makes_a_nested_repository(tmp_path: Path) -> None:
    files = _tree_of(tmp_path)
    watcher = TreeWatcher(tmp_path)
    assert watcher.start(), watcher.unavailable_reason
    _touch(files, 1_700_000_000)
    write(tmp_path / "d2" / ".git", "gitdir: /elsewhere\n")  # a file, not a directory: no IN_ISDIR
    (tmp_path / "d3" / ".git").mkdir()

    watcher.skim_before_walk()

    assert watcher.running
    taken = watcher.take()
    assert taken is not None and {"d2", "d3"} <= taken.paths, "nested repositories are hinted on every take"


def test_an_overflow_found_by_the_skim_makes_the_watcher_start_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentcli.snapshots.watcher as watcher_module

    files = _tree_of(tmp_path, dirs=1, files=5)
    watcher = TreeWatcher(tmp_path)
    assert watcher.start(), watcher.unavailable_reason
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    for n in range(limit // 5 + 2):  # each round queues 5 events: over the kernel's queue
        _touch(files, 1_700_000_000 + n)
    assert watcher._inotify is not None

    # As many watched folders, and as long a queue, as make skimming the cheaper way: only the
    # overflow event the skim reads can stop the watcher.
    monkeypatch.setattr(watcher_module, "_queue_limit", lambda: 10**9)
    watcher._wds.update({f"pretend{n}": -n - 1 for n in range(limit)})
    watcher.skim_before_walk()

    assert not watcher.running, "events were lost: the walk's start must watch afresh"
    assert watcher.start()


def test_a_walk_after_every_file_touched_keeps_later_watched_captures_exact(repo: Path, data_dir: Path) -> None:
    files = _tree_of(repo, dirs=6, files=100)  # over restat.MIN_ENTRIES: the bulk refresh runs too
    commit_all(repo, "many")
    store = SnapshotStore(repo, data_dir, watch=True)
    store.capture(session_id="s", reason="start")
    watcher = store._watcher
    assert watcher is not None
    inotify = watcher._inotify
    _touch(files, 1_700_000_000)
    write(repo / "fresh" / "a.txt", "a\n")
    (repo / "inner").mkdir()
    (repo / "inner" / "x.txt").write_text("x\n")
    git(repo / "inner", "init", "-q", "-b", "main")
    git(repo / "inner", "add", "x.txt")
    git(repo / "inner", "commit", "-q", "-m", "inner")

    walked = store.capture(session_id="s", reason="after bash")

    assert watcher._inotify is inotify, "the walk skimmed the queue"
    assert store.watching
    assert walked.tree == git_add_all_tree(repo, data_dir.parent / "x1")
    write(repo / "fresh" / "b.txt", "b\n")
    with open(repo / "inner" / "x.txt", "a") as fh:
        fh.write("more\n")
    git(repo / "inner", "commit", "-q", "-am", "more")

    hinted = store.capture(session_id="s", reason="after bash", watched=True)

    assert store.watching
    assert hinted.snapshot is not None
    assert sorted(f.path for f in hinted.snapshot.files) == ["fresh/b.txt", "inner"]
    assert hinted.tree == git_add_all_tree(repo, data_dir.parent / "x2")


def test_a_queue_that_may_have_overflowed_is_dropped_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentcli.snapshots.watcher as watcher_module

    files = _tree_of(tmp_path, dirs=1, files=20)
    watcher = TreeWatcher(tmp_path)
    assert watcher.start(), watcher.unavailable_reason
    _touch(files, 1_700_000_000)  # 20 events of 32 bytes: the queue of a kernel keeping 20 is full
    monkeypatch.setattr(watcher_module, "_queue_limit", lambda: 20)
    inotify = watcher._inotify
    assert inotify is not None
    monkeypatch.setattr(inotify, "structural_events", lambda: pytest.fail("skimmed a queue that may have overflowed"))

    watcher.skim_before_walk()

    assert not watcher.running
    assert watcher.start()
