"""Project instructions: the AGENTS.md files that go into every system prompt.

Read afresh for every model request (a few stats and small reads), so an edit to AGENTS.md is
picked up at the next turn without restarting. Precedence, highest first: the workspace's own
file, then each folder above it up to the repository root, then the user's
``~/.config/agentcli/AGENTS.md``. In each folder ``AGENTS.md`` wins and ``CLAUDE.md`` is read
only where there is no ``AGENTS.md`` (people coming from Claude Code keep theirs working).

A repository's file that is a symlink leading out of the repository is not read: a cloned
repository could otherwise send any file the user can read (``~/.ssh/id_ed25519``) to the model in
every system prompt, which the tools refuse to do. It is listed as refused, so the user is told;
instructions shared across repositories belong in the user's own file, which may link anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentcli.config_sources import config_home

NAMES = ("AGENTS.md", "CLAUDE.md")
"""The file names looked for in each folder, the first found wins."""
MAX_CHARS = 40_000
"""Per file: an instructions file bigger than this is cut (and says so), so a stray dump cannot
fill the model's window."""


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One instructions file as read for a request."""

    path: Path
    """Where it was read from."""
    text: str
    """Its content (cut at ``MAX_CHARS``, the cut marked)."""
    scope: str
    """``workspace``, ``parent`` or ``user``: where it applies."""
    refused: str = ""
    """Why the file was not read ('' when it was): its text is then empty and the model is not
    told of it."""

    def label(self, workspace: Path) -> str:
        """The file's name for the user, with why it was not read if it was not."""
        name = display(self.path, workspace)
        return f"{name} (not read: {self.refused})" if self.refused else name


def _repository_root(workspace: Path) -> Path | None:
    """The nearest folder at or above the workspace that holds ``.git`` (a folder or a file)."""
    for folder in (workspace, *workspace.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _read_one(folder: Path) -> Path | None:
    for name in NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def _read(path: Path, scope: str) -> InstructionFile | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None  # unreadable (a dangling link, no permission): as if absent
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + f"\n[… cut: the file has {len(text):,} characters, the first {MAX_CHARS:,} are shown]"
    return InstructionFile(path=path, text=text.strip(), scope=scope)


def find_instructions(workspace: Path, user_dir: Path | None = None) -> list[InstructionFile]:
    """Every instructions file that applies to ``workspace``, highest precedence first.

    Args:
        workspace: The folder the agent works in.
        user_dir: The user's config folder (default ``~/.config/agentcli``).

    Returns:
        The files read; empty ones are left out.
    """
    workspace = workspace.resolve()
    folders = [workspace]
    root = _repository_root(workspace)
    if root is not None and root != workspace:
        folders += [parent for parent in workspace.parents if parent == root or parent.is_relative_to(root)]
    top = (root or workspace).resolve()
    found: list[InstructionFile] = []
    for index, folder in enumerate(folders):
        path = _read_one(folder)
        if path is None:
            continue
        scope = "workspace" if index == 0 else "parent"
        target = path.resolve()
        if not target.is_relative_to(top):
            found.append(InstructionFile(path=path, text="", scope=scope,
                                         refused=f"it links out of the repository, to {target}"))
        elif (item := _read(path, scope)) and item.text:
            found.append(item)
    user = (user_dir or config_home()) / "AGENTS.md"
    if user.is_file() and (item := _read(user, "user")) and item.text:
        found.append(item)
    return found


def instructions_section(files: list[InstructionFile], workspace: Path) -> str:
    """The system prompt's section for the files found ('' for none)."""
    files = [item for item in files if not item.refused]
    if not files:
        return ""
    parts = ["Project instructions (from the files below; where they disagree, an earlier one wins):"]
    for item in files:
        parts.append(f"--- {display(item.path, workspace)} ---\n{item.text}")
    return "\n\n".join(parts)


def display(path: Path, workspace: Path) -> str:
    """A file's name as the user knows it: relative to the workspace, or with ``~`` for home."""
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        pass
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
