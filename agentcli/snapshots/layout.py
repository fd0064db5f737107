"""What a git tree cannot hold: file modes other than 644/755, and empty folders.

A snapshot is a tree, so restoring one brought a 0600 file back as 0644 once it had been deleted,
deleted a folder that was empty at the snapshot, and did not recreate one removed since. The
store records the rest beside the tree, as a small JSON file per snapshot, for the snapshots a
user restores to most: a session's start and the points around each restore (the undo point).
Recording costs one walk of the workspace (pruned at ignored folders, ``.git`` and nested
repositories), about what one full capture costs, so captures after each tool do not record it.

Restoring a snapshot with a record is mode- and folder-exact (`layoutapply.apply_layout`); without one
it keeps the modes files have now and removes only the folders its deletions emptied.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.ignore import IgnoreRules, discover


@dataclass(frozen=True)
class Layout:
    """The parts of a workspace a tree leaves out."""

    modes: dict[str, int] = field(default_factory=dict)
    """Permission bits of the regular files whose mode is not what a restore would give them
    (``0o666``/``0o777`` less the umask, by their executable bit)."""
    empty_dirs: tuple[str, ...] = ()
    """Folders with nothing in them at all (a folder holding only ignored files is not empty)."""


def default_mode(executable: bool, umask: int) -> int:
    """The mode a restore gives a new file, as git checks one out."""
    return (0o777 if executable else 0o666) & ~umask


def scan_layout(workspace: Path, umask: int, *, top: str = "", rules: IgnoreRules | None = None) -> Layout:
    """Walk the workspace for unusual modes and empty folders, skipping what git ignores.

    Args:
        workspace: The workspace folder.
        umask: The process umask (what "the default mode" is relative to).
        top: Walk only this folder (workspace-relative), which the caller knows is neither
            ignored nor inside a nested repository.
        rules: The ignore rules, when the caller has them already.

    Returns:
        The modes and empty folders, workspace-relative with ``/`` separators.
    """
    if rules is None:
        rules = discover(workspace).rules()
    modes: dict[str, int] = {}
    empty: list[str] = []
    stack = [top]
    while stack:
        rel_dir = stack.pop()
        folder = workspace / rel_dir if rel_dir else workspace
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if not entries and rel_dir:
            empty.append(rel_dir)
            continue
        names = {entry.name for entry in entries}
        if rel_dir and ".git" in names:
            continue  # a nested repository keeps its own layout
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name == ".git" and not rel_dir:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not rules.is_ignored(rel, True):
                        stack.append(rel)
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                mode = stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode)
            except OSError:
                continue
            # Ignore rules are asked only for the few files with an unusual mode: most have none.
            if mode != default_mode(bool(mode & 0o100), umask) and not rules.is_ignored(rel, False):
                modes[rel] = mode
    return Layout(modes=modes, empty_dirs=tuple(sorted(empty)))


class LayoutRecords:
    """One JSON file per snapshot id in the store's own folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def save(self, snapshot_id: str, layout: Layout) -> None:
        target = self.folder / f"{snapshot_id}.json"
        temporary = target.with_suffix(".tmp")
        payload = {
            "modes": {path: oct(mode) for path, mode in sorted(layout.modes.items())},
            "empty_dirs": list(layout.empty_dirs),
        }
        # One line, written with raw descriptor calls: a restore saves two of these. The
        # folder is made when missing, not asked for on every save.
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except FileNotFoundError:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(json.dumps(payload, separators=(",", ":")).encode())
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temporary, target)

    def load(self, snapshot_id: str) -> Layout | None:
        """The record of a snapshot, or None when it has none (or an unreadable one)."""
        try:
            data = json.loads((self.folder / f"{snapshot_id}.json").read_text(encoding="utf-8"))
            modes = {str(path): int(mode, 8) for path, mode in data["modes"].items()}
            return Layout(modes=modes, empty_dirs=tuple(str(path) for path in data["empty_dirs"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def forget(self, keep: set[str]) -> None:
        """Drop the records of snapshots that no longer exist (after a gc)."""
        if not self.folder.is_dir():
            return
        for path in self.folder.glob("*.json"):
            if path.stem not in keep:
                path.unlink(missing_ok=True)
