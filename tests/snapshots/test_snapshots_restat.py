"""Every file touched, few changed: the bulk stat refresh records exactly what a hash of each would."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from snaphelpers import commit_all, git, git_add_all_tree, write

from agentcli.snapshots import SnapshotStore, restat
from agentcli.snapshots.restat import MIN_ENTRIES, STREAM_BYTES, mostly_stale


def _many_files(tmp_path: Path, count: int) -> Path:
    ws = tmp_path / "ws"
    for i in range(count):
        write(ws / f"d{i % 7}" / f"f{i:04d}.txt", f"file {i}\n" * (1 + i % 5))
    git(ws, "init", "-q", "-b", "main")
    commit_all(ws, "many")
    return ws


def _touch_all(ws: Path, stamp: int) -> None:
    for path in ws.rglob("*.txt"):
        os.utime(path, (stamp, stamp))


def test_touched_files_are_refreshed_and_same_size_edits_still_recorded(tmp_path: Path) -> None:
    ws = _many_files(tmp_path, MIN_ENTRIES + 100)
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    _touch_all(ws, 1_700_000_000)
    # Same size, same mtime as its neighbours, different bytes: only hashing can tell.
    same_size = ws / "d3" / "f0003.txt"
    same_size.write_bytes(same_size.read_bytes().replace(b"file", b"FILE"))
    os.utime(same_size, (1_700_000_000, 1_700_000_000))
    write(ws / "d1" / "f0001.txt", "longer than before\n" * 3)
    (ws / "d2" / "f0002.txt").chmod(0o755)
    assert mostly_stale(store._shadow.index(), ws)  # the bulk pass runs

    result = store.capture(session_id="s", reason="touched")

    assert result.snapshot is not None
    assert sorted(f.path for f in result.snapshot.files) == ["d1/f0001.txt", "d2/f0002.txt", "d3/f0003.txt"]
    assert result.tree == git_add_all_tree(ws, tmp_path / "x")
    # The untouched-content files carry their new stat data: a shadow `git diff-files` (which
    # trusts the index's stat cache) finds nothing to look at.
    env = {"GIT_DIR": str(store.path), "GIT_WORK_TREE": str(ws), "GIT_INDEX_FILE": str(store.path / "index")}
    store.close()
    store.capture(session_id="s", reason="reopened")  # unpacks the index again
    debug = git(ws, "ls-files", "--debug", "d4/f0004.txt", env=env)
    assert "mtime: 1700000000:" in debug
    assert git(ws, "diff-files", "--name-only", env=env) == ""


def test_a_few_touched_files_are_left_to_libgit2(tmp_path: Path) -> None:
    ws = _many_files(tmp_path, MIN_ENTRIES + 10)
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    os.utime(ws / "d0" / "f0000.txt", (1_700_000_000, 1_700_000_000))
    index = store._shadow.index()
    assert not mostly_stale(index, ws)
    assert store.capture(session_id="s", reason="touched").snapshot is None


def test_the_bulk_pass_hashes_the_bytes_as_git_does_big_files_and_links_included(tmp_path: Path) -> None:
    """Each way the bulk pass reads a file (whole, or streamed past STREAM_BYTES) gives git's id:
    unchanged ones are refreshed, same-size edits recorded, a link swapped in for a file left to
    the diff."""
    ws = _many_files(tmp_path, MIN_ENTRIES + 20)
    big = bytes(range(256)) * ((STREAM_BYTES // 256) + 3)  # past the streaming threshold
    write(ws / "big" / "same.bin", big)
    write(ws / "big" / "edited.bin", big)
    write(ws / "crlf.txt", b"one\r\ntwo\r\n")  # the raw bytes are recorded: no filter on the way
    commit_all(ws, "big files")
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    _touch_all(ws, 1_700_000_000)
    for path in (ws / "big").iterdir():
        os.utime(path, (1_700_000_000, 1_700_000_000))
    os.utime(ws / "crlf.txt", (1_700_000_000, 1_700_000_000))
    edited = ws / "big" / "edited.bin"
    edited.write_bytes(big[:-1] + b"\x00")  # same size, last byte differs
    os.utime(edited, (1_700_000_000, 1_700_000_000))
    linked = ws / "d5" / "f0005.txt"
    linked.unlink()
    linked.symlink_to("f0012.txt")
    assert mostly_stale(store._shadow.index(), ws)

    result = store.capture(session_id="s", reason="touched")

    assert result.snapshot is not None
    assert sorted(f.path for f in result.snapshot.files) == ["big/edited.bin", "d5/f0005.txt"]
    assert result.tree == git_add_all_tree(ws, tmp_path / "x")
    env = {"GIT_DIR": str(store.path), "GIT_WORK_TREE": str(ws), "GIT_INDEX_FILE": str(store.path / "index")}
    store.close()
    store.capture(session_id="s", reason="reopened")
    assert git(ws, "diff-files", "--name-only", env=env) == ""  # big/same.bin and crlf.txt refreshed too


def test_a_file_swapped_for_a_fifo_after_its_lstat_neither_blocks_nor_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _many_files(tmp_path, MIN_ENTRIES + 1)
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    _touch_all(ws, 1_700_000_000)
    victim = ws / "d0" / "f0000.txt"
    original = restat._stale_records

    def swapping(records: restat.Records, root: bytes) -> Iterator[restat._Candidate]:
        for candidate in original(records, root):
            if candidate[1] == os.fsencode(victim):  # between its lstat and its read
                victim.unlink()
                os.mkfifo(victim)
            yield candidate

    monkeypatch.setattr(restat, "_stale_records", swapping)
    assert restat.refresh_touched(store._shadow.index(), ws) == MIN_ENTRIES  # all but the FIFO
    store.close()


@pytest.mark.parametrize("copy", [True, False], ids=["one-copy", "field-by-field"])
def test_refreshed_entries_carry_every_stat_field_of_their_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copy: bool
) -> None:
    if not copy:  # a layout the one copy does not fit: the fields are set one by one
        monkeypatch.setattr(restat, "_STAT_HEAD", struct.Struct("=iIiIIIIII"))
    ws = _many_files(tmp_path, MIN_ENTRIES + 3)
    (ws / "d1" / "f0001.txt").chmod(0o755)
    commit_all(ws, "an executable")
    store = SnapshotStore(ws, tmp_path / "data")
    store.capture(session_id="s", reason="start")
    _touch_all(ws, 1_700_000_123)
    index = store._shadow.index()
    modes = {e.path: e.mode for e in index}
    assert restat.refresh_touched(index, ws) == MIN_ENTRIES + 3
    raw = index._index
    for i in range(len(index)):
        entry = pygit2.C.git_index_get_byindex(raw, i)
        path = pygit2.ffi.string(entry.path).decode()
        st = os.lstat(ws / path)
        recorded = (
            entry.ctime.seconds, entry.ctime.nanoseconds, entry.mtime.seconds, entry.mtime.nanoseconds,
            entry.dev, entry.ino, entry.mode, entry.uid, entry.gid, entry.file_size,
        )
        assert recorded == (
            st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9, 1_700_000_123, 0,
            st.st_dev & 0xFFFFFFFF, st.st_ino & 0xFFFFFFFF, modes[path], st.st_uid, st.st_gid, st.st_size,
        ), path
    assert modes["d1/f0001.txt"] == 0o100755
    store.close()
