"""Path hints: widened to what a walk of the tree would judge them with."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
from pygit2 import C, ffi


def widen_hints(workspace: Path, index: pygit2.Index, hinted: set[str]) -> set[str]:
    """Widens each hint to what a full walk would judge it with.

    - A path inside a nested repository becomes the repository: a full walk records it as a
      gitlink and never looks inside, so neither may a hint.
    - A path inside a directory holding no tracked entry becomes the outermost such directory,
      so the untracked-directory guard counts all its files, as a walk would.

    Args:
        workspace: The workspace directory.
        index: The shadow index (which directories hold tracked entries).
        hinted: Safe workspace-relative paths.

    Returns:
        The paths to look at.
    """
    tracked: dict[str, bool] = {}
    repository: dict[str, bool] = {}
    root = os.fsdecode(workspace)
    out: set[str] = set()
    for path in hinted:
        parts = path.split("/")
        if ".git" in parts:
            cut = parts.index(".git")
            if cut == 0:
                continue
            parts = parts[:cut]
        target = "/".join(parts)
        for i in range(1, len(parts)):
            ancestor = "/".join(parts[:i])
            known = tracked.get(ancestor)
            if known is None:
                known = tracked[ancestor] = index_has_prefix(index, ancestor + "/")
            nested = repository.get(ancestor)
            if nested is None and known:
                nested = repository[ancestor] = os.path.lexists(f"{root}/{ancestor}/.git")
            if not known or nested:
                target = ancestor
                break
        out.add(target)
    return out


def index_lower_bound(index: pygit2.Index, key: str, lo: int = 0, hi: int | None = None) -> int:
    """The first entry in [lo, hi) whose path is not below `key`, by binary search (entries are sorted)."""
    raw = index._index
    target = os.fsencode(key)
    if hi is None:
        hi = C.git_index_entrycount(raw)
    while lo < hi:
        mid = (lo + hi) // 2
        if ffi.string(C.git_index_get_byindex(raw, mid).path) < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def index_has_prefix(index: pygit2.Index, prefix: str) -> bool:
    """Tells whether any index entry starts with `prefix`."""
    raw = index._index
    lo = index_lower_bound(index, prefix)
    if lo == C.git_index_entrycount(raw):
        return False
    path: bytes = ffi.string(C.git_index_get_byindex(raw, lo).path)
    return path.startswith(os.fsencode(prefix))
