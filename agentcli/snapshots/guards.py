"""Checks that protect the user before anything is captured or restored.

`is_unsafe_workspace` answers "should we ask first?": snapshotting a home directory or a
filesystem root would hash the user's whole life and fill the store, which is how peers ended
up with stores of hundreds of GB. The size and file-count limits on untracked content live in
`capture.py`, where the diff that finds untracked files is made.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from agentcli.snapshots.errors import InvalidSessionId

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def is_unsafe_workspace(path: Path) -> str | None:
    """Tells whether `path` is too broad a directory to snapshot without confirmation.

    Args:
        path: The workspace directory.

    Returns:
        A reason fit to show the user (the caller then asks for confirmation, or needs
        `--yes` when headless), or None when the directory is an ordinary project directory.
    """
    resolved = Path(path).expanduser().resolve()
    if resolved.parent == resolved:
        return f"{resolved} is a filesystem root; snapshotting it would copy the whole disk"
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError):  # no HOME and no passwd entry: nothing to compare with
        return None
    if resolved == home:
        return f"{resolved} is your home directory; snapshots would include every file in it"
    if resolved in home.parents:
        # /home or /Users: broader than a home directory, so at least as dangerous.
        return f"{resolved} contains your home directory; snapshots would include every file in it"
    return None


def check_session_id(session_id: str) -> str:
    """Validates a session id for use in ref names and file names.

    Args:
        session_id: The id the session layer chose.

    Returns:
        The id, unchanged.

    Raises:
        InvalidSessionId: When the id has characters a git ref or a file name cannot hold.
    """
    if not _SESSION_ID.match(session_id) or ".." in session_id or session_id.endswith(".lock"):
        raise InvalidSessionId(
            f"session id {session_id!r} cannot be stored: use 1-128 characters from "
            "A-Z a-z 0-9 . _ -, starting with a letter or digit, without '..' or a '.lock' suffix"
        )
    return session_id


def safe_relative_path(path: str) -> str | None:
    """Normalizes a workspace-relative path and rejects anything that could escape it.

    Used on every path that comes from a tree before the filesystem is touched, and on path
    hints from tools.

    Args:
        path: A path relative to the workspace, `/`-separated.

    Returns:
        The normalized path, or None when the path is absolute, climbs out with `..`, is empty,
        or has a `.git` component (the user's repository is never written).
    """
    if not path or "\0" in path:
        return None
    pure = PurePosixPath(path.replace(os.sep, "/"))
    if pure.is_absolute():
        return None
    parts = [p for p in pure.parts if p not in ("", ".")]
    if not parts:
        return None
    for part in parts:
        # Case-insensitive: on macOS and Windows `.GIT` is the same directory as `.git`.
        if part == ".." or part.lower() == ".git":
            return None
    return "/".join(parts)
