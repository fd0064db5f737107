"""Shared fixtures: an isolated home for agentcli's data, and the local model server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point agentcli's config and data directories at a fresh temporary folder."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    for name in list(os.environ):
        if name.startswith("AGENTCLI_"):
            monkeypatch.delenv(name)
    return home


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    srv = OpenAIServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    """A workspace that is a git repository with one commit (made with pygit2: no git CLI needed)."""
    import pygit2

    (workspace / "README.md").write_text("# project\n")
    repo = pygit2.init_repository(str(workspace))
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    signature = pygit2.Signature("test", "test@example.com")
    repo.create_commit("HEAD", signature, signature, "init", tree, [])
    return workspace
