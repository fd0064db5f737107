"""Which paths the listing and search tools skip: .git always, plus what git ignores."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

# Skipped even outside a git repository: nobody wants these in a listing or a search.
ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache"})


@lru_cache(maxsize=8)
def _ignore_checker(workspace: Path) -> Callable[[str], bool] | None:
    import pygit2  # lazy: a heavy import that only listing and searching need

    try:
        repo = pygit2.Repository(str(workspace))
    except pygit2.GitError:
        return None
    if repo.is_bare or repo.workdir is None:
        return None
    root = Path(repo.workdir).resolve()

    def ignored(rel_to_workspace: str) -> bool:
        try:
            rel = (workspace / rel_to_workspace).relative_to(root).as_posix()
            return repo.path_is_ignored(rel)
        except (ValueError, pygit2.GitError):
            return False

    return ignored


def make_filter(workspace: Path) -> Callable[[str, bool], bool]:
    """A predicate ``(relative_path, is_dir) -> keep`` for walks of the workspace."""
    checker = _ignore_checker(workspace)

    def keep(rel: str, is_dir: bool) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if name in ALWAYS_SKIPPED:
            return False
        if checker is None:
            return True
        return not checker(rel + "/" if is_dir else rel)

    return keep
