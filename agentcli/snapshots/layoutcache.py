"""The workspace's layout (see `layout.py`) kept up to date from the watcher's paths.

A restore records the layout three times (the undo point, the state its modes are compared
with, the result), and each full scan `lstat`s every file: 70% of a 10-file restore at 10k
files. While the watcher vouches for every change, the layout is scanned once and afterwards
only the paths it reports are looked at again: each such path's old records go, it is scanned
anew (a whole subtree for a directory), and its parent's emptiness is judged again. Looking at
a path twice changes nothing, so a path reported again later is harmless.

The cache is dropped whenever the watcher cannot vouch (the capture walked the tree), a hint
cannot be placed in the workspace, a `.gitignore` changed (even by the restore itself), or the
ignore rules from outside the tree or the umask changed; the next record is then a full scan.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from agentcli.ignore import IgnoreRules, IgnoreSources, discover
from agentcli.snapshots.capture import stat_key
from agentcli.snapshots.guards import safe_relative_path
from agentcli.snapshots.layout import Layout, default_mode, scan_layout
from agentcli.snapshots.restorechecks import plain_path


class LayoutCache:
    """The layout as of the last scan plus the paths changed since.

    Args:
        workspace: The resolved workspace directory.
    """

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._root = os.fsdecode(workspace)  # joined as strings: pathlib costs more than the lstat
        self._modes: dict[str, int] | None = None
        self._empty: set[str] = set()
        self._pending: set[str] = set()
        self._key: tuple[object, ...] | None = None
        self._read_for: tuple[IgnoreSources, tuple[object, ...]] | None = None
        """The exclude files' state as read for the last `sources` passed in (see `current`)."""

    def invalidate(self) -> None:
        """Forgets the layout: changes were made that no one reported."""
        self._modes = None
        self._pending.clear()

    def note(self, paths: Iterable[str]) -> None:
        """Records paths (files or directories) that may have changed since the last look."""
        if self._modes is None:
            return
        for path in paths:
            if os.path.isabs(path):
                try:
                    path = os.path.relpath(path, self.workspace)
                except ValueError:
                    self.invalidate()
                    return
            parts = path.replace(os.sep, "/").split("/")
            lowered = [part.lower() for part in parts]
            if ".git" in lowered:
                # Inside a repository's `.git`: what changed is whether its folder is a
                # repository (the workspace's own `.git` holds no layout).
                parts = parts[: lowered.index(".git")]
                if not [part for part in parts if part not in ("", ".")]:
                    continue
            joined = "/".join(parts)
            # Most paths are plain already; pathlib's normalization cost more than the look.
            rel = joined if plain_path(joined) else safe_relative_path(joined)
            if rel is None or rel.rpartition("/")[2] == ".gitignore":
                # Unplaceable, or what is ignored may have changed anywhere below it.
                self.invalidate()
                return
            self._pending.add(rel)

    def wrote(self, files: Mapping[str, tuple[str, os.stat_result]], links: Iterable[str], umask: int) -> list[str]:
        """Learns files and links this process has just written, without looking at them again.

        A regular file with the default mode (`files`: the stat data of the descriptor it was
        written through, after its rename) or a link leaves no record and makes every folder
        above it non-empty, whatever those folders are: exactly what `_look_again` concludes
        after an `lstat` of it and of each folder above. Anything else — an unusual mode (whose
        record depends on the ignore rules), a name the notes treat apart — is returned, for
        the caller to `note`.

        Args:
            files: Workspace-relative path -> (blob, stat data) of each regular file written.
            links: Workspace-relative paths of the links written.
            umask: The umask the modes are judged against (as `current` is given).

        Returns:
            The paths not learnt.
        """
        modes = self._modes
        if modes is None:
            return []  # nothing kept: the next look scans anyway
        rest: list[str] = []
        learnt: list[str] = []
        for rel, (_blob, st) in files.items():
            mode = stat.S_IMODE(st.st_mode)
            if mode != default_mode(bool(mode & 0o100), umask):
                rest.append(rel)
            else:
                learnt.append(rel)
        learnt.extend(links)
        for rel in learnt:
            name = rel.rpartition("/")[2]
            if not plain_path(rel) or name == ".gitignore" or ".git" in rel.lower().split("/"):
                rest.append(rel)
                continue
            self._pending.discard(rel)
            modes.pop(rel, None)
            prefix = rel + "/"
            # What was a folder here (a file replaced it) held records no longer true.
            if modes and any(p.startswith(prefix) for p in modes):
                for path in [p for p in modes if p.startswith(prefix)]:
                    del modes[path]
            if self._empty:
                self._empty = {d for d in self._empty if d != rel and not d.startswith(prefix)}
                parts = rel.split("/")
                self._empty.difference_update("/".join(parts[:i]) for i in range(1, len(parts)))
        return rest

    def current(self, umask: int, *, trusted: bool, sources: IgnoreSources | None = None) -> Layout:
        """The layout now.

        Args:
            umask: The process umask (what "the default mode" is relative to).
            trusted: Every change since the last call was passed to `note` (the watcher
                vouches); otherwise the workspace is scanned whole.
            sources: The ignore sources, when the caller read them moments ago (a restore
                asks three times; finding them costs more than the rest of a small look).
                The exclude files they name are read once per such object: a restore's
                looks judge against the rules as it found them at its start.
        """
        read_for = self._read_for
        if sources is not None and read_for is not None and read_for[0] is sources:
            excludes_state = read_for[1]
        else:
            sources = sources or discover(self.workspace)
            excludes_state = (sources.workspace_excludes(), stat_key(sources.excludes_file), sources.ignore_case)
            self._read_for = (sources, excludes_state)
        key = (umask, *excludes_state)
        if not trusted or self._modes is None or key != self._key:
            layout = scan_layout(self.workspace, umask)
            # Kept only while the watcher vouches: changes made before it did were never noted.
            self._modes = dict(layout.modes) if trusted else None
            self._empty = set(layout.empty_dirs)
            self._pending.clear()
            self._key = key
            return layout
        if self._pending:
            rules = sources.rules()
            states: dict[str, str] = {}
            for rel in sorted(self._pending):
                self._look_again(rel, rules, umask, states)
            self._pending.clear()
        return Layout(modes=dict(self._modes), empty_dirs=tuple(sorted(self._empty)))

    def _look_again(self, rel: str, rules: IgnoreRules, umask: int, states: dict[str, str]) -> None:
        modes = self._modes
        assert modes is not None
        parts = rel.split("/")
        for i in range(1, len(parts)):
            ancestor = "/".join(parts[:i])
            state = states.get(ancestor)
            if state is None:
                state = states[ancestor] = _folder_state(os.path.join(self._root, ancestor), ancestor, rules)
            if state == "gone":
                # Everything below a folder that is gone went with it: judge the folder instead.
                if states.get(ancestor + "/") is None:
                    states[ancestor + "/"] = "done"
                    self._look_again(ancestor, rules, umask, states)
                return
            if state == "closed":
                return  # no record lives below an ignored folder or a nested repository
        prefix = rel + "/"
        modes.pop(rel, None)
        # Per path, so the sets are scanned only when a folder could hold records.
        if modes and any(p.startswith(prefix) for p in modes):
            for path in [p for p in modes if p.startswith(prefix)]:
                del modes[path]
        if self._empty:
            self._empty = {d for d in self._empty if d != rel and not d.startswith(prefix)}
        try:
            info: os.stat_result | None = os.lstat(os.path.join(self._root, rel))
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            if not rules.is_ignored(rel, True):
                below = scan_layout(self.workspace, umask, top=rel, rules=rules)
                modes.update(below.modes)
                self._empty.update(below.empty_dirs)
        elif info is not None and stat.S_ISREG(info.st_mode):
            mode = stat.S_IMODE(info.st_mode)
            if mode != default_mode(bool(mode & 0o100), umask) and not rules.is_ignored(rel, False):
                modes[rel] = mode
        if info is not None:
            # Something is here: none of the folders holding it is empty.
            if self._empty:
                self._empty.difference_update("/".join(parts[:i]) for i in range(1, len(parts)))
            return
        parent = rel.rpartition("/")[0]
        if parent:
            try:
                empty = not os.listdir(os.path.join(self._root, parent))
            except OSError:
                empty = False
            if empty:
                self._empty.add(parent)
            else:
                self._empty.discard(parent)


def _folder_state(full: str, rel: str, rules: IgnoreRules) -> str:
    """ "gone" (missing, or no longer a folder), "closed" (ignored, or a repository) or "open"."""
    try:
        if not stat.S_ISDIR(os.lstat(full).st_mode):
            return "gone"
    except OSError:
        return "gone"
    if rules.is_ignored(rel, True) or os.path.lexists(os.path.join(full, ".git")):
        return "closed"
    return "open"
