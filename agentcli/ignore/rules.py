"""git's verdict on "is this path ignored?" for the paths of one workspace.

The rules follow git's `dir.c`. Sources, by precedence: the `.gitignore` of the path's own
directory, then each parent's up to the work tree root, then the exclude files (`info/exclude`,
then `core.excludesFile`). The first source with a matching pattern decides, by its last
matching pattern. A path below an excluded directory is excluded, whatever a later `!` says.
Directory-only patterns (`build/`) match directories only, and a symlink is never a directory
here (git uses `lstat`). An entry named `.git` is always excluded: git never records one.

Speed, for walks of 100k files: each ignore file is compiled once per process (kept while its
size, mtime and inode stay the same) into at most four regular expressions, one alternation per
kind of pattern, so a path costs one or two `fullmatch` calls per ignore file that applies to
it, not one per pattern. Each directory's chain of sources and each directory's verdict are
computed once per `IgnoreRules`, which is meant to live for one walk or one capture: make a new
one to see edits to ignore files.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agentcli.ignore.wildmatch import IgnorePattern, parse_ignore_file


@dataclass(frozen=True)
class ExcludeSource:
    """An ignore source other than a `.gitignore`: `info/exclude`, `core.excludesFile`, defaults."""

    path: Path | None = None
    """The file (followed if a symlink, as git does for these); None for fixed `text`."""
    text: str = ""
    """The patterns, when there is no file."""
    base: str = ""
    """The directory its patterns are relative to, from the work tree root (`""`: the root)."""


@dataclass(frozen=True)
class _Matcher:
    """Every pattern of one kind in one file, as one alternation tried last line first."""

    regex: re.Pattern[str]
    lines: tuple[tuple[int, bool], ...]
    """Per alternative (group number - 1): the pattern's position in the file, and whether it excludes."""

    def last_match(self, subject: str) -> tuple[int, bool] | None:
        found = self.regex.fullmatch(subject)
        return None if found is None else self.lines[found.lastindex - 1]  # type: ignore[operator]


def _matcher(patterns: list[tuple[int, IgnorePattern]], flags: int) -> _Matcher | None:
    usable = [(i, p) for i, p in reversed(patterns) if p.regex is not None]
    if not usable:
        return None
    try:
        regex = re.compile("|".join(f"({p.regex})" for _, p in usable), flags)
    except re.error:
        # Not expected (the translation only emits valid classes), but one bad line must not
        # disable a whole file: keep the lines that compile on their own.
        usable = [(i, p) for i, p in usable if _compiles(p.regex, flags)]
        if not usable:
            return None
        regex = re.compile("|".join(f"({p.regex})" for _, p in usable), flags)
    return _Matcher(regex=regex, lines=tuple((i, not p.negated) for i, p in usable))


def _compiles(regex: str | None, flags: int) -> bool:
    try:
        re.compile(regex or "", flags)
    except re.error:
        return False
    return True


class IgnoreFile:
    """The patterns of one ignore file, compiled.

    Args:
        text: The file's contents.
        ignore_case: Match case-insensitively (core.ignorecase).
    """

    def __init__(self, text: str, ignore_case: bool) -> None:
        self._patterns = list(enumerate(parse_ignore_file(text)))
        self._flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
        self._matchers: dict[tuple[bool, bool], _Matcher | None] = {}
        self.empty = not self._patterns
        self.has_negation = any(p.negated for _, p in self._patterns)

    def _get(self, basename_only: bool, is_dir: bool) -> _Matcher | None:
        key = (basename_only, is_dir)
        if key not in self._matchers:
            kind = [
                (i, p) for i, p in self._patterns if p.basename_only == basename_only and (is_dir or not p.dir_only)
            ]
            self._matchers[key] = _matcher(kind, self._flags)
        return self._matchers[key]

    def verdict(self, rel: str, basename: str, is_dir: bool) -> bool | None:
        """The verdict of the last pattern matching a path.

        Args:
            rel: The path relative to this file's directory.
            basename: Its last component.
            is_dir: Whether it is a directory (not a symlink to one).

        Returns:
            True (excluded), False (re-included by a `!` pattern), or None when no pattern matches.
        """
        by_name = self._get(True, is_dir)
        by_path = self._get(False, is_dir)
        a = by_name.last_match(basename) if by_name is not None else None
        b = by_path.last_match(rel) if by_path is not None else None
        if a is None or (b is not None and b[0] > a[0]):
            a = b
        return None if a is None else a[1]


_EMPTY = IgnoreFile("", False)

_FILES: dict[tuple[str, bool], tuple[tuple[int, int, int, int], IgnoreFile]] = {}
"""Compiled ignore files by (path, ignore_case), with the stat signature they were read at."""
_MAX_FILES = 20_000
_RACY_NS = 2_000_000_000
"""Files modified this recently are read again on next use instead of cached."""


def load_ignore_file(path: str, ignore_case: bool, follow_symlinks: bool) -> IgnoreFile:
    """Reads an ignore file, from the process-wide cache while it is unchanged on disk.

    Args:
        path: The file.
        ignore_case: core.ignorecase.
        follow_symlinks: False for in-tree `.gitignore` files, which git opens with O_NOFOLLOW.

    Returns:
        The compiled file; an empty one when it is missing, unreadable or not a regular file.
    """
    try:
        st = os.stat(path, follow_symlinks=follow_symlinks)
    except (OSError, ValueError):
        return _EMPTY
    if not stat.S_ISREG(st.st_mode):
        return _EMPTY
    signature = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    key = (path, ignore_case)
    cached = _FILES.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1]
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "surrogateescape")
    except OSError:
        return _EMPTY
    compiled = IgnoreFile(text, ignore_case)
    if time.time_ns() - st.st_mtime_ns < _RACY_NS:
        # File times tick in milliseconds: a same-size rewrite within the tick would keep this
        # signature and be missed. git's "racily clean" rule: trust no signature that recent.
        _FILES.pop(key, None)
        return compiled
    if len(_FILES) >= _MAX_FILES:
        _FILES.clear()
    _FILES[key] = (signature, compiled)
    return compiled


@lru_cache(maxsize=16)
def _fixed(text: str, ignore_case: bool) -> IgnoreFile:
    return IgnoreFile(text, ignore_case)


_Chain = tuple[tuple[int, IgnoreFile], ...]
"""Sources for the entries of one directory, highest precedence first: (characters to cut from
a root-relative path to make it relative to the source's directory, the source)."""


class IgnoreRules:
    """Answers "does git ignore this path?" for the entries of one workspace.

    Args:
        root: The work tree whose `.gitignore` files apply: the workspace, or the root of the
            repository it lies in.
        excludes: The other sources, highest precedence first (`info/exclude`, then
            `core.excludesFile`).
        workspace: The workspace's path below `root` (`""` when it is the root). Paths asked
            about are relative to the workspace; the workspace itself and the directories
            above it count as not ignored.
        ignore_case: core.ignorecase.
    """

    def __init__(
        self,
        root: Path,
        excludes: Sequence[ExcludeSource] = (),
        *,
        workspace: str = "",
        ignore_case: bool = False,
    ) -> None:
        self._root = os.fsdecode(root)
        self._prefix = workspace.strip("/")
        self._excludes = tuple(excludes)
        self._ignore_case = ignore_case
        self._chains: dict[str, _Chain] = {}
        self._dirs: dict[str, bool] = {}

    @property
    def workspace_is_root(self) -> bool:
        """Whether the workspace is the work tree root (else ignore files above it apply too)."""
        return not self._prefix

    def is_ignored(self, path: str, is_dir: bool) -> bool:
        """git's verdict for a workspace-relative path.

        Args:
            path: `/`-separated, relative to the workspace (a trailing `/` is allowed).
            is_dir: Whether the path is a directory: False for a symlink, whatever it points to.

        Returns:
            True when `git add -A` would leave the path out.
        """
        full = self._full(path)
        parent, _, name = full.rpartition("/")
        return self._dir_excluded(parent) or self._excluded(full, parent, name, is_dir)

    def negations_apply(self, path: str) -> bool:
        """Whether any source that applies to `path` (workspace-relative) has a `!` pattern."""
        parent = self._full(path).rpartition("/")[0]
        return any(source.has_negation for _, source in self._chain(parent))

    def _full(self, path: str) -> str:
        path = path.strip("/")
        return f"{self._prefix}/{path}" if self._prefix else path

    def _dir_excluded(self, directory: str) -> bool:
        known = self._dirs.get(directory)
        if known is None:
            if len(directory) <= len(self._prefix):
                known = False  # the workspace or a directory above it
            else:
                parent, _, name = directory.rpartition("/")
                known = self._dir_excluded(parent) or self._excluded(directory, parent, name, True)
            self._dirs[directory] = known
        return known

    def _excluded(self, full: str, parent: str, name: str, is_dir: bool) -> bool:
        if name == ".git" or (self._ignore_case and name.lower() == ".git"):
            return True
        for offset, source in self._chain(parent):
            verdict = source.verdict(full[offset:], name, is_dir)
            if verdict is not None:
                return verdict
        return False

    def _chain(self, directory: str) -> _Chain:
        chain = self._chains.get(directory)
        if chain is None:
            if directory:
                rest = self._chain(directory.rpartition("/")[0])
                path = os.path.join(self._root, directory, ".gitignore")
            else:
                rest = self._exclude_chain()
                path = os.path.join(self._root, ".gitignore")
            own = load_ignore_file(path, self._ignore_case, follow_symlinks=False)
            chain = rest if own.empty else ((len(directory) + 1 if directory else 0, own), *rest)
            self._chains[directory] = chain
        return chain

    def _exclude_chain(self) -> _Chain:
        chain: list[tuple[int, IgnoreFile]] = []
        for source in self._excludes:
            if source.path is not None:
                compiled = load_ignore_file(os.fsdecode(source.path), self._ignore_case, follow_symlinks=True)
            else:
                compiled = _fixed(source.text, self._ignore_case)
            base = source.base.strip("/")
            if not compiled.empty:
                chain.append((len(base) + 1 if base else 0, compiled))
        return tuple(chain)
