"""list_files, glob, grep and a snapshot capture agree on what is ignored, and git agrees with them.

One workspace with the cases where the two engines used to disagree: `.git/info/exclude`, a
global excludes file, a nested `.gitignore` whose `!` re-includes what the root ignores, and a
symlink to a directory matched by a directory-only pattern (git records the link). It is laid
out three ways: as a repository's root, as a plain folder, and as a package inside a repository.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentcli.config import ToolSettings
from agentcli.ignore import NOT_A_REPOSITORY_EXCLUDES
from agentcli.snapshots import SnapshotStore
from agentcli.tools import ToolContext, default_registry
from agentcli.tools.paths import is_secret_path
from tests.support.gitenv import git, write

REGISTRY = default_registry()

FILES = {
    ".gitignore": "*.log\nbuild/\nout/\n",
    "src/app.py": "needle\n",
    "src/debug.log": "needle\n",
    "pkg/.gitignore": "!keep.log\ngenerated/\n",
    "pkg/keep.log": "needle\n",
    "pkg/drop.log": "needle\n",
    "pkg/generated/code.py": "needle\n",
    "real/f.txt": "needle\n",
    "out/artifact.bin": "needle\n",
    "local.note": "needle\n",
    "key.secret": "needle\n",
    "node_modules/dep/index.js": "needle\n",
}
EXPECTED_KEPT = {
    ".gitignore", "src/app.py", "pkg/.gitignore", "pkg/keep.log", "real/f.txt", "build",
}
"""Kept whatever the layout. In a plain folder `local.note` is kept too (no info/exclude names
it); inside a repository `node_modules` is (no rule names it)."""


def _populate(ws: Path, git_home: Path) -> None:
    for rel, text in FILES.items():
        write(ws / rel, text)
    os.symlink("real", ws / "build")  # matched by `build/` only if it were a directory
    write(git_home / ".config" / "git" / "ignore", "*.secret\n")


async def _call(ws: Path, name: str, args: dict[str, object]) -> str:
    result = await REGISTRY.call(name, json.dumps(args), ToolContext(ws, ToolSettings(max_matches=1000)))
    assert result.ok, result.output
    return result.output


def _listed_files(tree: str) -> set[str]:
    """Rebuilds paths from list_files' indented tree; folders end with `/`, links with `@`."""
    files: set[str] = set()
    stack: list[str] = []
    for line in tree.splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.strip()
        del stack[depth:]
        if name.endswith("/"):
            stack.append(name[:-1])
        else:
            files.add("/".join([*stack, name.removesuffix("@")]))
    return files


def _snapshot_files(ws: Path, data_dir: Path) -> set[str]:
    store = SnapshotStore(ws, data_dir)
    tree = store.capture(session_id="s", reason="check").tree
    return set(git(ws, "--git-dir", str(store.path), "ls-tree", "-r", "--name-only", "-z", tree).split("\0")) - {""}


def _git_add_all(ws: Path, scratch: Path, info_exclude: str | None) -> set[str]:
    """What `git add -A .` stages, on a scratch index (and a scratch git dir without a repository)."""
    env = {"GIT_INDEX_FILE": str(scratch / "index")}
    if info_exclude is None:  # inside a repository: its own git dir, a throwaway index
        git(ws, "add", "-A", ".", env=env)
        return set(git(ws, "ls-files", "-z", env=env).split("\0")) - {""}
    gitdir = scratch / "git"
    git(scratch, "init", "-q", "--bare", str(gitdir))
    write(gitdir / "info" / "exclude", info_exclude)
    args = ["--git-dir", str(gitdir), "--work-tree", str(ws)]
    git(ws, *args, "add", "-A", env=env)
    return set(git(ws, *args, "ls-files", "-z", env=env).split("\0")) - {""}


@pytest.mark.parametrize("layout", ["repository", "plain folder", "package of a repository"])
async def test_tools_snapshots_and_git_agree_on_ignored_paths(tmp_path: Path, git_home: Path, layout: str) -> None:
    if layout == "repository":
        ws = tmp_path / "ws"
        git(tmp_path, "init", "-q", str(ws))
        _populate(ws, git_home)
        info_exclude: str | None = write(ws / ".git" / "info" / "exclude", "local.note\n").read_text()
    elif layout == "plain folder":
        ws = tmp_path / "ws"
        ws.mkdir()
        _populate(ws, git_home)
        info_exclude = NOT_A_REPOSITORY_EXCLUDES  # what agentcli applies where git has no info/exclude
    else:
        repo = tmp_path / "mono"
        git(tmp_path, "init", "-q", str(repo))
        write(repo / ".gitignore", "*.log\n")  # above the workspace: applies to it
        ws = repo / "pkg"
        ws.mkdir()
        _populate(ws, git_home)
        write(repo / ".git" / "info" / "exclude", "/pkg/local.note\n")  # relative to the repository root
        info_exclude = None
    ws = ws.resolve()
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    by_git = _git_add_all(ws, scratch, info_exclude)
    listed = _listed_files(await _call(ws, "list_files", {"depth": 10}))
    globbed = set((await _call(ws, "glob", {"pattern": "*"})).splitlines())
    grepped = {line.split(":", 1)[0] for line in (await _call(ws, "grep", {"pattern": "needle"})).splitlines()}
    snapshot = _snapshot_files(ws, tmp_path / "data")

    expected = EXPECTED_KEPT | ({"local.note"} if layout == "plain folder" else {"node_modules/dep/index.js"})
    assert by_git == expected
    assert listed == globbed == snapshot == by_git
    # grep reads file contents: links to folders have none, and secret files only when named.
    assert grepped == {p for p in by_git if (ws / p).is_file() and not is_secret_path(p) and FILES.get(p) == "needle\n"}
