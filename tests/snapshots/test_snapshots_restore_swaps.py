"""A folder swapped for a symlink while a restore runs is never written through (`restorefolders.py`).

The plan checks each folder by name before any write; another process may swap one for a link
to a folder outside the workspace afterwards. Each swap is made at a seam (the store's call of
`apply_changes`, or the first write), not by racing a thread against the restore.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from snaphelpers import TreeState as State
from snaphelpers import git_add_all_tree, tree_state, write

from agentcli.snapshots import RestoreStoppedError, SnapshotStore, restorefolders, restorewrites
from agentcli.snapshots import store as store_module
from agentcli.snapshots.models import Snapshot
from agentcli.snapshots.restore import Applied


@pytest.fixture(params=[False, True], ids=["walked", "watched"])
def store(request: pytest.FixtureRequest, repo: Path, data_dir: Path) -> Iterator[SnapshotStore]:
    watch = bool(request.param)
    if watch and not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux-only")
    opened = SnapshotStore(repo, data_dir, watch=watch)
    yield opened
    opened.close()


def _outside(tmp_path: Path) -> Path:
    """A folder outside the workspace holding files named as the restore's are."""
    out = tmp_path / "outside"
    for name in ("app.py", "util.py", "extra.py", "run.sh"):
        write(out / name, f"outside's own {name}\n")
    (out / "new").mkdir()
    return out


def _start_then_change(repo: Path, store: SnapshotStore) -> tuple[Snapshot, State]:
    """The start snapshot (a nested folder, an executable, a link, a 0600 file, an empty folder)
    and the tree as it was; then files under `src/` changed, deleted, added, and captured."""
    write(repo / "src" / "new" / "deep.py", "deep\n")
    write(repo / "src" / "tool.sh", "#!/bin/sh\n", mode=0o755)
    write(repo / "src" / "secret.txt", "private\n", mode=0o600)
    os.symlink("app.py", repo / "src" / "alias.py")
    (repo / "src" / "empty").mkdir()
    start = store.capture(session_id="s", reason="start", record_layout=True).snapshot
    assert start is not None
    expected = tree_state(repo)
    write(repo / "src" / "app.py", "changed\n")
    (repo / "src" / "util.py").unlink()
    shutil.rmtree(repo / "src" / "new")
    (repo / "src" / "empty").rmdir()
    os.chmod(repo / "src" / "tool.sh", 0o644)
    (repo / "src" / "secret.txt").unlink()
    os.unlink(repo / "src" / "alias.py")
    write(repo / "src" / "extra.py", "to be deleted by the restore\n")
    write(repo / "notes.txt", "to be deleted too\n")
    store.capture(session_id="s", reason="after bash", watched=True)
    return start, expected


def _swap(repo: Path, outside: Path) -> None:
    """What another process does: `src/` moved aside, a link to `outside` in its place."""
    os.rename(repo / "src", repo / "src.moved")
    os.symlink(outside, repo / "src")


def _unswap(repo: Path) -> None:
    os.unlink(repo / "src")
    os.rename(repo / "src.moved", repo / "src")


def test_a_parent_swapped_for_a_link_after_the_plan_stops_the_restore_writing_nothing_through_it(
    repo: Path, store: SnapshotStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    outside = _outside(tmp_path)
    before_outside = tree_state(outside)
    start, expected = _start_then_change(repo, store)
    real = store_module.apply_changes

    def swapped_first(*args: object, **kwargs: object) -> Applied:
        _swap(repo, outside)  # after the plan's checks, before the first change
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "apply_changes", swapped_first)
    with pytest.raises(RestoreStoppedError, match="src is now a symbolic link") as raised:
        store.restore(start, session_id="s")

    assert raised.value.path == "src"
    assert tree_state(outside) == before_outside  # nothing written, deleted or re-moded outside
    assert not [p for p in tree_state(repo) if ".agentcli-" in p]  # no temporary file left
    # The link removed (the folder back), a second restore finishes the job, and what the
    # store records is what git records.
    monkeypatch.setattr(store_module, "apply_changes", real)
    _unswap(repo)
    again = store.restore(start, session_id="s")
    assert again.matches_target
    assert tree_state(repo) == expected
    assert again.tree == git_add_all_tree(repo, tmp_path / "crosscheck")
    assert store.capture(session_id="s", reason="walk").tree == again.tree


def test_a_deletion_under_a_swapped_parent_deletes_nothing_outside(
    repo: Path, store: SnapshotStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    outside = _outside(tmp_path)
    before_outside = tree_state(outside)
    start = store.capture(session_id="s", reason="start", record_layout=True).snapshot
    assert start is not None
    expected = tree_state(repo)
    write(repo / "src" / "extra.py", "to be deleted by the restore\n")
    store.capture(session_id="s", reason="after bash", watched=True)
    real = store_module.apply_changes

    def swapped_first(*args: object, **kwargs: object) -> Applied:
        _swap(repo, outside)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "apply_changes", swapped_first)
    with pytest.raises(RestoreStoppedError, match="src is now a symbolic link"):
        store.restore(start, session_id="s")
    assert tree_state(outside) == before_outside  # outside/extra.py is still there

    monkeypatch.setattr(store_module, "apply_changes", real)
    _unswap(repo)
    again = store.restore(start, session_id="s")
    assert again.matches_target and tree_state(repo) == expected


def test_a_parent_swapped_once_the_writes_began_is_written_where_it_was_opened(
    repo: Path, store: SnapshotStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Once its folder is open, each write goes into that folder, wherever it has moved: never
    through a path resolved by name from the root again."""
    outside = _outside(tmp_path)
    before_outside = tree_state(outside)
    start, expected = _start_then_change(repo, store)
    real_write = restorewrites._write
    swapped: list[bool] = []

    def swapping_once(*args: object) -> os.stat_result | None:
        if not swapped:
            swapped.append(True)
            _swap(repo, outside)
        return real_write(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(restorewrites, "_write", swapping_once)
    try:
        store.restore(start, session_id="s")
    except RestoreStoppedError as error:
        assert error.path == "src"  # the layout step after the writes meets the link: stops too

    assert swapped
    assert tree_state(outside) == before_outside
    moved = tree_state(repo / "src.moved")
    for rel, held in expected.items():
        # Every write landed in the folder (its bytes; modes there are then the layout step's,
        # which sees `src.moved` as a folder the snapshot lacks, as it does the empty ones).
        if rel.startswith("src/") and held[0] != "dir":
            assert moved[rel.removeprefix("src/")][:2] == held[:2], rel

    monkeypatch.setattr(restorewrites, "_write", real_write)
    _unswap(repo)
    again = store.restore(start, session_id="s")
    assert again.matches_target and tree_state(repo) == expected
    assert again.tree == git_add_all_tree(repo, tmp_path / "crosscheck")


def test_every_folder_descriptor_is_closed_failures_included(
    repo: Path, store: SnapshotStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    opened: list[restorefolders.Folders] = []
    real_init = restorefolders.Folders.__init__

    def tracked(self: restorefolders.Folders, workspace: Path | str) -> None:
        real_init(self, workspace)
        opened.append(self)

    monkeypatch.setattr(restorefolders.Folders, "__init__", tracked)
    outside = _outside(tmp_path)
    start, _expected = _start_then_change(repo, store)
    real = store_module.apply_changes

    def swapped_first(*args: object, **kwargs: object) -> Applied:
        _swap(repo, outside)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "apply_changes", swapped_first)
    with pytest.raises(RestoreStoppedError):
        store.restore(start, session_id="s")
    monkeypatch.setattr(store_module, "apply_changes", real)
    _unswap(repo)
    assert store.restore(start, session_id="s").matches_target
    assert opened and all(not folders._fds for folders in opened)


def test_folders_are_opened_once_trimmed_past_the_bound_and_closed(tmp_path: Path) -> None:
    for i in range(restorefolders.OPEN_MAX + 10):
        (tmp_path / f"d{i}").mkdir()
    with restorefolders.Folders(tmp_path) as folders:
        first = folders.open("d0")
        assert first is not None and folders.open("d0") == first  # one descriptor per folder
        made = folders.open("new/deeper", create=True)
        assert made is not None and (tmp_path / "new" / "deeper").is_dir()
        assert folders.open("missing/below") is None
        held = [folders.open(f"d{i}") for i in range(restorefolders.OPEN_MAX + 10)]
        folders.trim()
        for fd in held:
            assert fd is not None
            with pytest.raises(OSError):
                os.fstat(fd)  # closed: at most OPEN_MAX are held at once
        os.symlink(tmp_path / "d1", tmp_path / "link")
        write(tmp_path / "file", "x\n")
        with pytest.raises(RestoreStoppedError, match="link is now a symbolic link"):
            folders.open("link/below", create=True)
        with pytest.raises(RestoreStoppedError, match="file is now a file"):
            folders.open("file")
        kept = folders.open("d2")
    assert kept is not None
    with pytest.raises(OSError):
        os.fstat(kept)
    assert not (tmp_path / "d1" / "below").exists()  # nothing made through the link
