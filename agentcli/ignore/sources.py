"""Where a workspace's ignore rules come from: its repository, git's config, agentcli's defaults.

Three cases, decided by git's own repository discovery (libgit2's, so the tools and the snapshot
store agree with each other and with `git status` run in the workspace):

- **The workspace is a repository's work tree root.** Its `.gitignore` files, the repository's
  `info/exclude` and `core.excludesFile` apply, exactly as for `git add -A`.
- **The workspace lies inside a repository** (a package of a monorepo). The `.gitignore` files
  from the repository root down apply too, with the repository's `info/exclude`, as for
  `git add -A .` run in the workspace. The workspace itself counts as not ignored, even when a
  rule of the repository excludes it: the user chose to work there.
- **No repository.** The workspace's `.gitignore` files and the global `core.excludesFile` apply,
  as they would after a fresh `git init`, and :data:`NOT_A_REPOSITORY_EXCLUDES` stands in for
  the `info/exclude` such a folder lacks. Without it, a search would crawl a virtualenv and every
  snapshot would hash it; a `.gitignore` line starting with `!` re-includes any of them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.ignore.rules import ExcludeSource, IgnoreRules
from agentcli.ignore.wildmatch import parse_ignore_file

if TYPE_CHECKING:
    import pygit2

NOT_A_REPOSITORY_EXCLUDES = """\
# agentcli's stand-in for .git/info/exclude in a folder that is not a git repository.
.hg/
.svn/
node_modules/
.venv/
__pycache__/
.mypy_cache/
"""
"""Other version control systems' data, installed dependencies and caches."""


@dataclass(frozen=True)
class IgnoreSources:
    """The ignore sources of one workspace; see the module docstring for the three cases."""

    root: Path
    """The work tree whose `.gitignore` files apply: the repository's, or the workspace."""
    workspace: str
    """The workspace below `root`, `/`-separated (`""` when it is the root)."""
    info_exclude: Path | None
    """The repository's `info/exclude` (in the common git directory); None without a repository."""
    excludes_file: Path | None
    """`core.excludesFile`, or git's default `$XDG_CONFIG_HOME/git/ignore`."""
    ignore_case: bool
    """core.ignorecase, else the platform's usual value."""

    @property
    def in_repository(self) -> bool:
        """Whether the workspace is in a git repository's work tree."""
        return self.info_exclude is not None

    def rules(self, own_excludes: str = "") -> IgnoreRules:
        """The engine for these sources.

        Args:
            own_excludes: More patterns, relative to the workspace, at the precedence of
                `info/exclude` (the snapshot store's: its own data directory).

        Returns:
            A fresh `IgnoreRules`: it sees the ignore files as they are now.
        """
        excludes: list[ExcludeSource] = []
        if own_excludes:
            excludes.append(ExcludeSource(text=own_excludes, base=self.workspace))
        if self.info_exclude is not None:
            excludes.append(ExcludeSource(path=self.info_exclude))
        else:
            excludes.append(ExcludeSource(text=NOT_A_REPOSITORY_EXCLUDES, base=self.workspace))
        if self.excludes_file is not None:
            excludes.append(ExcludeSource(path=self.excludes_file))
        return IgnoreRules(self.root, excludes, workspace=self.workspace, ignore_case=self.ignore_case)

    def workspace_excludes(self) -> str:
        """The `info/exclude` lines of a repository rooted at the workspace that apply these sources.

        The snapshot store's shadow repository is rooted at the workspace, and libgit2 reads
        `info/exclude` from the repository it opened, so the store copies this text there.
        For a workspace below its repository's root, the lines of the repository's
        `info/exclude` and of the `.gitignore` files above the workspace are relative to
        another directory: only those without a `/` (which mean the same at any depth) are
        kept, lowest precedence first, so libgit2 skips a `node_modules/` the root ignores
        without walking it. The store then asks :meth:`rules` about every path it adds.
        """
        if self.info_exclude is None:
            return NOT_A_REPOSITORY_EXCLUDES
        if not self.workspace:
            return _read(self.info_exclude, follow_symlinks=True)
        lines: list[str] = []
        parts = self.workspace.split("/")
        outer = [(self.info_exclude, True)] + [
            (self.root.joinpath(*parts[:k], ".gitignore"), False) for k in range(len(parts))
        ]
        for path, follow in outer:
            text = _read(path, follow_symlinks=follow)
            lines.extend(f"{p.text}\n" for p in parse_ignore_file(text) if p.basename_only)
        return "".join(lines)


def _read(path: Path, *, follow_symlinks: bool) -> str:
    """An ignore file's text; empty when missing, unreadable or (unfollowed) a symlink."""
    try:
        if not follow_symlinks and path.is_symlink():
            return ""
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return ""


def discover(workspace: Path) -> IgnoreSources:
    """Finds the ignore sources of a workspace.

    A git config file that cannot be read leaves the settings it holds at git's defaults
    rather than failing a search or a capture; git itself would refuse to run.

    The answer is kept while every input it came from is provably unchanged
    (`discovered.py`): finding it opens a repository and reads git's config (~0.3 ms, a
    tenth of a one-file restore), and a session asks before every capture and restore.

    Args:
        workspace: The workspace directory (symlinks are resolved here, as libgit2 resolves
            the repository's work tree).

    Returns:
        The sources as they are now: a new object on each call (callers key what they read
        of the exclude files on it).
    """
    from agentcli.ignore.discovered import remembered

    return remembered(workspace, _discover)


def _discover(workspace: Path) -> tuple[IgnoreSources, str | None]:
    """`discover` done afresh; also returns the git directory found (None: none), whose files
    the answer depends on even when it is not used (a bare one, a work tree elsewhere)."""
    import pygit2  # lazy: a heavy import that only walks and captures need

    workspace = workspace.resolve()

    try:
        gitdir = pygit2.discover_repository(os.fsdecode(workspace))
    except pygit2.GitError:
        gitdir = None
    repo: pygit2.Repository | None = None
    if gitdir is not None:
        try:
            repo = pygit2.Repository(gitdir)
        except pygit2.GitError:
            repo = None
    if repo is None or repo.workdir is None:
        return _sources(workspace, "", None, _config(None)), gitdir
    root = Path(repo.workdir).resolve()
    try:
        below = workspace.relative_to(root).as_posix()
    except ValueError:  # a work tree elsewhere (core.worktree): treat the workspace as its own root
        return _sources(workspace, "", None, _config(None)), gitdir
    info_exclude = _common_dir(Path(repo.path)) / "info" / "exclude"
    return _sources(root, "" if below == "." else below, info_exclude, _config(repo)), repo.path


def _sources(root: Path, below: str, info_exclude: Path | None, config: pygit2.Config | None) -> IgnoreSources:
    return IgnoreSources(
        root=root,
        workspace=below,
        info_exclude=info_exclude,
        excludes_file=excludes_file(config, root),
        ignore_case=_ignore_case(config),
    )


def _common_dir(gitdir: Path) -> Path:
    """The git directory holding `info/exclude`: a linked worktree's points to the main one."""
    try:
        return (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
    except OSError:
        return gitdir


def _config(repo: pygit2.Repository | None) -> pygit2.Config | None:
    import pygit2

    try:
        return repo.config if repo is not None else pygit2.config.DefaultConfig()
    except (pygit2.GitError, OSError):
        return None


def excludes_file(config: pygit2.Config | None, root: Path) -> Path | None:
    """The global excludes file git reads with this config.

    Args:
        config: The merged config (a repository's, or the global ones); None if unreadable.
        root: The work tree, against which a relative path is resolved.

    Returns:
        `core.excludesFile`, else libgit2's (and git's) default `$XDG_CONFIG_HOME/git/ignore`.
    """
    import pygit2

    value: str | None = None
    if config is not None:
        try:
            value = config["core.excludesFile"]
        except (KeyError, pygit2.GitError):
            value = None
    if value:
        return root / os.path.expanduser(value)  # an absolute value replaces `root`
    xdg = pygit2.settings.search_path[pygit2.enums.ConfigLevel.XDG] or ""
    first = xdg.split(os.pathsep)[0] if xdg else ""
    return Path(first) / "ignore" if first else None


def _ignore_case(config: pygit2.Config | None) -> bool:
    import pygit2

    if config is not None:
        try:
            return bool(config.get_bool("core.ignorecase"))
        except (KeyError, pygit2.GitError):
            pass
    return sys.platform in ("darwin", "win32")
