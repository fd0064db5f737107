"""Files entered by `rawadd.py` equal what libgit2's `Index.add(path)` enters, stat data included.

A store whose captures add through `rawadd.add_files` and one whose captures leave every path to
`Index.add` (the code before it) see the same random file operations; after each batch their
trees and their index entries (mode, id, size, times, device, inode, owner) must match. A known set of
changes is also compared with `git add -A`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snaphelpers import commit_all, git, git_add_all_tree, write
from test_snapshots_watcher import _fresh_workspace, apply, ops

import agentcli.snapshots.capture as capture
from agentcli.snapshots import SnapshotStore
from agentcli.snapshots.rawadd import STREAM_BYTES, add_files


def _entries(store: SnapshotStore) -> dict[str, tuple[object, ...]]:
    store._refresher.flush_index()
    index = pygit2.Index(str(store.path / "index"))
    out: dict[str, tuple[object, ...]] = {}
    for e in index:
        out[e.path] = (e.mode, str(e.id))
    raw = index._index
    for i in range(len(index)):
        c = pygit2.ffi.cast("git_index_entry *", pygit2.C.git_index_get_byindex(raw, i))
        path = pygit2.ffi.string(c.path).decode()
        out[path] += (c.file_size, c.mtime.seconds, c.mtime.nanoseconds, c.ctime.seconds, c.dev, c.ino, c.uid, c.gid)
    return out


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=st.lists(st.lists(ops, min_size=1, max_size=5), min_size=1, max_size=4))
def test_raw_adds_enter_what_libgit2_enters(
    batches: list[list[tuple[object, ...]]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("rawadd")
    ws = _fresh_workspace(root)
    raw_store = SnapshotStore(ws, root / "raw", max_untracked_dir_files=2)
    lib_store = SnapshotStore(ws, root / "lib", max_untracked_dir_files=2)
    try:
        with pytest.MonkeyPatch.context() as mp:
            for batch in [[], *batches]:
                for op in batch:
                    apply(ws, op)
                mp.setattr(capture, "add_files", add_files)
                from_raw = raw_store.capture(session_id="s", reason="walk")
                mp.setattr(capture, "add_files", lambda repo, index, workspace, paths: paths)
                from_lib = lib_store.capture(session_id="s", reason="walk")
                assert from_raw.tree == from_lib.tree, batch
                assert _entries(raw_store) == _entries(lib_store), batch
    finally:
        raw_store.close()
        lib_store.close()
        shutil.rmtree(root, ignore_errors=True)


def _captured_workspace(tmp_path: Path) -> tuple[Path, SnapshotStore]:
    """A committed one-file workspace and a store that has captured it once."""
    ws = tmp_path / "ws"
    write(ws / "a.txt", "a\n")
    git(ws, "init", "-q", "-b", "main")
    commit_all(ws, "base")
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    return ws, store


def test_raw_adds_keep_exec_bits_and_leave_links_big_files_and_repositories_to_libgit2(tmp_path: Path) -> None:
    ws, store = _captured_workspace(tmp_path)
    write(ws / "run.sh", "#!/bin/sh\n", mode=0o755)
    write(ws / "a.txt", "b\n")  # same size, new bytes
    os.symlink("a.txt", ws / "link")
    write(ws / "big.bin", b"x" * (STREAM_BYTES + 1))
    write(ws / "crlf.txt", b"one\r\ntwo\r\n")
    nested = ws / "vendored"
    write(nested / "inner.txt", "inner\n")
    git(nested, "init", "-q", "-b", "main")
    commit_all(nested, "inner")
    shadow = store._shadow
    index = shadow.index()
    rest = add_files(shadow.repo, index, ws, ["run.sh", "a.txt", "link", "big.bin", "crlf.txt", "vendored", "gone"])
    assert rest == ["link", "big.bin", "vendored", "gone"]
    assert index["run.sh"].mode == 0o100755 and index["a.txt"].mode == 0o100644
    index.read(True)  # forget; the capture does it all

    result = store.capture(session_id="s", reason="walk")

    assert result.tree == git_add_all_tree(ws, tmp_path / "git")
    store._refresher.flush_index()
    # The stat data recorded let git itself find every entry unchanged.
    env = {"GIT_DIR": str(store.path), "GIT_WORK_TREE": str(ws), "GIT_INDEX_FILE": str(store.path / "index")}
    assert git(ws, "diff-files", "--name-only", env=env) == ""


def test_a_shadow_that_distrusts_file_modes_leaves_every_path_to_libgit2(tmp_path: Path) -> None:
    ws, store = _captured_workspace(tmp_path)
    write(ws / "run.sh", "#!/bin/sh\n", mode=0o755)
    shadow = store._shadow
    shadow.repo.config["core.filemode"] = False  # as on a file system without exec bits
    assert add_files(shadow.repo, shadow.index(), ws, ["run.sh", "a.txt"]) == ["run.sh", "a.txt"]
