"""Resolving a path argument to a real path that is inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.tools.base import ToolError


def resolve_in_workspace(workspace: Path, raw: str, *, must_exist: bool = False) -> Path:
    """Turn a path the model gave into an absolute path inside ``workspace``.

    Relative paths are taken from the workspace; absolute paths are accepted only when they
    point inside it. Symlinks are followed before the check, so a link to ``/etc`` is refused.

    Raises:
        ToolError: the path escapes the workspace, uses ``~``, or (with ``must_exist``) is missing.
    """
    if not raw or not raw.strip():
        raise ToolError("path is empty")
    if "\x00" in raw:
        raise ToolError("path contains a NUL byte")
    if raw.startswith("~"):
        raise ToolError(f"'{raw}': '~' is not expanded; use a path relative to the workspace {workspace}")
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = workspace / candidate
    # strict=False resolves every existing prefix (symlinks included) and keeps the rest as is.
    resolved = Path(os.path.realpath(candidate))
    if resolved != workspace and workspace not in resolved.parents:
        raise ToolError(f"'{raw}' is outside the workspace {workspace}; only paths inside it can be used")
    if must_exist and not resolved.exists():
        raise ToolError(f"'{raw}' does not exist")
    return resolved


def relative(workspace: Path, path: Path) -> str:
    """The workspace-relative form of a resolved path, for messages and snapshot hints."""
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        return str(path)
    return rel.as_posix() or "."
