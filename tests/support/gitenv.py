"""An empty home for git and libgit2, so no test reads the developer's global config or excludes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
import pytest


@contextmanager
def isolated_git_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Points git (environment) and libgit2 (search paths) at `home` for the duration.

    The default global excludes file is then `home/.config/git/ignore`.
    """
    for key, value in {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
        "GIT_TERMINAL_PROMPT": "0",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_INDEX_FILE", raising=False)
    levels = (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG, pygit2.enums.ConfigLevel.SYSTEM)
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.GLOBAL] = str(home)
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.XDG] = str(home / ".config" / "git")
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.SYSTEM] = str(home / "nosystem")
    try:
        yield home
    finally:
        for level, value in saved.items():
            pygit2.settings.search_path[level] = value


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Runs the git CLI (the oracle of the ignore tests) and returns its stdout; fails loudly."""
    import os
    import subprocess

    proc = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


def write(path: Path, content: str = "x\n") -> Path:
    """Writes a text file, creating parent directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path
