"""A restore in a watching store takes two shortcuts; each must record what a capture would.

- The undo point: when the watcher saw nothing since the last capture, the index's tree is the
  workspace, and no refresh runs. A change another process made after that capture must still
  be in the undo point, and so must a file an exclude rule outside the tree stopped ignoring.
- The result: when the watcher saw only the restore's own paths, the index is set from what it
  wrote. The tree recorded must equal a full capture made afterwards, and a file another
  process writes while the restore runs must be in it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from snaphelpers import git_add_all_tree, ls_tree, write

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots import store as store_module
from agentcli.snapshots.capture import IndexRefresher
from agentcli.snapshots.layout import scan_layout
from agentcli.snapshots.restore import Applied, umask
from agentcli.snapshots.restored import only_ours
from agentcli.snapshots.watcher import TreeWatcher

pytestmark = [
    pytest.mark.may_skip(reason="the watcher uses inotify, which only Linux has"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only"),
]


@pytest.fixture
def watching(repo: Path, data_dir: Path) -> Iterator[SnapshotStore]:
    store = SnapshotStore(repo, data_dir, watch=True)
    yield store
    store.close()


@pytest.fixture
def refreshes(monkeypatch: pytest.MonkeyPatch) -> list[list[str] | None]:
    """Records every refresh of the index (the real one runs): the shortcuts make none."""
    calls: list[list[str] | None] = []
    real = IndexRefresher.refresh

    def counting(self: IndexRefresher, paths_hint: list[str] | None = None, **kwargs: bool) -> object:
        calls.append(paths_hint)
        return real(self, paths_hint, **kwargs)

    monkeypatch.setattr(IndexRefresher, "refresh", counting)
    return calls


def _other_process_writes(path: Path, text: str) -> None:
    subprocess.run([sys.executable, "-c", f"open({str(path)!r}, 'w').write({text!r})"], check=True)


def _start(store: SnapshotStore) -> str:
    snap = store.capture(session_id="s", reason="session start", record_layout=True).snapshot
    assert snap is not None
    assert store.watching
    return snap.id


def test_a_change_made_after_the_last_capture_is_in_the_undo_point(
    repo: Path, watching: SnapshotStore, refreshes: list[list[str] | None]
) -> None:
    start = _start(watching)
    write(repo / "src" / "app.py", "the agent's edit\n")
    watching.capture(session_id="s", reason="after write_file", paths_hint=["src/app.py"], watched=True)
    _other_process_writes(repo / "src" / "util.py", "X = 'edited in another terminal'\n")
    refreshes.clear()
    result = watching.restore(start, session_id="s")
    assert refreshes, "the watcher saw a change: the undo point must look at it"
    undo_files = ls_tree(watching, result.undo.tree)
    util = watching._shadow.repo[undo_files["src/util.py"][1]]
    assert util.data == b"X = 'edited in another terminal'\n"  # type: ignore[attr-defined]
    watching.restore(result.undo.id, session_id="s")
    assert (repo / "src" / "util.py").read_text() == "X = 'edited in another terminal'\n"
    assert (repo / "src" / "app.py").read_text() == "the agent's edit\n"


def test_a_quiet_workspace_gives_an_undo_point_without_a_refresh(
    repo: Path, watching: SnapshotStore, refreshes: list[list[str] | None]
) -> None:
    start = _start(watching)
    write(repo / "src" / "app.py", "the agent's edit\n")
    last = watching.capture(session_id="s", reason="after bash", watched=True)
    assert last.snapshot is not None
    refreshes.clear()
    result = watching.restore(start, session_id="s")
    assert refreshes == []  # neither the undo point nor the result looked at the files again
    assert result.undo.id == last.snapshot.id  # the last capture is the undo point
    assert watching.layout_record(result.undo.id) is not None  # and it is mode-exact
    assert result.matches_target
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 1\n"


def test_a_file_an_outside_exclude_stops_ignoring_is_in_the_undo_point(repo: Path, watching: SnapshotStore) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    write(exclude, "notes.txt\n")
    write(repo / "notes.txt", "kept out until the exclude changes\n")
    start = _start(watching)
    write(repo / "src" / "app.py", "edit\n")
    watching.capture(session_id="s", reason="after bash", watched=True)
    write(exclude, "")  # inside .git: the watcher cannot see it
    result = watching.restore(start, session_id="s")
    assert "notes.txt" in ls_tree(watching, result.undo.tree)


def test_the_recorded_result_equals_a_full_capture_afterwards(
    repo: Path, watching: SnapshotStore, tmp_path: Path, refreshes: list[list[str] | None]
) -> None:
    write(repo / "docs" / "guide.md", "guide\n")
    write(repo / "tool.sh", "#!/bin/sh\n", mode=0o755)
    os.symlink("src/app.py", repo / "link")
    write(repo / "secret.txt", "private\n", mode=0o600)
    (repo / "empty").mkdir()
    start = _start(watching)
    # Every kind of change a restore undoes: edits, a deletion, a new folder, a file where a
    # folder was, a mode flip, a symlink retargeted.
    write(repo / "src" / "app.py", "changed\n")
    (repo / "README.md").unlink()
    write(repo / "new" / "deep" / "file.txt", "new\n")
    for name in os.listdir(repo / "docs"):
        os.unlink(repo / "docs" / name)
    os.rmdir(repo / "docs")
    write(repo / "docs", "now a file\n")
    os.chmod(repo / "tool.sh", 0o644)
    os.unlink(repo / "link")
    os.symlink("README.md", repo / "link")
    (repo / "secret.txt").unlink()
    (repo / "empty").rmdir()
    (repo / "made" / "later").mkdir(parents=True)
    watching.capture(session_id="s", reason="after bash", watched=True)
    refreshes.clear()
    result = watching.restore(start, session_id="s")
    assert refreshes == []
    assert result.matches_target
    assert result.after is not None and result.after.tree == result.tree
    assert {f.path for f in result.after.files} >= {"src/app.py", "README.md", "new/deep/file.txt", "tool.sh"}
    assert stat.S_IMODE(os.lstat(repo / "secret.txt").st_mode) == 0o600
    assert (repo / "empty").is_dir() and not (repo / "made").exists()
    # The layout recorded with the result, kept from the watcher's paths, is what a scan finds.
    assert watching.layout_record(result.after.id) == scan_layout(repo, umask())
    walked = watching.capture(session_id="s", reason="walk")  # not watched: walks the tree
    assert walked.snapshot is None and walked.tree == result.tree
    assert result.tree == git_add_all_tree(repo, tmp_path / "crosscheck")
    fresh = SnapshotStore(repo, tmp_path / "fresh-data")
    assert fresh.capture(session_id="x", reason="fresh").tree == result.tree
    fresh.close()


def test_a_file_written_by_another_process_during_the_restore_is_recorded(
    repo: Path, watching: SnapshotStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = _start(watching)
    write(repo / "src" / "app.py", "changed\n")
    watching.capture(session_id="s", reason="after bash", watched=True)
    real = store_module.apply_changes

    def and_meanwhile(*args: object, **kwargs: object) -> Applied:
        applied = real(*args, **kwargs)  # type: ignore[arg-type]
        _other_process_writes(repo / "src" / "util.py", "meanwhile\n")
        _other_process_writes(repo / "src" / "made.py", "made meanwhile\n")
        return applied

    monkeypatch.setattr(store_module, "apply_changes", and_meanwhile)
    result = watching.restore(start, session_id="s")
    files = ls_tree(watching, result.tree)
    assert "src/made.py" in files
    assert watching._shadow.repo[files["src/util.py"][1]].data == b"meanwhile\n"  # type: ignore[attr-defined]
    assert not result.matches_target
    assert watching.capture(session_id="s", reason="walk").tree == result.tree


def test_a_folder_the_restore_made_must_hold_only_what_it_wrote(tmp_path: Path) -> None:
    write(tmp_path / "new" / "a.txt", "ours\n")
    applied = Applied(written=["new/a.txt"], deleted=[], chmodded=[])
    assert only_ours(tmp_path, {"new", "new/a.txt", "new/.a.txt.agentcli-0123abcd"}, applied, [])
    # Written into the folder before its watch existed: never reported, found by listing it.
    write(tmp_path / "new" / "b.txt", "theirs\n")
    assert not only_ours(tmp_path, {"new", "new/a.txt"}, applied, [])
    assert not only_ours(tmp_path, {"elsewhere.txt"}, applied, [])
    assert not only_ours(tmp_path, {"new/.b.txt.agentcli-0123abcd"}, applied, [])


def test_a_file_the_restore_deleted_and_another_process_made_again_is_not_ours(tmp_path: Path) -> None:
    applied = Applied(written=[], deleted=["old.txt"], chmodded=[])
    assert only_ours(tmp_path, {"old.txt"}, applied, [])
    write(tmp_path / "old.txt", "made again meanwhile\n")
    assert not only_ours(tmp_path, {"old.txt"}, applied, [])
    # A file the restore replaced by a folder it wrote into: the folder must hold only its files.
    replaced = Applied(written=["docs/guide.md"], deleted=["docs"], chmodded=[])
    write(tmp_path / "docs" / "guide.md", "guide\n")
    assert only_ours(tmp_path, {"docs", "docs/guide.md"}, replaced, [])
    write(tmp_path / "docs" / "theirs.md", "put there before the folder was watched\n")
    assert not only_ours(tmp_path, {"docs", "docs/guide.md"}, replaced, [])


def test_asking_whether_the_workspace_is_quiet_loses_no_change(repo: Path) -> None:
    watcher = TreeWatcher(repo)
    assert watcher.start()
    try:
        assert watcher.quiet()
        write(repo / "src" / "app.py", "changed\n")
        assert not watcher.quiet()
        assert not watcher.quiet()  # asking again changes nothing
        write(repo / ".gitignore", "*.tmp\n")
        taken = watcher.take()
        assert taken is not None and {"src/app.py", ".gitignore"} <= taken.paths and taken.ignore_rules_changed
        assert watcher.quiet()  # handed out: the next take starts afresh
        watcher.give_back(taken)  # its taker did not use it after all
        again = watcher.take()
        assert again is not None and again.paths == taken.paths and again.ignore_rules_changed
    finally:
        watcher.close()


def test_a_watcher_that_lost_events_during_the_restore_makes_the_result_a_walk(
    repo: Path, watching: SnapshotStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = _start(watching)
    write(repo / "src" / "app.py", "changed\n")
    watching.capture(session_id="s", reason="after bash", watched=True)
    real = store_module.apply_changes

    def and_meanwhile(*args: object, **kwargs: object) -> Applied:
        applied = real(*args, **kwargs)  # type: ignore[arg-type]
        for i in range(6):  # more than the watcher keeps: it gives up on this take
            _other_process_writes(repo / "src" / f"meanwhile{i}.txt", f"{i}\n")
        return applied

    monkeypatch.setattr(store_module, "apply_changes", and_meanwhile)
    assert watching._watcher is not None
    watching._watcher._max_hints = 3
    result = watching.restore(start, session_id="s")
    assert {f"src/meanwhile{i}.txt" for i in range(6)} <= set(ls_tree(watching, result.tree))


def test_each_restore_reads_the_umask_at_its_start(repo: Path, watching: SnapshotStore) -> None:
    # A restore reads the umask once and judges its writes, layout looks and layout step by it;
    # the next restore reads it again, so a umask changed in between is the one that counts.
    start = _start(watching)
    modes: list[int] = []
    for mask in (0o022, 0o077):
        (repo / "src" / "util.py").unlink()
        watching.capture(session_id="s", reason="after bash", watched=True)
        old = os.umask(mask)
        try:
            result = watching.restore(start, session_id="s")
            assert result.matches_target and result.after is not None
            assert watching.layout_record(result.after.id) == scan_layout(repo, mask)
        finally:
            os.umask(old)
        modes.append(stat.S_IMODE(os.lstat(repo / "src" / "util.py").st_mode))
    assert modes == [0o644, 0o600]


def test_a_chmod_by_another_process_between_the_write_and_the_drain_reaches_the_layout(
    repo: Path, watching: SnapshotStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layout cache learns each written file from its write's descriptor; a chmod made by
    someone else after that write is reported only as an attribute change on a path the
    restore wrote, and must be looked at, not taken for the restore's own event."""
    start = _start(watching)
    write(repo / "src" / "app.py", "changed\n")
    write(repo / "src" / "util.py", "changed too\n")
    watching.capture(session_id="s", reason="after bash", watched=True)
    real = store_module.apply_changes

    def and_meanwhile(*args: object, **kwargs: object) -> Applied:
        applied = real(*args, **kwargs)  # type: ignore[arg-type]
        subprocess.run(["chmod", "600", str(repo / "src" / "app.py")], check=True)
        return applied

    monkeypatch.setattr(store_module, "apply_changes", and_meanwhile)
    result = watching.restore(start, session_id="s")
    assert result.after is not None
    assert stat.S_IMODE(os.lstat(repo / "src" / "app.py").st_mode) == 0o600
    mask = umask()
    assert watching.layout_record(result.after.id) == scan_layout(repo, mask)
    assert (watching.layout_record(result.after.id) or scan_layout(repo, mask)).modes.get("src/app.py") == 0o600
    # The next recorded layout (from the cache while the watcher vouches) agrees with a scan.
    monkeypatch.setattr(store_module, "apply_changes", real)
    write(repo / "README.md", "touched\n")
    later = watching.capture(session_id="s", reason="later", watched=True, record_layout=True)
    assert later.snapshot is not None
    assert watching.layout_record(later.snapshot.id) == scan_layout(repo, mask)
