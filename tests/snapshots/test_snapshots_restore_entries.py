"""A restore enters the files it wrote from what it knows (the blob, the descriptor's stat data)
instead of `Index.add` reading and hashing each again. Each entry must be the one `Index.add`
would make, field by field, including for a file rewritten within the same second (racy git)
and for a file another writer changed after the restore wrote it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pygit2
import pytest
from pygit2 import C, ffi
from snaphelpers import write

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots.models import PlannedChange
from agentcli.snapshots.restore import apply_changes
from agentcli.snapshots.restored import unchecked_tree_writes, update_index


def _entry(index: pygit2.Index, path: str) -> dict[str, object]:
    """Every field of an index entry, as libgit2 holds it."""
    raw = C.git_index_get_bypath(index._index, os.fsencode(path), 0)
    assert raw != ffi.NULL, f"{path} is not in the index"
    return {
        "ctime": (raw.ctime.seconds, raw.ctime.nanoseconds),
        "mtime": (raw.mtime.seconds, raw.mtime.nanoseconds),
        "dev": raw.dev,
        "ino": raw.ino,
        "mode": raw.mode,
        "uid": raw.uid,
        "gid": raw.gid,
        "file_size": raw.file_size,
        "id": bytes(ffi.buffer(ffi.addressof(raw, "id"), 20)).hex(),
        "flags": raw.flags,
        "flags_extended": raw.flags_extended,
    }


@pytest.fixture
def shadow(tmp_path: Path) -> tuple[pygit2.Repository, Path]:
    """A repository whose workdir is a plain folder, with filters off as the store's shadow has them."""
    ws = tmp_path / "ws"
    ws.mkdir()
    repo = pygit2.init_repository(str(tmp_path / "shadow.git"), bare=True)
    repo.workdir = str(ws)
    (tmp_path / "shadow.git" / "info").mkdir(exist_ok=True)
    (tmp_path / "shadow.git" / "info" / "attributes").write_text("* -text -filter -ident -working-tree-encoding\n")
    return repo, ws


def _restore(repo: pygit2.Repository, ws: Path, files: dict[str, tuple[bytes, str]]) -> pygit2.Index:
    """Writes `files` (path -> content, kind) as a restore does; returns an index set from it."""
    changes = [
        PlannedChange(path=path, action="write", kind=kind, new_id=str(repo.create_blob(data)))  # type: ignore[arg-type]
        for path, (data, kind) in sorted(files.items())
    ]
    applied = apply_changes(repo, ws, changes)
    assert set(applied.files) == {p for p, (_, kind) in files.items() if kind != "symlink"}
    ours = repo.index
    update_index(repo, ours, ws, applied)
    return ours


def _added(workspace: Path, paths: list[str]) -> pygit2.Index:
    """The entries `Index.add` makes for `paths` as they are on disk now, in a fresh index of a
    scratch repository over the same workspace (filters off, as in the store's shadow)."""
    scratch = Path(tempfile.mkdtemp(prefix="entries-"))
    other = pygit2.init_repository(str(scratch / "scratch.git"), bare=True)
    (scratch / "scratch.git" / "info" / "attributes").write_text(
        "* -text -filter -ident -working-tree-encoding\n"
    )
    other = pygit2.Repository(str(scratch / "scratch.git"))
    other.workdir = str(workspace)
    index = other.index
    for path in paths:
        index.add(path)
    return index


def test_entries_of_written_files_equal_index_add_field_by_field(shadow: tuple[pygit2.Repository, Path]) -> None:
    repo, ws = shadow
    files = {
        "a.txt": (b"alpha\n", "file"),
        "deep/er/b.py": (b"print('b')\n" * 50, "file"),
        "run.sh": (b"#!/bin/sh\necho hi\n", "executable"),
        "empty": (b"", "file"),
        "link": (b"a.txt", "symlink"),
    }
    ours = _restore(repo, ws, files)
    theirs = _added(ws, list(files))
    for path in files:
        assert _entry(ours, path) == _entry(theirs, path), path


def test_file_rewritten_within_the_same_second_is_entered_as_written_last(
    shadow: tuple[pygit2.Repository, Path],
) -> None:
    # Racy git: the second write lands in the same second (often the same tick) as the first,
    # with the same size; the entry must name the second blob with the second's stat data.
    repo, ws = shadow
    _restore(repo, ws, {"same.txt": (b"first!\n", "file")})
    ours = _restore(repo, ws, {"same.txt": (b"second\n", "file")})
    theirs = _added(ws, ["same.txt"])
    assert _entry(ours, "same.txt") == _entry(theirs, "same.txt")
    assert _entry(ours, "same.txt")["id"] == str(pygit2.hash(b"second\n"))


def test_file_changed_by_another_writer_after_the_restore_is_hashed_as_it_is(
    shadow: tuple[pygit2.Repository, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, ws = shadow
    changes = [PlannedChange(path="f.txt", action="write", kind="file", new_id=str(repo.create_blob(b"restored\n")))]
    applied = apply_changes(repo, ws, changes)
    # Another process rewrites it in place, same size, right after the restore's write.
    subprocess.run(
        [sys.executable, "-c", f"open({str(ws / 'f.txt')!r}, 'r+b').write(b'REWRITE!')"], check=True
    )
    ours = repo.index
    update_index(repo, ours, ws, applied)
    assert _entry(ours, "f.txt")["id"] == str(pygit2.hash(b"REWRITE!\n"))
    assert _entry(ours, "f.txt") == _entry(_added(ws, ["f.txt"]), "f.txt")


def test_entries_are_built_without_rereading_the_files(
    shadow: tuple[pygit2.Repository, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shortcut is taken: Index.add is left for links only.
    repo, ws = shadow
    calls: list[str] = []
    real_add = pygit2.Index.add

    def counting(self: pygit2.Index, entry: object) -> None:
        calls.append(str(entry))
        real_add(self, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(pygit2.Index, "add", counting)
    _restore(repo, ws, {"x.txt": (b"x\n", "file"), "y/z.txt": (b"z\n", "file"), "l": (b"x.txt", "symlink")})
    assert calls == ["l"]


def test_store_restore_records_entries_a_capture_agrees_with(repo: Path, data_dir: Path) -> None:
    # End to end in a watching store: after the restore, the index entries of the written
    # files are those Index.add gives, and a full capture finds the tree the restore recorded.
    store = SnapshotStore(repo, data_dir, watch=True)
    try:
        target = store.capture(session_id="s", reason="start", record_layout=True)
        write(repo / "src" / "app.py", "def main():\n    return 2\n")
        write(repo / "new.txt", "new\n")
        store.capture(session_id="s", reason="changed", watched=True)
        assert target.snapshot is not None
        result = store.restore(target.snapshot, session_id="s")
        assert result.matches_target
        index = store._shadow.index()  # the store's own, as it holds it now
        theirs = _added(repo, ["src/app.py"])
        assert _entry(index, "src/app.py") == _entry(theirs, "src/app.py")
        again = store.capture(session_id="s", reason="walk")
        assert again.tree == result.tree
    finally:
        store.close()


def _strict(repo: pygit2.Repository) -> bool:
    """Whether libgit2 refuses a tree naming an object that does not exist (its default)."""
    builder = repo.TreeBuilder()
    try:
        builder.insert("ghost", pygit2.Oid(hex="1" * 40), pygit2.enums.FileMode.BLOB)
        builder.write()
    except (pygit2.GitError, ValueError):
        return True
    return False


def test_tree_writes_are_checked_again_after_the_restore(
    shadow: tuple[pygit2.Repository, Path],
) -> None:
    # The restore writes its trees without libgit2's per-entry existence check (every entry is
    # known to exist); the check is back on for everything else, after a failure too.
    repo, _ws = shadow
    assert _strict(repo)
    with unchecked_tree_writes():
        assert not _strict(repo)
    assert _strict(repo)
    with pytest.raises(RuntimeError), unchecked_tree_writes():
        raise RuntimeError("the update failed")
    assert _strict(repo)


def _write_with_modes(repo: pygit2.Repository, ws: Path, modes: dict[str, int], mask: int) -> None:
    """Restores files with these recorded modes under ``mask``; each must end with exactly its mode."""
    changes = [
        PlannedChange(path=path, action="write", kind="executable" if mode & 0o100 else "file",
                      new_id=str(repo.create_blob(path.encode())))
        for path, mode in sorted(modes.items())
    ]
    old = os.umask(mask)
    try:
        apply_changes(repo, ws, changes, modes=modes)
    finally:
        os.umask(old)
    for path, mode in modes.items():
        assert (ws / path).stat().st_mode & 0o7777 == mode, path


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002, 0o000])
def test_written_files_get_their_recorded_mode_whatever_the_umask(
    shadow: tuple[pygit2.Repository, Path], mask: int
) -> None:
    # A file is made with its final mode only when the umask leaves that mode whole; else it is
    # made 0600 and given its mode after. Either way it ends with exactly the recorded mode.
    repo, ws = shadow
    _write_with_modes(repo, ws, {"shared.txt": 0o664, "plain.txt": 0o644, "tool.sh": 0o755, "secret.txt": 0o600},
                      mask)


@pytest.mark.may_skip(reason="needs setfacl and a file system with POSIX ACLs")
def test_a_folders_default_acl_does_not_narrow_a_written_files_mode(shadow: tuple[pygit2.Repository, Path]) -> None:
    # In a folder with a default ACL the kernel intersects a new file's mode with the ACL instead
    # of applying the umask: a file made "with its final mode" can come out narrower.
    repo, ws = shadow
    (ws / "acl").mkdir()
    try:
        subprocess.run(["setfacl", "-d", "-m", "u::rwx,g::rx,o::-", str(ws / "acl")], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"no default ACLs here: {error}")
    _write_with_modes(repo, ws, {"acl/plain.txt": 0o644, "acl/tool.sh": 0o755}, 0o022)


def test_a_file_changed_after_the_restore_wrote_it_is_counted_as_recorded(
    repo: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another writer rewrites a restored file before the index is set: the entry is hashed as it
    # is, and the result's line counts must describe that tree, not the restore's plan.
    import agentcli.snapshots.store as store_module

    store = SnapshotStore(repo, data_dir, watch=True)
    try:
        target = store.capture(session_id="s", reason="start")
        write(repo / "src" / "app.py", "def main():\n    return 2\n")
        store.capture(session_id="s", reason="changed", watched=True)
        real = store_module.update_index

        def rewritten_first(*args: object, **kwargs: object) -> list[str]:
            write(repo / "src" / "app.py", "one\ntwo\nthree\nfour\nfive\n")
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(store_module, "update_index", rewritten_first)
        assert target.snapshot is not None
        result = store.restore(target.snapshot, session_id="s")
        assert not result.matches_target and result.after is not None
        counted = {f.path: (f.added, f.removed) for f in result.after.files}
        assert counted == {"src/app.py": (5, 2)}  # from "def main(): / return 2", as recorded
        assert store.capture(session_id="s", reason="walk").tree == result.tree
    finally:
        store.close()
