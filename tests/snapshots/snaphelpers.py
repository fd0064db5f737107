"""Helpers shared by the snapshot store tests: the git CLI as a cross-check.

A plain module with a unique name (not conftest) so test files can import it under pytest's
default import mode without clashing with other test folders.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from agentcli.snapshots import SnapshotStore


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    """Runs the git CLI and returns its stdout."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        ["git", "-c", "advice.addEmbeddedRepo=false", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


def git_bytes(cwd: Path, *args: str) -> bytes:
    """Runs the git CLI and returns its raw stdout (no newline translation)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr!r}")
    return proc.stdout


def git_add_all_tree(workspace: Path, scratch: Path) -> str:
    """The tree `git add -A && git write-tree` records for `workspace`, computed on a separate index.

    Uses a scratch git directory (so the user's `.git` is not written) that borrows the user's
    objects, sees the user's `info/exclude`, and has content filters off like our store.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    gitdir = scratch / "crosscheck.git"
    index = scratch / "crosscheck.index"
    if not gitdir.exists():
        git(scratch, "init", "-q", "--bare", str(gitdir))
    (gitdir / "info").mkdir(exist_ok=True)
    (gitdir / "info" / "attributes").write_text("* -text -filter -ident -working-tree-encoding\n")
    user_exclude = workspace / ".git" / "info" / "exclude"
    (gitdir / "info" / "exclude").write_bytes(user_exclude.read_bytes() if user_exclude.is_file() else b"")
    if (workspace / ".git" / "objects").is_dir():
        (gitdir / "objects" / "info" / "alternates").write_text(str(workspace / ".git" / "objects") + "\n")
    env = {"GIT_INDEX_FILE": str(index)}
    args = ["--git-dir", str(gitdir), "--work-tree", str(workspace)]
    git(workspace, *args, "add", "-A", env=env)
    return git(workspace, *args, "write-tree", env=env).strip()


def shadow_git(store: SnapshotStore, *args: str) -> str:
    """Runs a read-only git command against the store's shadow repository."""
    return git(store.workspace, "--git-dir", str(store.path), *args)


def blob_bytes(store: SnapshotStore, oid: str) -> bytes:
    """The exact bytes of a blob in the store."""
    return git_bytes(store.workspace, "--git-dir", str(store.path), "cat-file", "blob", oid)


def ls_tree(store: SnapshotStore, tree: str) -> dict[str, tuple[str, str]]:
    """Path -> (mode, object id) of every entry of a tree, as the git CLI lists it."""
    out: dict[str, tuple[str, str]] = {}
    for line in shadow_git(store, "ls-tree", "-r", "-z", tree).split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            mode, _type, oid = meta.split()
            out[path] = (mode, oid)
    return out


def commit_all(repo: Path, message: str = "commit") -> str:
    """Stages everything and commits it in the user's repository; returns the commit id."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def write(path: Path, content: str | bytes, mode: int | None = None) -> Path:
    """Writes a file, creating parent directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    if mode is not None:
        path.chmod(mode)
    return path


def change_behind_flags(repo: Path) -> dict[str, bytes]:
    """Changes two tracked files behind index flags git would not look past (assume-unchanged,
    skip-worktree), so a seed that trusted those entries would record the old content; returns
    what each file now holds."""
    git(repo, "update-index", "--assume-unchanged", "src/app.py")
    git(repo, "update-index", "--skip-worktree", "src/util.py")
    now = {
        "src/app.py": b"changed behind an assume-unchanged flag\n",
        "src/util.py": b"changed behind a skip-worktree flag\n",
    }
    for path, content in now.items():
        write(repo / path, content)
    return now


TreeState = dict[str, tuple[str, bytes, int]]


def tree_state(root: Path) -> TreeState:
    """Every path below `root` but `.git`: its kind, its bytes (a link's target) and its mode."""
    out: TreeState = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *files]:
            path = Path(folder, name)
            info = os.lstat(path)
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", os.readlink(path).encode(), 0)
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = ("dir", b"", stat.S_IMODE(info.st_mode))
            else:
                out[rel] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return out
