"""Restore: round trips, undo, preview accuracy, and everything a restore must never touch."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

import pytest

from agentcli.snapshots import RestoreConflictError, Snapshot, SnapshotStore
from snaphelpers import commit_all, git, git_add_all_tree, ls_tree, write


def _workspace_files(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every file and symlink below root (outside .git): kind and content or link target."""
    out: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if ".git" in dirnames:
            dirnames.remove(".git")
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full).encode())
            else:
                kind = "exec" if st.st_mode & 0o100 else "file"
                out[rel] = (kind, Path(full).read_bytes())
    return out


def _evolve(repo: Path, store: SnapshotStore) -> list[Snapshot]:
    """Makes a series of changes of every kind, capturing after each; returns the snapshots."""
    snaps = [store.capture(session_id="s", reason="start").snapshot]
    steps = [
        lambda: write(repo / "src" / "app.py", "def main():\n    return 42\n"),
        lambda: write(repo / "new" / "deep" / "data.bin", bytes(range(200)) * 3),
        lambda: (repo / "src" / "util.py").unlink(),
        lambda: (repo / "bin" / "run.sh").chmod(0o644),
        lambda: os.symlink("src/app.py", repo / "app-link"),
        lambda: (os.unlink(repo / "app-link"), os.symlink("new", repo / "app-link")),
        lambda: ((repo / "README.md").unlink(), write(repo / "README.md" / "index.md", "dir now\n")),
        lambda: write(repo / "crlf.txt", b"a\r\nb\r\n"),
        lambda: (os.unlink(repo / "new" / "deep" / "data.bin"), os.rmdir(repo / "new" / "deep")),
    ]
    for step in steps:
        step()
        result = store.capture(session_id="s", reason="step")
        assert result.snapshot is not None
        snaps.append(result.snapshot)
    return [s for s in snaps if s is not None]


def test_every_snapshot_restores_exactly_in_any_order(store: SnapshotStore, repo: Path, tmp_path: Path) -> None:
    snaps = _evolve(repo, store)
    expected = {}
    # Record what each snapshot's tree looks like on disk by restoring in order first.
    order = list(range(len(snaps)))
    random.Random(7).shuffle(order)
    for n, i in enumerate(order):
        target = snaps[i]
        result = store.restore(target, session_id="s")
        assert result.matches_target and result.tree == target.tree
        # Independent check: git's own `add -A` of the restored workspace gives the target tree.
        assert git_add_all_tree(repo, tmp_path / f"x{n}") == target.tree
        files = _workspace_files(repo)
        if target.seq in expected:
            assert files == expected[target.seq]
        expected[target.seq] = files
    # A second round in reverse order reproduces byte-identical workspaces.
    for i in reversed(order):
        store.restore(snaps[i], session_id="s")
        assert _workspace_files(repo) == expected[snaps[i].seq]


def test_restore_content_modes_and_symlinks(store: SnapshotStore, repo: Path) -> None:
    first = store.capture(session_id="s", reason="start").snapshot
    (repo / "bin" / "run.sh").chmod(0o644)
    os.symlink("src", repo / "srclink")
    write(repo / "src" / "app.py", "changed\n")
    store.capture(session_id="s", reason="changes")

    store.restore(first, session_id="s")  # type: ignore[arg-type]

    assert os.stat(repo / "bin" / "run.sh").st_mode & 0o111 == 0o111
    assert not os.path.lexists(repo / "srclink")
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 1\n"

    os.symlink("bin", repo / "binlink")
    linked = store.capture(session_id="s", reason="link").snapshot
    os.unlink(repo / "binlink")
    write(repo / "binlink", "now a file\n")
    store.capture(session_id="s", reason="link replaced")
    store.restore(linked, session_id="s")  # type: ignore[arg-type]
    assert os.readlink(repo / "binlink") == "bin"


def test_restore_can_be_undone(store: SnapshotStore, repo: Path) -> None:
    first = store.capture(session_id="s", reason="start").snapshot
    write(repo / "src" / "app.py", "agent work\n")
    write(repo / "extra.txt", "extra\n")
    work = _workspace_files(repo)

    result = store.restore(first, session_id="s")  # type: ignore[arg-type]
    assert not (repo / "extra.txt").exists()
    assert result.undo.reason == "before restore" and result.undo.seq == 2

    undo = store.restore(result.undo, session_id="s")
    assert _workspace_files(repo) == work
    assert undo.matches_target
    assert [s.reason for s in store.timeline("s")][-1].startswith("restored snapshot s:2")


def test_plan_restore_is_exact_and_touches_nothing(store: SnapshotStore, repo: Path) -> None:
    first = store.capture(session_id="s", reason="start").snapshot
    write(repo / "src" / "app.py", "modified\n")
    write(repo / "added" / "one.txt", "1\n")
    (repo / "src" / "util.py").unlink()
    (repo / "bin" / "run.sh").chmod(0o644)
    before = {p: os.lstat(repo / p).st_mtime_ns for p in ["src/app.py", "README.md", "added/one.txt"]}
    listing = _workspace_files(repo)

    plan = store.plan_restore(first)  # type: ignore[arg-type]

    assert _workspace_files(repo) == listing
    assert {p: os.lstat(repo / p).st_mtime_ns for p in before} == before
    assert plan.writes == ["src/app.py", "src/util.py"]
    assert plan.deletes == ["added/one.txt"]
    assert plan.chmods == ["bin/run.sh"]
    assert not plan.conflicts

    readme_inode = os.lstat(repo / "README.md").st_ino
    readme_mtime = os.lstat(repo / "README.md").st_mtime_ns
    result = store.restore(first, session_id="s")  # type: ignore[arg-type]
    assert [(c.path, c.action) for c in result.plan.changes] == [(c.path, c.action) for c in plan.changes]
    # Paths outside the plan are not rewritten: same inode, same mtime.
    assert os.lstat(repo / "README.md").st_ino == readme_inode
    assert os.lstat(repo / "README.md").st_mtime_ns == readme_mtime
    assert not (repo / "added").exists()  # emptied directories go too


def test_restore_never_deletes_ignored_files_and_keeps_their_directories(store: SnapshotStore, repo: Path) -> None:
    first = store.capture(session_id="s", reason="start").snapshot
    write(repo / "build" / "out.py", "tracked output\n")
    write(repo / "build" / "trace.log", "ignored\n")
    write(repo / "tmp" / "__pycache__" / "x.pyc", b"\x00")
    store.capture(session_id="s", reason="build")

    store.restore(first, session_id="s")  # type: ignore[arg-type]

    assert not (repo / "build" / "out.py").exists()
    assert (repo / "build" / "trace.log").read_text() == "ignored\n"
    assert (repo / "tmp" / "__pycache__" / "x.pyc").exists()


def test_restore_refuses_to_replace_a_directory_holding_ignored_files(store: SnapshotStore, repo: Path) -> None:
    write(repo / "cache", "a file in the snapshot\n")
    with_file = store.capture(session_id="s", reason="start").snapshot
    (repo / "cache").unlink()
    write(repo / "cache" / "state.log", "ignored, in no snapshot\n")
    store.capture(session_id="s", reason="now a directory")
    write(repo / "src" / "app.py", "other change\n")

    with pytest.raises(RestoreConflictError, match="cache") as info:
        store.restore(with_file, session_id="s")  # type: ignore[arg-type]

    assert [c.path for c in info.value.conflicts] == ["cache"]  # type: ignore[attr-defined]
    assert (repo / "cache" / "state.log").read_text() == "ignored, in no snapshot\n"
    assert (repo / "src" / "app.py").read_text() == "other change\n"  # nothing was applied


def test_restore_never_writes_through_a_symlink_out_of_the_workspace(
    store: SnapshotStore, repo: Path, tmp_path: Path
) -> None:
    write(repo / "conf" / "settings.ini", "inside\n")
    with_dir = store.capture(session_id="s", reason="start").snapshot
    outside = tmp_path / "outside"
    write(outside / "settings.ini", "outside, must not change\n")
    for p in (repo / "conf").iterdir():
        p.unlink()
    (repo / "conf").rmdir()
    os.symlink(outside, repo / "conf")
    write(repo / ".gitignore", "*.log\n__pycache__/\nconf\n")  # the symlink is ignored: in no snapshot
    store.capture(session_id="s", reason="conf is a symlink now")

    plan = store.plan_restore(with_dir)  # type: ignore[arg-type]
    assert [c.path for c in plan.conflicts] == ["conf/settings.ini"]
    with pytest.raises(RestoreConflictError):
        store.restore(with_dir, session_id="s")  # type: ignore[arg-type]
    assert (outside / "settings.ini").read_text() == "outside, must not change\n"
    assert os.path.islink(repo / "conf")


def test_restore_leaves_nested_repositories_alone(store: SnapshotStore, repo: Path) -> None:
    first = store.capture(session_id="s", reason="start").snapshot
    nested = repo / "clone"
    nested.mkdir()
    git(nested, "init", "-q")
    write(nested / "file.txt", "nested work\n")
    commit_all(nested)
    write(repo / "top.txt", "top\n")
    store.capture(session_id="s", reason="cloned")

    result = store.restore(first, session_id="s")  # type: ignore[arg-type]

    assert result.plan.skipped == ["clone"]
    assert not (repo / "top.txt").exists()
    assert (nested / "file.txt").read_text() == "nested work\n"
    assert (nested / ".git").is_dir()
    assert not result.matches_target  # the gitlink is still there, by design


def test_restore_with_nothing_to_do(store: SnapshotStore, repo: Path) -> None:
    first = store.capture(session_id="s", reason="start").snapshot
    plan = store.plan_restore(first)  # type: ignore[arg-type]
    assert plan.is_noop
    result = store.restore(first, session_id="s")  # type: ignore[arg-type]
    assert result.matches_target and result.after is None and result.undo == first
    assert len(store.timeline("s")) == 1


def test_restore_by_reference_strings(store: SnapshotStore, repo: Path) -> None:
    first = store.capture(session_id="s", reason="start").snapshot
    assert first is not None
    write(repo / "x.txt", "x\n")
    store.capture(session_id="s", reason="x")
    store.restore("1", session_id="s")
    assert not (repo / "x.txt").exists()
    store.restore("s:2", session_id="s")
    assert (repo / "x.txt").exists()
    store.restore(first.id[:6], session_id="s")
    assert not (repo / "x.txt").exists()


def test_restore_recreates_executable_files_with_umask_permissions(store: SnapshotStore, repo: Path) -> None:
    write(repo / "tool.sh", "#!/bin/sh\n", mode=0o755)
    snap = store.capture(session_id="s", reason="start").snapshot
    (repo / "tool.sh").unlink()
    store.capture(session_id="s", reason="deleted")
    store.restore(snap, session_id="s")  # type: ignore[arg-type]
    mode = stat.S_IMODE(os.stat(repo / "tool.sh").st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o777 & ~umask
    assert ls_tree(store, snap.tree)["tool.sh"][0] == "100755"  # type: ignore[union-attr]
