"""The file tools: read_file, write_file, edit_file, list_files."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import Field

from agentcli.tools.base import Arguments, BlockingTool, ToolContext, ToolError, ToolResult
from agentcli.tools.fsaccess import open_dir, open_regular, open_subdir, read_bounded, rewrite
from agentcli.tools.ignore import make_filter
from agentcli.tools.paths import relative, resolve_in_workspace
from agentcli.tools.text import counted, decode_text, looks_binary, truncate_middle

MAX_LINE_CHARS = 2000
DEFAULT_READ_LINES = 2000


class ReadFileArgs(Arguments):
    path: str = Field(description="File path, relative to the workspace.")
    offset: int | None = Field(None, ge=1, description="First line to show (1-based).")
    limit: int | None = Field(None, ge=1, description="How many lines to show (default 2000).")


class ReadFile(BlockingTool[ReadFileArgs]):
    name = "read_file"
    description = (
        "Read a text file. Returns its lines numbered from 1 (cat -n style). "
        "Use offset and limit to page through long files."
    )
    arguments = ReadFileArgs
    permission = "read"
    target, target_kind = "path", "path"
    shows_contents = True

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        return f"Read {cls.preview(args)}"

    def run_blocking(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.workspace, args.path, must_exist=True)
        display = relative(ctx.workspace, path)
        paged = args.offset is not None or args.limit is not None
        total: int | None
        fd = open_regular(ctx.workspace, path, display, links=ctx.links_approved)
        try:
            if paged and os.fstat(fd).st_size > ctx.settings.max_read_bytes:
                lines = _read_lines_streaming(fd, display, args.offset or 1, args.limit or DEFAULT_READ_LINES)
                total = None
            else:
                text = decode_text(read_bounded(fd, ctx.settings.max_read_bytes, display), display)
                all_lines = text.splitlines()
                total = len(all_lines)
                start = (args.offset or 1) - 1
                if total and start >= total:
                    raise ToolError(f"offset {args.offset} is past the end of '{display}' ({counted(total, 'line')})")
                lines = all_lines[start : start + (args.limit or DEFAULT_READ_LINES)]
        finally:
            os.close(fd)
        first = args.offset or 1
        body = "\n".join(
            f"{number:6}\t{_clip(line)}" for number, line in enumerate(lines, start=first)
        )
        shown_to = first + len(lines) - 1
        if total is None:
            footer = f"\n[lines {first}-{shown_to} of a large file]"
        elif not total:
            footer = "[empty file]"
        elif shown_to < total or first > 1:
            footer = f"\n[lines {first}-{shown_to} of {total}]"
        else:
            footer = ""
        output = truncate_middle(body + footer, ctx.settings.max_output_chars)
        return ToolResult(ok=True, output=output)


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " [line cut]"


def _read_lines_streaming(fd: int, display: str, offset: int, limit: int) -> list[str]:
    """Page through a file too large to read whole, line by line (``fd`` stays open)."""
    with open(os.dup(fd), "rb") as handle:
        if looks_binary(handle.read(8192)):
            raise ToolError(f"'{display}' is a binary file; it cannot be shown as text")
        handle.seek(0)
        lines: list[str] = []
        for number, raw in enumerate(handle, start=1):
            if number < offset:
                continue
            if len(lines) >= limit:
                break
            lines.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    if not lines:
        raise ToolError(f"offset {offset} is past the end of '{display}'")
    return lines


class WriteFileArgs(Arguments):
    path: str = Field(description="File path, relative to the workspace. Parent folders are created.")
    content: str = Field(description="The whole new content of the file.")


class WriteFile(BlockingTool[WriteFileArgs]):
    name = "write_file"
    description = "Create a file or replace its whole content. Prefer edit_file for small changes."
    arguments = WriteFileArgs
    permission = "write"
    target, target_kind = "path", "path"
    changes_files = "when_ok"

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        content = args.get("content")
        lines = count_lines(content) if isinstance(content, str) else 0
        return f"Write {cls.preview(args)} ({counted(lines, 'line')})"

    def run_blocking(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.workspace, args.path)
        display = relative(ctx.workspace, path)
        existed = os.path.lexists(path)
        _write_preserving_mode(ctx.workspace, path, display, args.content, create=True, links=ctx.links_approved)
        lines = count_lines(args.content)
        verb = "Overwrote" if existed else "Created"
        return ToolResult(
            ok=True, output=f"{verb} {display} ({counted(lines, 'line')})", files_changed=(display,)
        )


def count_lines(text: str) -> int:
    """Lines in ``text``, counting a last line without a newline."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _write_preserving_mode(
    workspace: Path, path: Path, display: str, content: str, *, create: bool, links: bool
) -> None:
    """Write ``content`` exactly as given (no newline translation) over the file, in place.

    In place rather than through a temporary file renamed over it, so the file keeps its mode,
    owner and other names, as an editor saving it would."""
    fd = open_regular(workspace, path, display, write=True, create=create, links=links)
    try:
        rewrite(fd, content.encode("utf-8"))
    finally:
        os.close(fd)


class EditFileArgs(Arguments):
    path: str = Field(description="File path, relative to the workspace.")
    old_string: str = Field(description="Exact text to replace; must occur exactly once unless replace_all.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of exactly one.")


class EditFile(BlockingTool[EditFileArgs]):
    name = "edit_file"
    description = (
        "Replace an exact string in a file. old_string must match the file exactly (whitespace "
        "included) and be unique unless replace_all is true. Read the file first."
    )
    arguments = EditFileArgs
    permission = "write"
    target, target_kind = "path", "path"
    changes_files = "when_ok"

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        how = "every occurrence" if args.get("replace_all") else "one occurrence"
        return f"Edit {cls.preview(args)} (replace {how})"

    def run_blocking(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.workspace, args.path, must_exist=True)
        display = relative(ctx.workspace, path)
        if not args.old_string:
            raise ToolError("old_string is empty; use write_file to create or replace a whole file")
        if args.old_string == args.new_string:
            raise ToolError("old_string and new_string are identical; nothing would change")
        fd = open_regular(ctx.workspace, path, display, write=True, links=ctx.links_approved)
        try:
            return self._edit(fd, display, args, ctx)
        finally:
            os.close(fd)

    @staticmethod
    def _edit(fd: int, display: str, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        """Read, change and write back through one descriptor: the file read is the file written."""
        text = decode_text(read_bounded(fd, ctx.settings.max_read_bytes, display), display)
        old, new = args.old_string, args.new_string
        count = text.count(old)
        if count == 0 and "\r\n" in text and "\n" in old:
            # The model writes "\n"; a CRLF file needs the same edit with CRLF line ends.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = text.count(old)
        if count == 0:
            raise ToolError(f"old_string not found in {display}; read the file and copy the text exactly")
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_string occurs {count} times in {display}; add surrounding lines to make it "
                "unique, or set replace_all"
            )
        updated = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
        rewrite(fd, updated.encode("utf-8"))
        what = f"{count} occurrences" if args.replace_all and count > 1 else "1 occurrence"
        return ToolResult(ok=True, output=f"Edited {display}: replaced {what}", files_changed=(display,))


class ListFilesArgs(Arguments):
    path: str = Field(".", description="Folder to list, relative to the workspace.")
    depth: int = Field(2, ge=1, le=10, description="How many folder levels to descend.")


class ListFiles(BlockingTool[ListFilesArgs]):
    name = "list_files"
    description = (
        "List files and folders as a tree (folders end with /). Skips .git and git-ignored paths."
    )
    arguments = ListFilesArgs
    permission = "read"
    target, target_kind, target_default = "path", "path", "."

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        return f"List {cls.preview(args)}"

    def run_blocking(self, args: ListFilesArgs, ctx: ToolContext) -> ToolResult:
        root = resolve_in_workspace(ctx.workspace, args.path, must_exist=True)
        if not root.is_dir():
            raise ToolError(f"'{args.path}' is not a folder; use read_file for files")
        keep = make_filter(ctx.workspace)
        limit = ctx.settings.max_matches
        base = relative(ctx.workspace, root)
        lines = _tree_lines(root, args.depth, keep, ctx.workspace, limit)
        truncated = len(lines) > limit
        output = "\n".join(lines[:limit]) or "(empty)"
        if truncated:
            output += f"\n[listing cut at {limit} entries; list a subfolder or lower depth]"
        header = f"{base}/\n" if base != "." else ""
        return ToolResult(ok=True, output=header + output)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """Folders (and links to folders) sort first; a link whose target is gone is a file."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _tree_lines(
    root: Path, depth: int, keep: Callable[[str, bool], bool], workspace: Path, limit: int
) -> list[str]:
    """Folders first, then files, each level indented two spaces; stops past ``limit``.

    Listed through descriptors, each folder opened without following a link: a folder swapped
    for a symlink to somewhere else meanwhile is not listed (see ``fsaccess.open_dir``).
    """
    lines: list[str] = []

    def walk(folder: int, rel_folder: str, level: int) -> None:
        if len(lines) > limit:
            return
        try:
            children = sorted(os.scandir(folder), key=lambda entry: (not _is_dir(entry), entry.name))
        except OSError as error:
            lines.append(f"{'  ' * level}[cannot list: {error.strerror}]")
            return
        for child in children:
            is_dir = child.is_dir(follow_symlinks=False)
            rel = child.name if rel_folder == "." else f"{rel_folder}/{child.name}"
            if not keep(rel, is_dir):
                continue
            suffix = "/" if is_dir else ("@" if child.is_symlink() else "")
            lines.append(f"{'  ' * level}{child.name}{suffix}")
            if is_dir and level + 1 < depth:
                try:
                    inner = open_subdir(folder, child.name, rel)
                except (ToolError, OSError) as error:
                    lines.append(f"{'  ' * (level + 1)}[cannot list: {error}]")
                    continue
                try:
                    walk(inner, rel, level + 1)
                finally:
                    os.close(inner)

    top = open_dir(workspace, root, relative(workspace, root))
    try:
        walk(top, relative(workspace, root), 0)
    finally:
        os.close(top)
    return lines
