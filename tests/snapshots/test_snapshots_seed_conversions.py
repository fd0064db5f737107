"""A seeded first snapshot holds the bytes on disk, even where git converts files on checkout.

The shadow index starts as a copy of the user's index, whose stat data vouches for the *cleaned*
blob (line endings normalized, a filter applied). For those paths the store must look at the
file itself; everywhere else it keeps the user's stat cache (the point of seeding).
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots.conversions import converted_entries
from snaphelpers import blob_bytes, commit_all, git, ls_tree, write

ROT13 = "tr A-Za-z N-ZA-Mn-za-m"
"""A clean/smudge filter that keeps every file's size: only the attribute tells it ran."""


def _converted_repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "filter.rot.clean", ROT13)
    git(ws, "config", "filter.rot.smudge", ROT13)
    write(
        ws / ".gitattributes",
        "*.bat eol=crlf\n*.txt text=auto\n*.secret filter=rot\nplain/** -text\n",
    )
    write(ws / "build.bat", "@echo off\necho one\necho two\n")
    write(ws / "notes.txt", b"windows\r\nline endings\r\n")
    write(ws / "key.secret", "Hello World\n")
    write(ws / "plain" / "data.txt", b"kept\r\nas is\r\n")
    write(ws / "src" / "app.py", "print('unconverted')\n")
    commit_all(ws, "converted files")
    # Check every file out again through the attributes, then refresh the user's index: its
    # stat data now vouches for these exact files, and its blobs are the cleaned content.
    for rel in ("build.bat", "notes.txt", "key.secret"):
        (ws / rel).unlink()
    git(ws, "checkout", "--", ".")
    git(ws, "status", "--porcelain")
    return ws


def _workspace_files(ws: Path) -> dict[str, bytes]:
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in ws.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(ws).parts
    }


def test_first_snapshot_records_converted_files_as_they_are_on_disk(tmp_path: Path) -> None:
    ws = _converted_repo(tmp_path)
    on_disk = _workspace_files(ws)
    # The premise: checkout converted these, so the user's blobs differ from the files.
    assert on_disk["build.bat"] == b"@echo off\r\necho one\r\necho two\r\n"
    assert git(ws, "cat-file", "blob", ":key.secret") == "Uryyb Jbeyq\n"  # the cleaned blob
    assert on_disk["key.secret"] == b"Hello World\n"
    assert git(ws, "status", "--porcelain") == ""

    store = SnapshotStore(ws, tmp_path / "data")
    tree = store.capture(session_id="s", reason="start").tree

    entries = ls_tree(store, tree)
    assert sorted(entries) == sorted(on_disk)
    for rel, data in on_disk.items():
        assert blob_bytes(store, entries[rel][1]) == data, rel


def test_restoring_the_first_snapshot_leaves_converted_files_untouched(tmp_path: Path) -> None:
    ws = _converted_repo(tmp_path)
    on_disk = _workspace_files(ws)
    store = SnapshotStore(ws, tmp_path / "data")
    first = store.capture(session_id="s", reason="start").snapshot
    assert first is not None
    write(ws / "src" / "app.py", "print('changed')\n")
    store.capture(session_id="s", reason="edit")

    result = store.restore(first, session_id="s")

    assert [c.path for c in result.plan.changes] == ["src/app.py"]
    assert _workspace_files(ws) == on_disk


def test_only_converted_paths_are_hashed_again(tmp_path: Path) -> None:
    """The rest keep the seeded stat cache, which is what makes a seeded first capture fast."""
    ws = _converted_repo(tmp_path)
    user = pygit2.Repository(str(ws))
    raw = (ws / ".git" / "index").read_bytes()

    converted = converted_entries(user, ws / ".git", raw, pygit2.Index(str(ws / ".git" / "index")))

    # notes.txt went in as CRLF and came out LF (text=auto, native eol): its file is its blob.
    assert sorted(converted) == ["build.bat", "key.secret"]


def test_without_attributes_or_autocrlf_nothing_is_distrusted(repo: Path) -> None:
    user = pygit2.Repository(str(repo))
    raw = (repo / ".git" / "index").read_bytes()
    index = pygit2.Index(str(repo / ".git" / "index"))
    assert converted_entries(user, repo / ".git", raw, index) == []
    git(repo, "config", "core.autocrlf", "input")
    write(repo / "dos.txt", b"a\r\nb\r\n")
    git(repo, "add", "dos.txt")
    index = pygit2.Index(str(repo / ".git" / "index"))
    assert converted_entries(user, repo / ".git", (repo / ".git" / "index").read_bytes(), index) == ["dos.txt"]
