"""Restore is mode- and folder-exact for the snapshots that record the layout.

A git tree holds only 644/755 files and no empty folders, so the store records the rest beside
the tree (modes other than the default, empty folders) at a session's start and around each
restore. Restoring such a snapshot brings back a 0600 file as 0600 (even one deleted since),
keeps and recreates the empty folders it had, and removes empty folders made after it.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from snaphelpers import git, write

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots.layout import scan_layout
from agentcli.snapshots.restore import umask


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _start(store: SnapshotStore) -> str:
    snap = store.capture(session_id="s", reason="session start", record_layout=True).snapshot
    assert snap is not None
    return snap.id


def test_a_private_file_comes_back_private_after_deletion(repo: Path, store: SnapshotStore) -> None:
    write(repo / "secrets.txt", "token\n")
    os.chmod(repo / "secrets.txt", 0o600)
    write(repo / "bin" / "tool", "#!/bin/sh\n")
    os.chmod(repo / "bin" / "tool", 0o700)
    start = _start(store)
    (repo / "secrets.txt").unlink()
    (repo / "bin" / "tool").unlink()
    store.capture(session_id="s", reason="after bash")
    store.restore(start, session_id="s")
    assert (repo / "secrets.txt").read_text() == "token\n" and _mode(repo / "secrets.txt") == 0o600
    assert _mode(repo / "bin" / "tool") == 0o700


def test_a_mode_changed_since_is_put_back(repo: Path, store: SnapshotStore) -> None:
    os.chmod(repo / "src" / "app.py", 0o640)
    start = _start(store)
    os.chmod(repo / "src" / "app.py", 0o666)
    write(repo / "src" / "app.py", "changed\n")
    store.capture(session_id="s", reason="after bash")
    store.restore(start, session_id="s")
    assert _mode(repo / "src" / "app.py") == 0o640


def test_empty_folders_are_kept_recreated_and_removed(repo: Path, store: SnapshotStore) -> None:
    (repo / "empty").mkdir()
    (repo / "gone" / "deeper").mkdir(parents=True)
    start = _start(store)
    write(repo / "empty" / "new.txt", "x\n")  # fills the pre-existing empty folder
    shutil.rmtree(repo / "gone")  # removes another
    (repo / "made-later").mkdir()  # and makes a new one
    store.capture(session_id="s", reason="after bash")
    store.restore(start, session_id="s")
    assert (repo / "empty").is_dir() and not any((repo / "empty").iterdir())
    assert (repo / "gone" / "deeper").is_dir()
    assert not (repo / "made-later").exists()


def test_undoing_a_restore_is_exact_too(repo: Path, store: SnapshotStore) -> None:
    start = _start(store)
    write(repo / "key.pem", "k\n")
    os.chmod(repo / "key.pem", 0o600)
    (repo / "cache").mkdir()
    store.capture(session_id="s", reason="after bash")
    result = store.restore(start, session_id="s")
    assert not (repo / "key.pem").exists() and not (repo / "cache").exists()
    store.restore(result.undo.id, session_id="s")
    assert _mode(repo / "key.pem") == 0o600 and (repo / "cache").is_dir()


def test_ignored_folders_are_not_walked_or_touched(repo: Path, store: SnapshotStore) -> None:
    (repo / "__pycache__" / "empty-inside").mkdir(parents=True)
    start = _start(store)
    shutil.rmtree(repo / "__pycache__")
    (repo / "__pycache__").mkdir()
    write(repo / "__pycache__" / "x.pyc", b"\x00")
    store.restore(start, session_id="s")
    assert (repo / "__pycache__" / "x.pyc").exists() and not (repo / "__pycache__" / "empty-inside").exists()


def test_an_edit_no_capture_saw_is_in_the_undo_point(repo: Path, store: SnapshotStore) -> None:
    start = _start(store)
    write(repo / "src" / "app.py", "model's edit\n")
    store.capture(session_id="s", reason="after write_file", paths_hint=["src/app.py"])
    # The user edits another file while the model thinks: same size, same second, no capture.
    before = (repo / "src" / "util.py").read_text()
    write(repo / "src" / "util.py", before.replace("1", "2"))
    write(repo / "src" / "app.py", "model's second edit\n")
    store.capture(session_id="s", reason="after write_file", paths_hint=["src/app.py"])
    result = store.restore(start, session_id="s")
    assert (repo / "src" / "util.py").read_text() == before
    store.restore(result.undo.id, session_id="s")
    assert (repo / "src" / "util.py").read_text() == before.replace("1", "2")


@pytest.mark.may_skip(reason="the watcher uses inotify, which only Linux has")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")
def test_a_watching_store_judges_modes_by_the_ignore_file_the_restore_brings_back(repo: Path, data_dir: Path) -> None:
    # The layout is kept from the watcher's paths; a restored `.gitignore` changes what is
    # ignored everywhere, so the modes are judged against a fresh scan, as without a watcher.
    write(repo / "keys" / "f.key", "k\n")
    os.chmod(repo / "keys" / "f.key", 0o600)
    write(repo / ".gitignore", "*.key\n")
    git(repo, "add", "-f", "keys/f.key", ".gitignore")  # tracked, so in every snapshot
    git(repo, "commit", "-q", "-m", "a key")
    store = SnapshotStore(repo, data_dir, watch=True)
    try:
        start = _start(store)
        assert store.watching
        (repo / ".gitignore").unlink()
        write(repo / "src" / "app.py", "changed\n")
        store.capture(session_id="s", reason="after bash", watched=True, record_layout=True)
        store.restore(start, session_id="s")
        assert (repo / ".gitignore").read_text() == "*.key\n"
        assert _mode(repo / "keys" / "f.key") == 0o600  # ignored again: left as it is
        assert store.layout_record(store.timeline("s")[-1].id) == scan_layout(repo, umask())
    finally:
        store.close()


@pytest.mark.parametrize("watch", [False, True], ids=["walked", "watched"])
def test_names_whose_bytes_are_not_utf8_are_captured_and_restored_as_they_were(
    repo: Path, data_dir: Path, tmp_path: Path, watch: bool
) -> None:
    """git records a file name's bytes as they are; a capture must not fail on one that is not UTF-8."""
    from snaphelpers import git_add_all_tree

    root = os.fsencode(repo)
    os.mkdir(root + b"/d\xfd")
    with open(root + b"/d\xfd/run\xfc.sh", "wb") as handle:
        handle.write(b"#!/bin/sh\n")
    os.chmod(root + b"/d\xfd/run\xfc.sh", 0o700)
    store = SnapshotStore(repo, data_dir, watch=watch)
    try:
        start = _start(store)
        assert store.capture(session_id="s", reason="walk").tree == git_add_all_tree(repo, tmp_path / "git")
        with open(root + b"/bad\xff.txt", "wb") as handle:
            handle.write(b"new\n")
        os.unlink(root + b"/d\xfd/run\xfc.sh")
        changed = store.capture(session_id="s", reason="after bash", watched=watch).snapshot
        assert changed is not None
        assert {(f.path, f.status) for f in changed.files} == {
            ("bad\\xff.txt", "added"), ("d\\xfd/run\\xfc.sh", "deleted")}
        store.restore(start, session_id="s")
        assert not os.path.lexists(root + b"/bad\xff.txt")
        assert _mode(Path(os.fsdecode(root + b"/d\xfd/run\xfc.sh"))) == 0o700
    finally:
        store.close()
