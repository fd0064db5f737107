"""The search tools: glob and grep. Both skip what git ignores (see tools/ignore.py)."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from agentcli.tools.base import Arguments, BlockingTool, ToolContext, ToolError, ToolResult, one_line
from agentcli.tools.fsaccess import open_dir, open_regular, read_bounded
from agentcli.tools.ignore import make_filter
from agentcli.tools.paths import is_secret_path, relative, resolve_in_workspace
from agentcli.tools.text import looks_binary, truncate_middle

MAX_GREP_FILE_BYTES = 5 * 1024 * 1024


def walk_files(root: Path, workspace: Path, keep: Callable[[str, bool], bool]) -> Iterator[str]:
    """Workspace-relative paths of the files under ``root``, in a stable order, pruning early.

    A symlink is an entry of its own, even one to a directory: git records the link, so
    ``keep`` is asked with ``is_dir=False`` and the walk does not follow it. The walk runs on
    descriptors (``os.fwalk`` from ``root`` opened without following links), so a folder
    swapped for a symlink meanwhile is not entered: nothing outside the workspace is listed.
    """
    base = relative(workspace, root)
    top = open_dir(workspace, root, base)
    try:
        for folder, dirs, files, folder_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            inner = posixpath.normpath(posixpath.join(base, folder))
            prefix = "" if inner == "." else inner + "/"
            links = {d for d in dirs if _is_link(d, folder_fd)}
            dirs[:] = sorted(d for d in dirs if d not in links and keep(prefix + d, True))
            for name in sorted([*files, *links]):
                rel = prefix + name
                if keep(rel, False):
                    yield rel
    finally:
        os.close(top)


def _is_link(name: str, folder_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode)
    except OSError:
        return True  # gone or changed: not a folder to enter


def _matches(pattern: str, rel: str) -> bool:
    """Glob match where ``**`` spans folders and a pattern without ``/`` matches any basename."""
    if "/" not in pattern:
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)
    regex = _glob_regex(pattern)
    return regex.fullmatch(rel) is not None


def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            parts.append(".*")
            i += 2
        elif pattern[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            parts.append("[^/]")
            i += 1
        else:
            parts.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(parts))


def _pattern_in(args: Mapping[str, object]) -> str:
    """``'*.py' in src`` — a search's pattern and where it looks."""
    pattern, path = args.get("pattern"), args.get("path", ".")
    where = path if isinstance(path, str) else "."
    return one_line(f"{pattern!r} in {where}" if isinstance(pattern, str) else where)


class GlobArgs(Arguments):
    pattern: str = Field(description="Glob such as '**/*.py' or 'src/*.ts'; '*.md' matches at any depth.")
    path: str = Field(".", description="Folder to search from, relative to the workspace.")


class Glob(BlockingTool[GlobArgs]):
    name = "glob"
    description = "Find files whose path matches a glob pattern. Returns workspace-relative paths."
    arguments = GlobArgs
    permission = "read"
    target, target_kind, target_default = "path", "path", "."

    @classmethod
    def preview(cls, args: Mapping[str, object]) -> str:
        return _pattern_in(args)

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        return f"Find files matching {_pattern_in(args)}"

    def run_blocking(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        root = resolve_in_workspace(ctx.workspace, args.path, must_exist=True)
        if not root.is_dir():
            raise ToolError(f"'{args.path}' is not a folder")
        base = relative(ctx.workspace, root)
        limit = ctx.settings.max_matches
        found: list[str] = []
        for rel in walk_files(root, ctx.workspace, make_filter(ctx.workspace)):
            below = rel if base == "." else rel[len(base) + 1 :]
            if _matches(args.pattern, below):
                found.append(rel)
                if len(found) > limit:
                    break
        if not found:
            return ToolResult(ok=True, output=f"No files match '{args.pattern}'")
        output = "\n".join(found[:limit])
        if len(found) > limit:
            output += f"\n[more than {limit} matches; narrow the pattern]"
        return ToolResult(ok=True, output=output)


class GrepArgs(Arguments):
    pattern: str = Field(description="Python regular expression to search for.")
    path: str = Field(".", description="File or folder to search, relative to the workspace.")
    glob: str | None = Field(None, description="Only search files matching this glob, e.g. '*.py'.")


class Grep(BlockingTool[GrepArgs]):
    name = "grep"
    description = "Search file contents with a regular expression. Returns path:line:text lines."
    arguments = GrepArgs
    permission = "read"
    target, target_kind, target_default = "path", "path", "."
    shows_contents = True

    @classmethod
    def preview(cls, args: Mapping[str, object]) -> str:
        return _pattern_in(args)

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        return f"Search {_pattern_in(args)}"

    def run_blocking(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(args.pattern)
        except re.error as error:
            raise ToolError(f"invalid regular expression {args.pattern!r}: {error}") from None
        root = resolve_in_workspace(ctx.workspace, args.path, must_exist=True)
        named = root.is_file()
        if named:
            candidates: Iterator[str] = iter([relative(ctx.workspace, root)])
        else:
            candidates = walk_files(root, ctx.workspace, make_filter(ctx.workspace))
        limit = ctx.settings.max_matches
        hits: list[str] = []
        skipped: dict[str, list[str]] = {}
        for rel in candidates:
            if args.glob and not _matches(args.glob, rel):
                continue
            if not named and is_secret_path(rel):
                continue  # a secret file is searched only when named: reading it may need approval
            lines = _text_lines(ctx.workspace, rel, named=named and ctx.links_approved)
            if isinstance(lines, _Skipped):
                skipped.setdefault(lines.why, []).append(rel)
                continue
            for number, line in lines:
                if regex.search(line):
                    hits.append(f"{rel}:{number}:{line[:500]}")
                    if len(hits) > limit:
                        break
            if len(hits) > limit:
                break
        output = "\n".join(hits[:limit]) if hits else f"No matches for {args.pattern!r}"
        if len(hits) > limit:
            output += f"\n[more than {limit} matches; narrow the pattern, path or glob]"
        output = truncate_middle(output, ctx.settings.max_output_chars)
        for why, paths in skipped.items():
            shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
            output += f"\n[not searched: {shown}: {why}]"
        return ToolResult(ok=True, output=output)


@dataclass(frozen=True)
class _Skipped:
    why: str


_HARD_LINK = "hard-linked, so another name may be outside the workspace; name the file to search it (that asks first)"
_LINK_OUT = "a symlink out of the workspace"


def _text_lines(workspace: Path, rel: str, *, named: bool) -> list[tuple[int, str]] | _Skipped:
    """Numbered lines of a text file; binary, huge, unreadable and special files give none.

    The file is opened through :func:`open_regular` at its resolved path: no symlink is followed
    on the way (a folder swapped for a link meanwhile is not entered), only a regular file is
    read, and a FIFO cannot block. A symlink is searched only when it leads to a file inside the
    workspace; a hard-linked file only when the search names it (the permission policy asks
    first), since its content may belong to a file outside.
    """
    real = Path(os.path.realpath(workspace / rel))
    if not real.is_relative_to(workspace) or real == workspace:
        return _Skipped(_LINK_OUT)
    try:
        fd = open_regular(workspace, real, rel)
    except (ToolError, OSError, ValueError):
        return []
    try:
        info = os.fstat(fd)
        if info.st_size > MAX_GREP_FILE_BYTES:
            return []
        if info.st_nlink > 1 and not named:
            return _Skipped(_HARD_LINK)
        data = read_bounded(fd, MAX_GREP_FILE_BYTES, rel)
    except (ToolError, OSError):
        return []
    finally:
        os.close(fd)
    if looks_binary(data):
        return []
    text = data.decode("utf-8", errors="replace")
    return list(enumerate(text.splitlines(), start=1))
