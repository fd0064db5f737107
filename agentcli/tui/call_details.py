"""What an edit or a command looks like in the stream: a coloured diff, the command and its last
lines of output, never escaped JSON.

Collapsed, a call shows a few of these lines under its head (the rest counted); expanded, all
of them. The approval prompt shows the same before the user answers. Computed from the call's
arguments and result only, and cached: the stream redraws running calls every half second.
"""

from __future__ import annotations

import difflib
from functools import lru_cache

from textual.content import Content

PREVIEW_LINES = 6
"""Diff or output lines under a collapsed call."""
FULL_LINES = 400
"""Lines of a diff or output an expanded call shows (the tool panel has everything)."""

DETAILED = frozenset({"edit_file", "write_file", "bash"})


def arguments_of(raw: str) -> dict[str, object]:
    import json  # on use: this module is imported for the first frame, which parses none (~1.5 ms)

    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _diff_lines(name: str, args: dict[str, object]) -> list[tuple[str, str]]:
    """(style, text) rows of the change a file tool makes."""
    if name == "edit_file":
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
        rows: list[tuple[str, str]] = []
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2):
            if line.startswith(("---", "+++")):
                continue
            if line.startswith("@@"):
                rows.append(("$text-muted", "⋯"))
            elif line.startswith("+"):
                rows.append(("$text-success", line))
            elif line.startswith("-"):
                rows.append(("$text-error", line))
            else:
                rows.append(("$text-muted", line))
        if rows and rows[0][1] == "⋯":
            rows.pop(0)
        return rows
    content = str(args.get("content", ""))
    return [("$text-success", "+" + line) for line in content.splitlines()]


@lru_cache(maxsize=128)
def call_detail(name: str, arguments: str, output: str, finished: bool, expanded: bool) -> Content | None:
    """The lines under a call's head, or None for a tool shown the generic way.

    Args:
        name: The tool.
        arguments: Its raw JSON arguments.
        output: Its result so far ('' while it runs).
        finished: Whether it has its result.
        expanded: All lines (up to ``FULL_LINES``) rather than a preview.
    """
    if name not in DETAILED:
        return None
    args = arguments_of(arguments)
    limit = FULL_LINES if expanded else PREVIEW_LINES
    if name == "bash":
        rows: list[tuple[str, str]] = []
        if expanded:
            rows.append(("bold", f"$ {args.get('command', '')}"))
        lines = output.rstrip().splitlines() if finished else []
        hidden = max(0, len(lines) - limit)
        if hidden:  # a command's end says most (the error, the summary line): keep the tail
            rows.append(("$text-muted", f"… {hidden} earlier line{'s' if hidden != 1 else ''}"
                         + ("" if expanded else " (enter expands)")))
        rows += [("$text-muted" if not expanded else "", line) for line in lines[-limit:]]
        return _join(rows) if rows else None
    rows = _diff_lines(name, args)
    if not rows:
        return None
    hidden = max(0, len(rows) - limit)
    shown = rows[:limit]
    if hidden:
        shown.append(("$text-muted", f"… {hidden} more line{'s' if hidden != 1 else ''}"
                      + ("" if expanded else " (enter expands)")))
    return _join(shown)


def _join(rows: list[tuple[str, str]]) -> Content:
    return Content("\n").join(Content.styled(text, style) if style else Content(text) for style, text in rows)


def approval_detail(tool: str, arguments: str) -> Content | None:
    """The diff of an edit or the command, for the approval prompt (a preview's worth)."""
    if tool == "bash":
        return None  # the summary already is the command
    return call_detail(tool, arguments, "", False, False)
