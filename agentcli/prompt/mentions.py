"""@-mentions: completing workspace paths, and attaching the mentioned files to a message.

``@src/app.py`` attaches the file's content with line numbers (cut at ``MAX_LINES`` /
``MAX_BYTES``); ``@src/`` attaches a listing of the folder. Completion offers the files git
would track (``git ls-files``: ignored paths left out) minus secret files (``.env``, keys);
either is still attached when its path is typed in full. A mention that names nothing in the
workspace (an e-mail address, a decorator) stays plain text.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

MAX_LINES = 2000
MAX_BYTES = 200_000
MAX_LISTING = 200
"""Entries of an attached folder listing."""
MAX_FILES = 20_000
"""Paths offered for completion; a bigger workspace is cut (typed paths still attach)."""
_MENTION = re.compile(r"(?<![\w@])@([^\s@]+)")
_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True, slots=True)
class Attachment:
    """One mentioned path and what goes to the model for it."""

    path: str
    """Relative to the workspace, ``/``-separated; folders end with ``/``."""
    text: str
    """The block appended to the message."""


@dataclass
class Attached:
    """A message's mentions, resolved."""

    attachments: list[Attachment] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Mentions of real paths that could not be attached (outside the workspace, unreadable)."""

    @property
    def text(self) -> str:
        return "\n\n".join(a.text for a in self.attachments)

    @property
    def paths(self) -> list[str]:
        return [a.path for a in self.attachments]


def mentioned(text: str) -> list[str]:
    """The paths mentioned in ``text`` (``@path``), in order, without repeats."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        raw = match.group(1).rstrip(_TRAILING) or match.group(1)
        if raw not in found:
            found.append(raw)
    return found


def attach(workspace: Path, text: str) -> Attached:
    """Resolve every mention in ``text`` to an attachment (blocking: run it in a thread)."""
    workspace = workspace.resolve()
    result = Attached()
    for raw in mentioned(text):
        candidate = (workspace / raw).resolve() if not os.path.isabs(raw) else Path(raw).resolve()
        if not candidate.exists():
            continue  # not a path: an address, a handle, a decorator
        if not candidate.is_relative_to(workspace):
            result.problems.append(f"@{raw} is outside the workspace; not attached")
            continue
        rel = candidate.relative_to(workspace).as_posix() or "."
        try:
            if candidate.is_dir():
                result.attachments.append(Attachment(rel.rstrip("/") + "/", _listing(candidate, rel)))
            else:
                result.attachments.append(Attachment(rel, _file_block(candidate, rel)))
        except OSError as error:
            result.problems.append(f"@{raw} cannot be read: {error.strerror or error}")
    return result


def _file_block(path: Path, rel: str) -> str:
    data = path.read_bytes()[: MAX_BYTES + 1]
    if b"\0" in data[:8192]:
        return f'<file path="{rel}">\n(binary file, {path.stat().st_size:,} bytes; not shown)\n</file>'
    text = data[:MAX_BYTES].decode("utf-8", errors="replace")
    lines = text.splitlines()
    cut = ""
    if len(lines) > MAX_LINES or len(data) > MAX_BYTES:
        lines = lines[:MAX_LINES]
        cut = f"\n[… cut after {len(lines)} lines; read_file with an offset shows the rest]"
    numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=1))
    return f'<file path="{rel}">\n{numbered}{cut}\n</file>'


def _listing(folder: Path, rel: str) -> str:
    entries = sorted(os.scandir(folder), key=lambda e: (not e.is_dir(), e.name))
    names = [e.name + ("/" if e.is_dir() else "") for e in entries if e.name != ".git"]
    shown = names[:MAX_LISTING]
    more = f"\n… {len(names) - MAX_LISTING} more" if len(names) > MAX_LISTING else ""
    return f'<folder path="{rel.rstrip("/")}/">\n' + "\n".join(shown) + more + "\n</folder>"


def workspace_paths(workspace: Path) -> list[str]:
    """Files and folders to offer after ``@`` (blocking: run it in a thread).

    In a git repository, what ``git ls-files`` lists (tracked and untracked, ignored ones left
    out); elsewhere a walk that skips hidden folders. Secret files are left out either way.
    """
    from agentcli.tools.paths import is_secret_path

    files = _git_files(workspace)
    if files is None:
        files = _walk(workspace)
    files = [f for f in files if not is_secret_path(f)][:MAX_FILES]
    folders = sorted({parent for f in files for parent in _parents(f)})
    return folders + files


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]


def _git_files(workspace: Path) -> list[str] | None:
    try:
        done = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=workspace,
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return sorted(p for p in done.stdout.decode("utf-8", errors="replace").split("\0") if p)


def _walk(workspace: Path) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
        base = Path(root).relative_to(workspace).as_posix()
        found += [f"{base}/{name}" if base != "." else name for name in sorted(files)]
        if len(found) > MAX_FILES:
            break
    return found


def complete(paths: list[str], typed: str, limit: int = 12) -> list[str]:
    """The paths for the menu while ``@typed`` is being written, best first.

    Ranks: the file name starts with it, the path starts with it, the path contains it, the
    letters occur in order (fuzzy); shorter paths first within a rank.
    """
    if not typed:
        return [p for p in paths if "/" not in p.rstrip("/")][:limit]
    needle = typed.lower()
    ranked: list[tuple[int, int, str]] = []
    for path in paths:
        low = path.lower()
        name = low.rstrip("/").rsplit("/", 1)[-1]
        if name.startswith(needle):
            rank = 0
        elif low.startswith(needle):
            rank = 1
        elif needle in low:
            rank = 2
        elif _subsequence(needle, low):
            rank = 3
        else:
            continue
        ranked.append((rank, len(path), path))
    ranked.sort()
    return [path for _, _, path in ranked[:limit]]


def _subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)
