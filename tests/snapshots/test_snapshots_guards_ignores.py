"""Workspace guards, import hygiene and concurrent use (git's ignore rules: tests/ignore/)."""

from __future__ import annotations

import ast
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentcli.snapshots import SnapshotStore, is_unsafe_workspace
from snaphelpers import git, git_add_all_tree, write

PACKAGE = Path(__file__).resolve().parents[2] / "agentcli" / "snapshots"


def test_home_root_and_parents_of_home_are_unsafe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "users" / "me"
    project = home / "code" / "project"
    project.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))

    assert "home directory" in (is_unsafe_workspace(home) or "")
    assert "contains your home directory" in (is_unsafe_workspace(tmp_path / "users") or "")
    assert "filesystem root" in (is_unsafe_workspace(Path("/")) or "")
    assert is_unsafe_workspace(project) is None
    assert is_unsafe_workspace(home / "code" / ".." / "code" / "project") is None


def test_workspace_must_exist(tmp_path: Path) -> None:
    from agentcli.snapshots import SnapshotError

    with pytest.raises(SnapshotError, match="not a directory"):
        SnapshotStore(tmp_path / "missing", tmp_path / "data")


def test_importing_the_package_is_cheap_and_loads_no_heavy_module() -> None:
    script = (
        "import sys, agentcli.snapshots;"
        "print(sorted(m for m in ('pygit2', 'pydantic', 'textual', 'rich', 'litellm') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=PACKAGE.parents[1]
    ).stdout
    assert out.strip() == "[]"


def test_the_package_is_a_leaf() -> None:
    allowed_top = {"pygit2", "pydantic", "inotify_simple", "agentcli"}  # inotify: the watcher
    # Top-level modules every layer may use: the ignore rules, and the restore reason's format
    # (a leaf the TUI reads without importing the store).
    shared = ("agentcli.ignore", "agentcli.restore_reason")
    for source in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in allowed_top, f"{source.name} imports {name}"
                if top == "agentcli":
                    assert name.startswith(("agentcli.snapshots", *shared)), f"{source.name} imports {name}"
    leaf = ast.parse((PACKAGE.parent / "restore_reason.py").read_text())
    assert not [n for n in ast.walk(leaf) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("agentcli")]


def test_concurrent_captures_from_two_stores_and_threads(repo: Path, data_dir: Path, tmp_path: Path) -> None:
    stores = [SnapshotStore(repo, data_dir), SnapshotStore(repo, data_dir)]
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(8):
                write(repo / f"w{n}" / f"f{i}.txt", f"{n}-{i}\n")
                stores[n % 2].capture(session_id=f"s{n}", reason="bash")
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    final = stores[0].capture(session_id="final", reason="check")
    assert final.tree == git_add_all_tree(repo, tmp_path / "x")
    for n in range(4):
        seqs = [s.seq for s in stores[1].timeline(f"s{n}")]
        assert seqs == list(range(1, len(seqs) + 1))
