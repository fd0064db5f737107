"""Which paths the listing and search tools skip: what git ignores, judged by `agentcli.ignore`.

The snapshot store asks the same engine, so a file `list_files`, `glob` or `grep` shows is a
file a snapshot records, and the reverse. There is no separate list of always-skipped names:
`.git` is never content for git, and in a folder that is not a git repository the engine's
stand-in for `info/exclude` (`NOT_A_REPOSITORY_EXCLUDES`: `node_modules/`, `.venv/`,
`__pycache__/`...) keeps dependencies and caches out. Inside a repository the repository's own
rules decide, so a vendored `node_modules` that the project tracks is searched like any source.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentcli.ignore import discover


def make_filter(workspace: Path) -> Callable[[str, bool], bool]:
    """A predicate ``(relative_path, is_dir) -> keep`` for one walk of the workspace.

    Args:
        workspace: The resolved workspace.

    Returns:
        The predicate. ``is_dir`` must come from ``lstat``: a symlink to a directory is not a
        directory (git records the link). It reads ignore files as they are now: make a new
        one per walk.
    """
    rules = discover(workspace).rules()

    def keep(rel: str, is_dir: bool) -> bool:
        return not rules.is_ignored(rel, is_dir)

    return keep
