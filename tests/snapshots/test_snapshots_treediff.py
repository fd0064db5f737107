"""The restore plan's tree walk (it skips shared subtrees) finds exactly what libgit2's diff finds."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pygit2
import pytest
from snaphelpers import git, write

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots.treediff import tree_changes

_ZERO = "0" * 40


Changes = set[tuple[bytes, int, str | None, int, str | None]]


def _libgit2_changes(repo: pygit2.Repository, old: str, new: str) -> Changes:
    diff: pygit2.Diff = repo.diff(repo[old], repo[new])  # type: ignore[call-overload]
    out = set()
    for delta in diff.deltas:
        a, b = delta.old_file, delta.new_file
        a_id = str(a.id) if str(a.id) != _ZERO and a.mode else None
        b_id = str(b.id) if str(b.id) != _ZERO and b.mode else None
        path = b.raw_path if b_id is not None else a.raw_path
        out.add((path, int(a.mode) if a_id else 0, a_id, int(b.mode) if b_id else 0, b_id))
    return out


def _ours(repo: pygit2.Repository, old: str, new: str, max_trees: int) -> Changes:
    return {
        (c.raw_path, c.old_mode, str(c.old_id) if c.old_id else None, c.new_mode, str(c.new_id) if c.new_id else None)
        for c in tree_changes(repo, old, new, max_trees=max_trees)
    }


def _mutate(ws: Path, rng: random.Random, step: int) -> None:
    """One random change of every kind a restore meets: edits, files to folders and back, modes, links."""
    files = sorted(p for p in ws.rglob("*") if ".git" not in p.parts and (p.is_file() or p.is_symlink()))
    kind = rng.choice(["edit", "add", "delete", "chmod", "link", "file_to_dir", "dir_to_file", "nested", "to_link"])
    target = rng.choice(files) if files else ws / "seed.txt"
    if kind == "edit" and files:
        if not target.is_symlink():
            write(target, f"edit {step}\n")
    elif kind == "add":
        write(ws / f"d{rng.randint(0, 3)}" / f"e{rng.randint(0, 3)}" / f"new{step}.txt", f"{step}\n")
    elif kind == "delete" and files:
        target.unlink()
    elif kind == "chmod" and files and not target.is_symlink():
        os.chmod(target, 0o755 if not os.access(target, os.X_OK) else 0o644)
    elif kind == "link":
        link = ws / f"link{rng.randint(0, 2)}"
        if link.is_symlink() or link.exists():
            link.unlink() if not link.is_dir() or link.is_symlink() else shutil.rmtree(link)
        os.symlink(f"target{step}", link)
    elif kind == "to_link" and files:
        target.unlink()
        os.symlink(f"pointing{step}", target)
    elif kind == "file_to_dir" and files and not target.is_symlink():
        target.unlink()
        write(target / "inside.txt", f"{step}\n")
    elif kind == "dir_to_file":
        dirs = sorted(p for p in ws.iterdir() if p.is_dir() and not p.is_symlink() and p.name != ".git")
        if dirs:
            shutil.rmtree(dirs[0])
            write(dirs[0], f"was a folder {step}\n")
    elif kind == "nested":
        nested = ws / f"nested{rng.randint(0, 1)}"
        if not nested.exists():
            nested.mkdir()
            git(nested, "init", "-q")
        write(nested / "f.txt", f"{step}\n")
        git(nested, "add", "-A")
        git(nested, "commit", "-q", "--allow-empty", "-m", f"{step}")


@pytest.mark.parametrize("seed", range(6))
def test_the_walk_finds_what_libgit2_finds(repo: Path, data_dir: Path, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(12):
        write(repo / f"d{i % 4}" / f"e{i % 3}" / f"f{i}.txt", f"{i}\n")
    store = SnapshotStore(repo, data_dir)
    trees = [store.capture(session_id="s", reason="start").tree]
    for step in range(15):
        for _ in range(rng.randint(1, 4)):
            try:
                _mutate(repo, rng, step)
            except (NotADirectoryError, FileExistsError, IsADirectoryError):
                pass  # the path chosen no longer fits the change: another one comes
        trees.append(store.capture(session_id="s", reason=f"step {step}").tree)
    shadow = pygit2.Repository(str(store.path))
    for old in trees[::3]:
        for new in trees[1::4]:
            expected = _libgit2_changes(shadow, old, new)
            assert _ours(shadow, old, new, max_trees=10**6) == expected  # the walk alone
            for budget in (0, 1, 2, 5):  # handed over to libgit2 at the root, or for the subtrees left
                assert _ours(shadow, old, new, max_trees=budget) == expected, budget
    assert tree_changes(shadow, trees[0], trees[0], max_trees=10) == []
    store.close()
