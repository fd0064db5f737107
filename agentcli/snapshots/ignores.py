"""Git's own ignore rules, to correct libgit2 where it disagrees with `git add -A`.

libgit2 decides most ignores correctly and fast, so it stays the primary judge. It is wrong
in two known families of cases, and for those paths this module gives git's verdict:

- Symlinks to directories. libgit2 decides "is a directory" with `stat()`, which follows the
  link, so `build/` ignores a symlink `build -> out/`; git uses `lstat()` and records the
  symlink. The reverse happens with `keep*` followed by `!keep/`.
- Negation. libgit2 drops a `!pattern` that does not negate a pattern of the same file, so
  `!keep.log` in `pkg/.gitignore` does not re-include what the root `*.log` ignores (libgit2
  issue #7284); and it lets `!d/sub/*` re-include files below an ignored `d/`, which git never
  does (#7283).

The rules follow git's `dir.c`: sources by precedence — the `.gitignore` of the path's own
directory, then each parent's up to the root, then `$GIT_DIR/info/exclude`, then
`core.excludesFile`; the first source with a matching pattern decides, by its last matching
pattern; a path below an excluded directory is excluded; patterns use wildmatch with
`WM_PATHNAME` (`*` stops at `/`, `**/` spans directories).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


@dataclass(frozen=True)
class IgnorePattern:
    """One line of an ignore file, compiled."""

    text: str
    regex: re.Pattern[str] | None
    """None for a pattern wildmatch would abort on (an unterminated `[`): it never matches."""
    negated: bool
    dir_only: bool
    basename_only: bool
    """No `/` in the pattern: it matches the last path component at any depth."""

    def matches(self, rel: str, basename: str, is_dir: bool) -> bool:
        """Tells whether the pattern matches a path relative to its ignore file's directory."""
        if self.regex is None or (self.dir_only and not is_dir):
            return False
        return self.regex.fullmatch(basename if self.basename_only else rel) is not None


def _translate_class(pat: str, i: int) -> tuple[str | None, int]:
    """Translates a `[...]` starting at `pat[i] == '['`; returns (regex, index after it)."""
    j = i + 1
    negate = False
    if j < len(pat) and pat[j] in "!^":
        negate = True
        j += 1
    parts: list[str] = []
    first = True
    while j < len(pat):
        c = pat[j]
        if c == "]" and not first:
            body = "".join(parts)
            # WM_PATHNAME: a bracket expression never matches '/'.
            return (f"(?!/)[^{body}]" if negate else f"(?!/)[{body}]") if body else None, j + 1
        first = False
        if c == "[" and pat.startswith("[:", j):
            end = pat.find(":]", j + 2)
            if end != -1 and pat[j + 2 : end] in _POSIX_CLASSES:
                parts.append(_POSIX_CLASSES[pat[j + 2 : end]])
                j = end + 2
                continue
        if c == "\\" and j + 1 < len(pat):
            j += 1
            c = pat[j]
        if j + 2 < len(pat) and pat[j + 1] == "-" and pat[j + 2] != "]":
            hi = pat[j + 2]
            hi_at = j + 2
            if hi == "\\" and j + 3 < len(pat):
                hi = pat[j + 3]
                hi_at = j + 3
            parts.append(f"{re.escape(c)}-{re.escape(hi)}")
            j = hi_at + 1
            continue
        parts.append(re.escape(c))
        j += 1
    return None, len(pat)  # unterminated: wildmatch aborts, the pattern matches nothing


def wildmatch_regex(pattern: str) -> str | None:
    """Translates a git wildmatch pattern (WM_PATHNAME) into a regular expression.

    Args:
        pattern: The pattern, without `!`, leading `/` or trailing `/`.

    Returns:
        A regex for `re.fullmatch`, or None when the pattern can never match.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            double = j - i >= 2
            at_start = i == 0 or pattern[i - 1] == "/"
            at_end = j == n or pattern[j] == "/"
            if double and at_start and at_end:
                if j == n:
                    out.append(".*")  # `dir/**`: everything inside
                    i = j
                else:
                    out.append("(?:.*/)?")  # `**/`: zero or more directories
                    i = j + 1
            else:
                out.append("[^/]*")
                i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _translate_class(pattern, i)
            if cls is None:
                return None
            out.append(cls)
        elif c == "\\":
            if i + 1 < n:
                out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _trim_trailing_spaces(line: str) -> str:
    # git keeps a trailing space escaped with a backslash.
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        if end >= 2 and line[end - 2] == "\\":
            break
        end -= 1
    return line[:end]


def parse_ignore_file(text: str, ignore_case: bool = False) -> list[IgnorePattern]:
    """Parses the contents of a `.gitignore`-style file.

    Args:
        text: File contents.
        ignore_case: Match case-insensitively (core.ignorecase).

    Returns:
        The patterns in file order.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    patterns: list[IgnorePattern] = []
    flags = re.IGNORECASE if ignore_case else 0
    for raw in text.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line or line.startswith("#"):
            continue
        line = _trim_trailing_spaces(line)
        if not line:
            continue
        negated = line.startswith("!")
        body = line[1:] if negated else line
        dir_only = body.endswith("/")
        if dir_only:
            body = body[:-1]  # one slash only, as git does: `a//` stays anchored and matches nothing
        if not body:
            continue
        basename_only = "/" not in body
        if body.startswith("/"):
            body = body[1:]
        if basename_only:
            regex = wildmatch_regex(body)
        else:
            # git (dir.c match_pathname) compares the literal prefix first and wildmatches only
            # the rest, so a `**` right after the prefix counts as leading: `a**/b` matches `ab`.
            literal = len(re.split(r"[*?\[\\]", body, maxsplit=1)[0])
            rest = wildmatch_regex(body[literal:])
            regex = None if rest is None else re.escape(body[:literal]) + rest
        try:
            compiled = re.compile(regex, flags | re.DOTALL) if regex is not None else None
        except re.error:  # e.g. a reversed range `[z-a]`, which wildmatch never matches either
            compiled = None
        patterns.append(
            IgnorePattern(
                text=line,
                regex=compiled,
                negated=negated,
                dir_only=dir_only,
                basename_only=basename_only,
            )
        )
    return patterns


@dataclass
class _Source:
    patterns: list[IgnorePattern]
    signature: tuple[int, int, int]

    @property
    def has_negation(self) -> bool:
        return any(p.negated for p in self.patterns)


class GitIgnoreRules:
    """Answers "does git ignore this path?" for one work tree.

    Ignore files are parsed once and re-read when their size, mtime or inode change.

    Args:
        workspace: The work tree.
        info_exclude: The `info/exclude` file that applies (the shadow's copy).
        excludes_file: The `core.excludesFile` that applies, if any.
        ignore_case: core.ignorecase.
    """

    def __init__(self, workspace: Path, info_exclude: Path, excludes_file: Path | None, ignore_case: bool) -> None:
        self._workspace = workspace
        self._info_exclude = info_exclude
        self._excludes_file = excludes_file
        self._ignore_case = ignore_case
        self._files: dict[str, _Source] = {}
        # Per-capture memos (cleared by `configure`): ignore files already stat'ed, directory
        # verdicts, and "does a negation apply below this directory".
        self._fresh: dict[str, _Source] = {}
        self._dir_cache: dict[tuple[str, bool], bool] = {}
        self._negation_cache: dict[str, bool] = {}

    def configure(self, excludes_file: Path | None, ignore_case: bool) -> None:
        """Updates the global excludes file and case rule (they can change between captures)."""
        if excludes_file != self._excludes_file or ignore_case != self._ignore_case:
            self._excludes_file = excludes_file
            self._ignore_case = ignore_case
            self._files.clear()
        # Ignore files may have changed since the last capture.
        self._fresh.clear()
        self._dir_cache.clear()
        self._negation_cache.clear()

    def _load(self, path: Path) -> _Source:
        key = os.fsdecode(path)
        fresh = self._fresh.get(key)
        if fresh is not None:
            return fresh
        source = self._load_from_disk(path, key)
        self._fresh[key] = source
        return source

    def _load_from_disk(self, path: Path, key: str) -> _Source:
        try:
            st = os.lstat(path)
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):
            # git opens ignore files with O_NOFOLLOW: a symlinked .gitignore does not count.
            source = _Source(patterns=[], signature=(0, 0, -1))
            self._files[key] = source
            return source
        signature = (st.st_ino, st.st_mtime_ns, st.st_size)
        cached = self._files.get(key)
        if cached is not None and cached.signature == signature:
            return cached
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        source = _Source(patterns=parse_ignore_file(text, self._ignore_case), signature=signature)
        self._files[key] = source
        return source

    def _sources(self, parent_parts: list[str]) -> list[tuple[str, _Source]]:
        """Sources applying to entries of the directory `parent_parts`, highest precedence first."""
        out: list[tuple[str, _Source]] = []
        for k in range(len(parent_parts), -1, -1):
            base = "/".join(parent_parts[:k])
            out.append((base, self._load(self._workspace / base / ".gitignore")))
        out.append(("", self._load(self._info_exclude)))
        if self._excludes_file is not None:
            out.append(("", self._load(self._excludes_file)))
        return out

    def negations_apply(self, path: str) -> bool:
        """Tells whether any ignore source that applies to `path` has a negated pattern."""
        parent = path.rstrip("/").split("/")[:-1]
        key = "/".join(parent)
        known = self._negation_cache.get(key)
        if known is None:
            known = self._negation_cache[key] = any(source.has_negation for _, source in self._sources(parent))
        return known

    def _excluded_here(self, parts: list[str], is_dir: bool) -> bool:
        rel_path = "/".join(parts)
        basename = parts[-1]
        for base, source in self._sources(parts[:-1]):
            rel = rel_path[len(base) + 1 :] if base else rel_path
            for pattern in reversed(source.patterns):
                if pattern.matches(rel, basename, is_dir):
                    return not pattern.negated
        return False

    def is_ignored(self, path: str, is_dir: bool) -> bool:
        """Git's verdict for a workspace-relative path.

        Args:
            path: `/`-separated path (a trailing `/` is allowed for directories).
            is_dir: Whether the path is a directory (False for a symlink, whatever it points to).

        Returns:
            True when `git add -A` would leave the path out.
        """
        parts = path.rstrip("/").split("/")
        for i in range(1, len(parts)):
            key = ("/".join(parts[:i]), True)
            excluded = self._dir_cache.get(key)
            if excluded is None:
                excluded = self._dir_cache[key] = self._excluded_here(parts[:i], True)
            if excluded:
                return True
        return self._excluded_here(parts, is_dir)
