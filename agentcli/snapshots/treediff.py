"""The entries that differ between two trees, found by skipping the subtrees they share.

libgit2's tree-to-tree diff walks every entry of both trees, equal subtrees included: 19 ms at
100k files to find one changed file, most of a small restore there. Trees are content
addressed, so a subtree with the same id on both sides holds nothing to compare; this walk
reads only the trees along the changed paths, and of each only the entries that differ reach
Python (git's tree format is split by a regular expression and the two sides compared as sets;
a pygit2 object per entry, or a parse loop in Python, cost more than libgit2's whole walk at 10k
files).

The answer is what `Repository.diff(old, new)` reports without rename or type-change detection:
a path whose type changes (a file where a folder, a symlink or a nested repository was) comes as
a deletion plus an addition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pygit2
from pygit2.enums import FileMode

_TREE = int(FileMode.TREE)
_ZERO = "0" * 40
_TYPE_MASK = 0o170000  # git's GIT_MODE_TYPE: file, symlink, gitlink, tree
_ENTRY = re.compile(rb"([0-7]+) ([^\x00]+)\x00(.{20})", re.DOTALL)


@dataclass(frozen=True)
class EntryChange:
    """One path that differs; `old_mode`/`new_mode` are 0 and the ids None where it is absent."""

    raw_path: bytes
    old_mode: int
    old_id: pygit2.Oid | None
    new_mode: int
    new_id: pygit2.Oid | None


ENTRIES_PER_TREE_READ = 250
"""A tree costs the walk ~20 µs (read, split, compare); libgit2's diff costs ~75 ns per entry
of the whole tree (0.75 ms at 10k files). So the walk pays while it reads fewer trees than the
tree has entries / 250; a change spread over more folders is cheaper libgit2's way."""


def walk_budget(entries: int) -> int:
    """How many trees the walk may read in a tree of `entries` files before libgit2 is cheaper."""
    return max(8, entries // ENTRIES_PER_TREE_READ)


def tree_changes(repo: pygit2.Repository, old_tree: str, new_tree: str, *, max_trees: int) -> list[EntryChange]:
    """Every non-tree entry (file, symlink, gitlink) that differs between two trees.

    Args:
        repo: The repository holding both trees.
        old_tree: Hex id of the old tree.
        new_tree: Hex id of the new tree.
        max_trees: Trees to read before leaving it all to libgit2's diff (see `walk_budget`).

    Returns:
        The changes, in no particular order.
    """
    reads = 0
    out: list[EntryChange] = []
    stack: list[tuple[bytes, bytes | None, bytes | None]] = [
        (b"", pygit2.Oid(hex=old_tree).raw, pygit2.Oid(hex=new_tree).raw)
    ]
    while stack:
        prefix, old_id, new_id = stack.pop()
        if old_id == new_id:
            continue
        reads += (old_id is not None) + (new_id is not None)
        if reads > max_trees:
            stack.append((prefix, old_id, new_id))
            if len(stack) <= max_trees:
                # Few subtrees left: what was read is kept and libgit2 diffs only those (each
                # call costs ~15 µs, about what the whole diff costs per 200 entries).
                return out + _libgit2_subtree_changes(repo, stack)
            return _libgit2_subtree_changes(repo, [(b"", pygit2.Oid(hex=old_tree).raw, pygit2.Oid(hex=new_tree).raw)])
        old_all = _entries(repo, old_id) if old_id is not None else set()
        new_all = _entries(repo, new_id) if new_id is not None else set()
        # Set differences run in C: only the entries that differ reach Python.
        old = {name: (int(mode, 8), sha) for mode, name, sha in old_all - new_all}
        new = {name: (int(mode, 8), sha) for mode, name, sha in new_all - old_all}
        for name in old.keys() | new.keys():
            old_mode, old_sha = old.get(name, (0, None))
            new_mode, new_sha = new.get(name, (0, None))
            if old_mode == new_mode and old_sha == new_sha:
                continue  # "40000" and "040000" both mean a tree: the same entry spelled apart
            path = prefix + name
            old_is_tree, new_is_tree = old_mode == _TREE, new_mode == _TREE
            if old_is_tree or new_is_tree:
                stack.append((path + b"/", old_sha if old_is_tree else None, new_sha if new_is_tree else None))
                if old_mode and not old_is_tree:
                    out.append(EntryChange(path, old_mode, _oid(old_sha), 0, None))
                if new_mode and not new_is_tree:
                    out.append(EntryChange(path, 0, None, new_mode, _oid(new_sha)))
            elif old_mode and new_mode and old_mode & _TYPE_MASK != new_mode & _TYPE_MASK:
                # A file became a symlink or a nested repository (or back): libgit2 splits it.
                out.append(EntryChange(path, old_mode, _oid(old_sha), 0, None))
                out.append(EntryChange(path, 0, None, new_mode, _oid(new_sha)))
            else:
                out.append(EntryChange(path, old_mode, _oid(old_sha), new_mode, _oid(new_sha)))
    return out


def _libgit2_subtree_changes(
    repo: pygit2.Repository, pairs: list[tuple[bytes, bytes | None, bytes | None]]
) -> list[EntryChange]:
    """libgit2's answer for each pair of subtrees left, under their paths (a missing side is empty)."""
    out: list[EntryChange] = []
    for prefix, old_id, new_id in pairs:
        if old_id == new_id:
            continue
        old = repo[pygit2.Oid(raw=old_id)] if old_id is not None else None
        new = repo[pygit2.Oid(raw=new_id)] if new_id is not None else None
        if old is not None and new is not None:
            diff = old.diff_to_tree(new)  # type: ignore[attr-defined]
        elif new is not None:
            diff = new.diff_to_tree(swap=True)  # type: ignore[attr-defined]
        else:
            diff = old.diff_to_tree()  # type: ignore[union-attr]
        out.extend(_from_deltas(diff, prefix))
    return out


def _from_deltas(diff: pygit2.Diff, prefix: bytes) -> list[EntryChange]:
    out: list[EntryChange] = []
    for delta in diff.deltas:
        old, new = delta.old_file, delta.new_file
        old_mode = int(old.mode) if str(old.id) != _ZERO else 0
        new_mode = int(new.mode) if str(new.id) != _ZERO else 0
        out.append(
            EntryChange(
                prefix + (new if new_mode else old).raw_path,
                old_mode,
                old.id if old_mode else None,
                new_mode,
                new.id if new_mode else None,
            )
        )
    return out


def _oid(raw: bytes | None) -> pygit2.Oid | None:
    return pygit2.Oid(raw=raw) if raw is not None else None


def _entries(repo: pygit2.Repository, raw_id: bytes) -> set[tuple[bytes, bytes, bytes]]:
    """A tree's entries as (octal mode, name, raw id). Git's format: `<mode> <name>\\0<20 bytes>`."""
    tree = repo[pygit2.Oid(raw=raw_id)]  # libgit2's object cache: the next restore reads it again
    if not isinstance(tree, pygit2.Tree):
        raise pygit2.GitError(f"object {tree.id} is not a tree")
    data = tree.read_raw()
    # Trees come from libgit2, which validates what it writes: each match starts where the
    # previous one ended, so nothing is skipped.
    return set(_ENTRY.findall(data))
