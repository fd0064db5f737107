"""After the bulk refresh of touched files: what a walk of the tree would still find, without it.

`restat.refresh_touched` has just `lstat`ed every entry of the index and hashed the stale ones.
The walk that used to follow (libgit2's diff, ~1.1 s of a 2.9 s capture at 100k files on a busy
machine) `lstat`s every file a second time, only to find what the bulk pass already knows plus
the names the index lacks. So the bulk pass records what it saw (`Seen`), and this module lists
the directories holding entries (one `scandir` each: ~80 ms at 100k files) for names the index
lacks. The diff that updates the index then looks at exactly these paths
(`DISABLE_PATHSPEC_MATCH`, as after `write_file`):

- entries the bulk pass could not vouch for: changed size, mode or type, a different blob, gone,
  not regular files (links, gitlinks), conflict stages, and "racily clean" ones (an mtime not
  older than the index file's: a same-size edit in the same tick would look unchanged);
- names in those directories that are neither entries nor directories holding entries: new
  files, new or ignored directories (judged whole by libgit2, as a walk does).

It answers None (walk as before) when it cannot be sure: a directory holding entries is now a
file, a link or a nested repository, or is unreadable, or hints would outnumber a fifth of the entries
(a walk is then as cheap). Paths changed only in memory are the caller's to add.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_HINT_SHARE = 0.2
"""More hints than this share of the entries: the walk is as cheap, and simpler."""


@dataclass
class Seen:
    """What the bulk pass saw of every index entry."""

    index_mtime_ns: int
    """The index file's mtime when the pass started (entries not older are racily clean)."""
    paths: set[bytes] = field(default_factory=set)
    """Every entry's path."""
    dirs: set[bytes] = field(default_factory=set)
    """Every directory holding an entry, and their parents (b"" is the workspace)."""
    suspects: list[bytes] = field(default_factory=list)
    """Entries the pass could not vouch for."""

    def add(self, path: bytes) -> None:
        """Records an entry and the directories above it."""
        self.paths.add(path)
        parent = path.rpartition(b"/")[0]
        dirs = self.dirs
        while parent not in dirs:
            dirs.add(parent)
            if not parent:
                break
            parent = parent.rpartition(b"/")[0]


def remaining_paths(workspace: Path, seen: Seen) -> set[str] | None:
    """The paths a walk would still report after the bulk pass, or None to walk after all.

    Args:
        workspace: The workspace directory.
        seen: What the bulk pass recorded.

    Returns:
        Workspace-relative paths for the updating diff.
    """
    root = os.fsencode(workspace)
    hints: set[bytes] = set(seen.suspects)
    limit = max(64, int(MAX_HINT_SHARE * len(seen.paths)))
    paths, dirs = seen.paths, seen.dirs
    for rel in dirs:
        full = root + b"/" + rel if rel else root
        try:
            st = os.lstat(full)
            if not stat.S_ISDIR(st.st_mode):
                return None  # a directory of entries became a file or a link: let the walk judge
            names = [entry.name for entry in os.scandir(full)]
        except FileNotFoundError:
            continue  # gone with its entries, which the bulk pass could not find: they are hinted
        except OSError:
            return None
        prefix = rel + b"/" if rel else b""
        for name in names:
            child = prefix + name
            if child in paths or child in dirs:
                continue
            if name == b".git":
                if rel:
                    return None  # a directory of entries became a repository: the walk knows how
                continue
            hints.add(child)
        if len(hints) > limit:
            return None
    return {os.fsdecode(p) for p in hints}
