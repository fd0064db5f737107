"""After the bulk refresh of touched files, the paths left to look at give a single walk's tree.

`touchedwalk.py` replaces the walk that followed the bulk refresh by a listing of the directories
holding entries. These tests touch every file (so the bulk pass runs), mix in random file
operations, and compare the tree with one from a store that walks as before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from snaphelpers import commit_all, git, git_add_all_tree, write
from test_snapshots_watcher import apply, ops

from agentcli.snapshots import SnapshotStore, capture, touchedwalk
from agentcli.snapshots.restat import MIN_ENTRIES

MANY = MIN_ENTRIES + 60


class Listing:
    """Turns the listing on or off for the captures that follow, and counts its answers."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.enabled = True
        self.answers: list[bool] = []
        original = touchedwalk.remaining_paths

        def switched(workspace: Path, seen: touchedwalk.Seen) -> set[str] | None:
            if not self.enabled:
                return None
            found = original(workspace, seen)
            self.answers.append(found is not None)
            return found

        mp.setattr(capture, "remaining_paths", switched)


@pytest.fixture
def listing(monkeypatch: pytest.MonkeyPatch) -> Iterator[Listing]:
    yield Listing(monkeypatch)


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir()
    for i in range(MANY):
        write(ws / f"m{i % 5}" / f"f{i:04d}.txt", f"file {i}\n" * (1 + i % 3))
    write(ws / "f0", "zero\n")
    write(ws / "d0" / "f0", "d0 zero\n")
    write(ws / "d0" / "d1" / "f0", "deep\n")
    write(ws / "d1" / "f0", "one\n")
    write(ws / ".gitignore", "*.log\n")
    git(ws, "init", "-q", "-b", "main")
    commit_all(ws, "base")
    return ws


def _touch_all(ws: Path, stamp: int) -> None:
    for directory, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.utime(path, (stamp, stamp))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=st.lists(st.lists(ops, min_size=0, max_size=5), min_size=1, max_size=3))
def test_touched_then_changed_trees_equal_walked_ones(
    batches: list[list[tuple[object, ...]]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("touched")
    ws = _workspace(root)
    with pytest.MonkeyPatch.context() as mp:
        control = Listing(mp)
        listed = SnapshotStore(ws, root / "listed", max_untracked_dir_files=2)
        walked = SnapshotStore(ws, root / "walked", max_untracked_dir_files=2)
        try:
            control.enabled = True
            first = listed.capture(session_id="s", reason="start")
            control.enabled = False
            assert walked.capture(session_id="s", reason="start").tree == first.tree
            for n, batch in enumerate(batches):
                _touch_all(ws, 1_700_000_000 + n)
                for op in batch:
                    apply(ws, op)
                control.enabled = True
                answers = len(control.answers)
                from_listing = listed.capture(session_id="s", reason="touched")
                assert len(control.answers) == answers + 1, "the bulk pass did not run"
                event("listed" if control.answers[-1] else "walked after all")
                control.enabled = False
                from_walk = walked.capture(session_id="s", reason="touched")
                assert from_listing.tree == from_walk.tree, batch
                assert {s.path for s in from_listing.skipped} == {s.path for s in from_walk.skipped}, batch
        finally:
            listed.close()
            walked.close()
            shutil.rmtree(root, ignore_errors=True)


def test_new_files_links_ignored_and_same_size_edits_are_found_without_a_walk(
    listing: Listing, tmp_path: Path
) -> None:
    ws = _workspace(tmp_path)
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    _touch_all(ws, 1_700_000_000)
    write(ws / "m1" / "f0001.txt", "FILE 1\n" * 2)  # same size, new bytes
    write(ws / "m2" / "new.txt", "new\n")
    write(ws / "fresh" / "a" / "b.txt", "a new directory\n")
    write(ws / "trace.log", "ignored\n")
    os.symlink("m3", ws / "link")
    (ws / "d1" / "f0").unlink()
    shutil.rmtree(ws / "d0" / "d1")

    result = store.capture(session_id="s", reason="touched")
    assert listing.answers == [True]
    assert result.tree == git_add_all_tree(ws, tmp_path / "git")
    assert result.snapshot is not None
    assert {f.path for f in result.snapshot.files} == {
        "m1/f0001.txt",
        "m2/new.txt",
        "fresh/a/b.txt",
        "link",
        "d1/f0",
        "d0/d1/f0",
    }
    store.close()


def test_a_directory_of_entries_turned_into_a_repository_or_a_link_makes_it_walk(
    listing: Listing, tmp_path: Path
) -> None:
    ws = _workspace(tmp_path)
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    _touch_all(ws, 1_700_000_000)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ws / "d0", check=True)
    shutil.rmtree(ws / "d1")
    os.symlink("m4", ws / "d1")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(capture, "remaining_paths", lambda *a: None)
        reference = SnapshotStore(ws, tmp_path / "reference")
        expected = reference.capture(session_id="s", reason="walked").tree
        reference.close()
    result = store.capture(session_id="s", reason="touched")
    assert listing.answers == [False]  # asked, and it said walk
    assert result.tree == expected
    store.close()
