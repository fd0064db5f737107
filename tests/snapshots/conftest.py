"""Fixtures for the snapshot store tests: real git repositories in tmp_path, git CLI cross-checks.

Every test runs with its own HOME, so neither git nor libgit2 reads the developer's global
config, and with a fixed author so commits work anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.snapshots import SnapshotStore
from snaphelpers import commit_all, git, write
from tests.support.gitenv import isolated_git_home


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Gives git and libgit2 an empty home and global config for the duration of a test."""
    with isolated_git_home(tmp_path_factory.mktemp("home"), monkeypatch) as home:
        yield home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit: a small source tree."""
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    write(ws / "README.md", "# demo\n")
    write(ws / "src" / "app.py", "def main():\n    return 1\n")
    write(ws / "src" / "util.py", "X = 1\n")
    write(ws / "bin" / "run.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    write(ws / ".gitignore", "*.log\n__pycache__/\n")
    commit_all(ws, "initial")
    return ws


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """agentcli's data directory (what $XDG_DATA_HOME/agentcli would be)."""
    return tmp_path / "data"


@pytest.fixture
def store(repo: Path, data_dir: Path) -> SnapshotStore:
    """A store for the `repo` workspace."""
    return SnapshotStore(repo, data_dir)
