"""The seed copied from the user's index: checked, whichever way it is loaded.

libgit2 loads the copy on a thread while this one checks its bytes when a CPU is free, and on
this thread otherwise (seed.py); both must drop the same entries, and a copy that fails its
checksum must never be trusted.
"""

from __future__ import annotations

import os
import struct
import threading
from pathlib import Path

import pytest

from agentcli.snapshots import SnapshotStore, seed
from agentcli.snapshots.seed import copy_user_index
from snaphelpers import blob_bytes, change_behind_flags, commit_all, git, git_add_all_tree, ls_tree, write


def _seed_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "agentcli-seed-load"]


@pytest.fixture(params=[True, False], ids=["load-on-a-thread", "load-here"])
def overlap(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The seed's load on a thread beside its checks (as with a CPU free), or here after them."""
    on_thread: bool = request.param
    monkeypatch.setattr(seed, "cpus_idle", lambda workers: on_thread)
    monkeypatch.setattr(seed, "worker_count", lambda: 2)  # a thread even on a one-CPU runner
    return on_thread


def test_both_ways_drop_flagged_and_converted_entries(
    repo: Path, data_dir: Path, tmp_path: Path, overlap: bool
) -> None:
    write(repo / ".gitattributes", "*.txt eol=crlf\n")
    write(repo / "notes.txt", "one\ntwo\n")
    commit_all(repo, "crlf on checkout")
    (repo / "notes.txt").unlink()
    git(repo, "checkout", "--", "notes.txt")  # now CRLF on disk, LF in the blob the index vouches for
    now = change_behind_flags(repo)
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    assert blob_bytes(store, entries["notes.txt"][1]) == b"one\r\ntwo\r\n"
    for path, content in now.items():
        assert blob_bytes(store, entries[path][1]) == content
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert store._shadow.seeded == ("thread" if overlap else "here")
    assert not _seed_threads()


def test_a_copy_that_fails_its_checksum_is_not_trusted(
    repo: Path, data_dir: Path, tmp_path: Path, overlap: bool
) -> None:
    # The user's index, altered behind git's back: src/app.py's entry gets the stat data of the
    # file as rewritten below (same size), keeping the old blob id, so trusting the copy would
    # record the old content for a changed file. The trailing checksum is left as it was.
    old = 1_600_000_000_000_000_000
    for path in repo.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(repo).parts:
            os.utime(path, ns=(old, old))  # older than the index: no entry is racily clean
    git(repo, "update-index", "--refresh")
    app = repo / "src" / "app.py"
    rewritten = app.read_bytes().replace(b"1", b"2")
    app.write_bytes(rewritten)
    os.utime(app, ns=(old, old))
    st = app.lstat()
    index_file = repo / ".git" / "index"
    raw = bytearray(index_file.read_bytes())
    entry = raw.index(b"src/app.py\0") - 62
    raw[entry : entry + 16] = struct.pack(">IIII", int(st.st_ctime), st.st_ctime_ns % 10**9, int(st.st_mtime), 0)
    raw[entry + 20 : entry + 24] = struct.pack(">I", st.st_ino & 0xFFFFFFFF)
    raw[entry + 36 : entry + 40] = struct.pack(">I", st.st_size)
    index_file.write_bytes(bytes(raw))
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    assert blob_bytes(store, entries["src/app.py"][1]) == rewritten
    assert store._shadow.seeded == "head"
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert not _seed_threads()


def test_a_failing_check_while_the_thread_loads_waits_for_it_and_seeds_from_head(
    repo: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seed, "cpus_idle", lambda workers: True)
    monkeypatch.setattr(seed, "worker_count", lambda: 2)

    def broken_scan(raw: bytes) -> bool | None:
        raise ValueError("scan failed")

    monkeypatch.setattr(seed, "any_flagged_entry", broken_scan)
    write(repo / "src" / "app.py", "uncommitted\n")
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    assert not _seed_threads()  # joined before the failure left the seed
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert {f.path for f in result.snapshot.files} == {"src/app.py"}  # type: ignore[union-attr]


def test_the_copy_keeps_the_bytes_and_the_mtime_of_the_file_read(repo: Path, tmp_path: Path) -> None:
    source = repo / ".git" / "index"
    os.utime(source, ns=(1_700_000_000_123_456_789, 1_700_000_000_987_654_321))
    target = tmp_path / "copy"

    raw = copy_user_index(source, target)

    assert raw == source.read_bytes() == target.read_bytes()
    assert target.stat().st_mtime_ns == 1_700_000_000_987_654_321  # what libgit2 judges racy entries by
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("copy")) == ["copy"]  # no temporary left
