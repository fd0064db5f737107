"""A workspace's ignore sources, kept while everything they were found from is unchanged.

`sources.discover` opens the repository and reads git's config: ~0.3 ms, a tenth of a one-file
restore, asked before every capture and restore. What it returns depends only on:

- the workspace's path: each folder on it, as given and as resolved (a folder swapped for a
  link, or a link pointed elsewhere, resolves to another place);
- which folder from the workspace up holds a `.git` (the repository git finds; up to `/` when
  none does);
- that repository's `config`, `config.worktree`, `commondir` and `gitdir` files, the common
  directory's `config`, and the global, XDG, system and program-data configs libgit2 reads;
- the environment (`HOME`, `XDG_CONFIG_HOME`, the `GIT_*` variables of discovery and config)
  and libgit2's config search path.

Folders are compared by identity and type (their times change with every file made in them);
files by device, inode, size, mode, mtime and ctime. As git's racy-clean rule has it, an answer
is not kept while any of those files is younger than `RACY_NS` (a rewrite within the same clock
tick, same size, could keep every field), so any later change moves its ctime past what was
kept. A config that includes another file (`include.path`, `includeIf`) is never kept: the
included file is not among the inputs.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.ignore.sources import IgnoreSources

RACY_NS = 2_000_000_000
"""Files changed this recently (mtime or ctime) keep an answer from being kept."""

_MAX_KEPT = 64

Signature = tuple[int, ...] | None
"""What a path's `lstat`/`stat` is compared by (None: missing)."""

_CONFIG_NAMES = {"GLOBAL": ".gitconfig", "XDG": "config", "SYSTEM": "gitconfig", "PROGRAMDATA": "config"}
"""libgit2's config file name in each level's search path."""


@dataclasses.dataclass(frozen=True)
class _Inputs:
    """What an answer was found from, as it was then."""

    outside: tuple[object, ...]
    """The environment and libgit2's search path."""
    folders: tuple[str, ...]
    folder_signatures: tuple[Signature, ...]
    files: tuple[str, ...]
    file_signatures: tuple[Signature, ...]


_kept: dict[str, tuple[_Inputs, IgnoreSources]] = {}
_lock = threading.Lock()


def remembered(workspace: Path, find: Callable[[Path], tuple[IgnoreSources, str | None]]) -> IgnoreSources:
    """The sources `find` would return for `workspace`: kept ones while their inputs are unchanged.

    Args:
        workspace: The workspace directory.
        find: Finds the sources afresh; returns them and the git directory found (or None).

    Returns:
        A new `IgnoreSources` object each call (equal to the kept one on a hit).
    """
    key = os.path.abspath(os.fsdecode(workspace))
    with _lock:
        kept = _kept.get(key)
    if kept is not None:
        was, sources = kept
        if (
            _outside() == was.outside
            and _signatures(was.folders, folders=True) == was.folder_signatures
            and _signatures(was.files, folders=False) == was.file_signatures
        ):
            return dataclasses.replace(sources)
    sources, gitdir = find(workspace)
    found = _inputs(key, sources, gitdir)
    with _lock:
        if found is None:
            _kept.pop(key, None)
        else:
            if len(_kept) >= _MAX_KEPT:
                _kept.clear()
            _kept[key] = (found, sources)
    return dataclasses.replace(sources)


def forget() -> None:
    """Drops every kept answer (tests that change libgit2's settings in place)."""
    with _lock:
        _kept.clear()


_ENVIRONMENT = ("HOME", "XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM")
"""The variables git's discovery and config read (libgit2 takes HOME and XDG_CONFIG_HOME at start-up,
into its search path, which is compared too); read one by one, as all of `os.environ` cost more
than the rest of a look."""


def _outside() -> tuple[object, ...]:
    import pygit2

    get = os.environ.get
    paths = pygit2.settings.search_path
    levels = pygit2.enums.ConfigLevel
    return (*(get(name) for name in _ENVIRONMENT), *(paths[getattr(levels, level)] for level in _CONFIG_NAMES))


def _inputs(key: str, sources: IgnoreSources, gitdir: str | None) -> _Inputs | None:
    """The inputs of an answer just found; None when it must not be kept."""
    import pygit2

    resolved = os.fsdecode(sources.root.joinpath(*sources.workspace.split("/")) if sources.workspace else sources.root)
    folders = dict.fromkeys([*_chain(key), *_chain(resolved)])
    files: list[str] = []
    # The folder git finds a repository in: every `.git` from the workspace up to it.
    top = os.path.dirname(os.path.normpath(gitdir)) if gitdir is not None else None
    current = resolved
    while True:
        files.append(os.path.join(current, ".git"))
        parent = os.path.dirname(current)
        if current == top or parent == current:
            break
        current = parent
    configs: list[str] = []
    if gitdir is not None:
        files += [os.path.join(gitdir, name) for name in ("commondir", "gitdir")]
        configs += [os.path.join(gitdir, "config"), os.path.join(gitdir, "config.worktree")]
    if sources.info_exclude is not None:
        configs.append(os.fsdecode(sources.info_exclude.parent.parent / "config"))
    paths = pygit2.settings.search_path
    levels = pygit2.enums.ConfigLevel
    for level, name in _CONFIG_NAMES.items():
        for folder in (paths[getattr(levels, level)] or "").split(os.pathsep):
            if folder:
                configs.append(os.path.join(folder, name))
    for config in configs:
        try:
            with open(config, "rb") as handle:
                if b"include" in handle.read().lower():
                    return None  # the included files would be inputs too
        except OSError:
            pass
    files += configs
    file_signatures = _signatures(tuple(files), folders=False)
    recent = time.time_ns() - RACY_NS
    if any(_younger(sig, recent) for sig in file_signatures):
        return None
    folder_list = tuple(folders)
    folder_signatures = _signatures(folder_list, folders=True)
    if any(_younger(sig, recent) for sig in folder_signatures):
        return None
    return _Inputs(
        outside=_outside(),
        folders=folder_list,
        folder_signatures=folder_signatures,
        files=tuple(files),
        file_signatures=file_signatures,
    )


def _younger(sig: Signature, than: int) -> bool:
    """Whether a file's signature holds an mtime or ctime after `than` (a folder's holds none)."""
    if sig is None or len(sig) < 6:
        return False
    times = [sig[3], sig[4], *(sig[9:11] if len(sig) >= 11 else ())]
    return max(times) > than


def _chain(path: str) -> list[str]:
    """`path` and every folder above it."""
    out = [path]
    while (parent := os.path.dirname(out[-1])) != out[-1]:
        out.append(parent)
    return out


def _signatures(paths: tuple[str, ...], *, folders: bool) -> tuple[Signature, ...]:
    out: list[Signature] = []
    for path in paths:
        try:
            st = os.lstat(path)
        except OSError:
            out.append(None)
            continue
        if stat.S_ISLNK(st.st_mode) and folders:
            # A link on the workspace's path: made again (even on a reused inode) moves its ctime.
            out.append(_file(st))
        elif folders or stat.S_ISDIR(st.st_mode):
            # A folder's times change with every file made in it: its identity and type count.
            out.append((st.st_dev, st.st_ino, st.st_mode))
        elif stat.S_ISLNK(st.st_mode):
            # A config reached through a link (dotfiles managers): the file it names counts too.
            try:
                target = os.stat(path)
            except OSError:
                target = None
            out.append(_file(st) + (_file(target) if target is not None else ()))
        else:
            out.append(_file(st))
    return tuple(out)


def _file(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
