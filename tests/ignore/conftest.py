"""Every ignore test runs with an empty git home: no developer's global excludes leak in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.gitenv import isolated_git_home


@pytest.fixture(autouse=True)
def git_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The home directory git and libgit2 see; its `.config/git/ignore` is the global excludes file."""
    with isolated_git_home(tmp_path_factory.mktemp("home"), monkeypatch) as home:
        yield home
