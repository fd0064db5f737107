"""Cuts a workspace into groups of paths with about as many index entries each, for the split walk.

Cutting was the split's biggest fixed cost: at 10k files it listed every big directory's tree and
found each child's range of index entries by two binary searches in Python (~5.6k cffi lookups),
11 ms beside a 27 ms walk under load. What the index says about a directory depends only on its
tree's id, so each tree's listing and entry count are kept by id from one cut to the next: a walk
after a small change looks up only the trees on the changed paths. What the workspace holds
(new names, a directory replaced by a link or a nested repository) is read afresh every time,
since no tree says it; every name there ends up in some group, so a stale count only unbalances
the groups, it never hides a path.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pygit2
from pygit2.enums import ObjectType

from agentcli.snapshots.hints import index_lower_bound

_Listing = list[tuple[str, pygit2.Oid | None]]
"""A tree's entries in the tree's (and the index's) order: name, and the id of a subtree or None."""


class Groups:
    """Cuts one workspace into groups, remembering what the trees it saw say about the index.

    Args:
        workspace: The workspace directory.
        unit_share: A directory holding more than 1/(unit_share x workers) of the entries is cut
            into its children.
    """

    def __init__(self, workspace: Path, unit_share: int) -> None:
        self._workspace = workspace
        self._unit_share = unit_share
        self._listings: dict[pygit2.Oid, _Listing] = {}
        self._counts: dict[pygit2.Oid, int] = {}

    def cut(
        self,
        repo: pygit2.Repository,
        index: pygit2.Index,
        tree: pygit2.Tree,
        count: int,
        workers: int,
        is_ignored_dir: Callable[[str], bool],
    ) -> list[list[str]]:
        """Cuts the workspace into at most `workers` lists of paths with about as many entries each.

        The names at each level are the directory's and the index tree's: a deleted file is only
        in the second, a new one only in the first, and each must fall in some group. `tree` is
        `index`'s own tree (its entries are the index's, in the same order).
        """
        limit = max(1, count // (self._unit_share * workers))
        units: list[tuple[int, str]] = []
        # Only what this cut used is kept: the caches hold one tree's cut directories, not history.
        listings: dict[pygit2.Oid, _Listing] = {}
        counts: dict[pygit2.Oid, int] = {}
        # (directory, its tree's id, the range of index entries below it)
        todo: list[tuple[str, pygit2.Oid, int, int]] = [("", tree.id, 0, count)]
        while todo:
            parent, subtree, lo, hi = todo.pop()
            listing = self._listing(repo, subtree, listings)
            names = {name for name, _ in listing}
            try:
                on_disk = [e.name for e in os.scandir(self._workspace / parent if parent else self._workspace)]
            except OSError:
                if not parent:
                    return []
                units.append((1, parent))  # vanished or unreadable: the diff reports what it finds
                continue
            units.extend(
                (1, f"{parent}/{name}" if parent else name)
                for name in on_disk
                if name not in names and (parent or name != ".git")
            )
            pos = lo  # the index holds the tree's entries in the tree's order: each child's range starts here
            for name, child in listing:
                rel = f"{parent}/{name}" if parent else name
                if child is None:
                    pos += 1
                    if rel != ".git":
                        units.append((1, rel))
                    continue
                held = self._counts.get(child)
                if held is None:
                    end = index_lower_bound(index, rel + "0", min(pos, hi), hi)  # "0" sorts right after "/"
                    held = max(end - pos, 1)
                counts[child] = held
                start, pos = pos, pos + held
                if (
                    held > limit
                    and os.path.isdir(self._workspace / rel)
                    and not os.path.islink(self._workspace / rel)
                    and not os.path.lexists(self._workspace / rel / ".git")  # a nested repository is judged whole
                    and not is_ignored_dir(rel)
                ):
                    todo.append((rel, child, start, min(pos, hi)))
                else:
                    units.append((held, rel))
        self._listings, self._counts = listings, counts
        # Largest first, each to the lightest group: balanced within one unit's size.
        units.sort(key=lambda u: (-u[0], u[1]))
        groups: list[list[str]] = [[] for _ in range(workers)]
        weight = [0] * workers
        for held, rel in units:
            lightest = weight.index(min(weight))
            groups[lightest].append(rel)
            weight[lightest] += held
        return [sorted(g) for g in groups if g]

    def _listing(self, repo: pygit2.Repository, oid: pygit2.Oid, used: dict[pygit2.Oid, _Listing]) -> _Listing:
        """A tree's entries, from the last cut when it saw the same tree."""
        listing = self._listings.get(oid)
        if listing is None:
            tree = repo[oid].peel(pygit2.Tree)
            listing = [
                (e.name, e.id if e.type == ObjectType.TREE else None) for e in tree if e.name is not None
            ]
        used[oid] = listing
        return listing
