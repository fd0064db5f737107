"""Shared fixtures: an isolated home for agentcli's data, and the local model server."""

from __future__ import annotations

import os
import subprocess
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
    """A workspace that is a git repository with one commit."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    (workspace / "README.md").write_text("# project\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True)
    return workspace
