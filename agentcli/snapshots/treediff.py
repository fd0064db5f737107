"""The entries that differ between two trees, found by skipping the subtrees they share.

libgit2's tree-to-tree diff walks every entry of both trees, equal subtrees included: 19 ms at
100k files to find one changed file, most of a small restore there. Trees are content
addressed, so a subtree with the same id on both sides holds nothing to compare; this walk
reads only the trees along the changed paths (parsing git's tree format directly: a pygit2
object per entry cost more than the parse).

The answer is what `Repository.diff(old, new)` reports without rename or type-change detection:
a path whose type changes (a file where a folder, a symlink or a nested repository was) comes as
a deletion plus an addition.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygit2
from pygit2.enums import FileMode

_TREE = int(FileMode.TREE)
_TYPE_MASK = 0o170000  # git's GIT_MODE_TYPE: file, symlink, gitlink, tree


@dataclass(frozen=True)
class EntryChange:
    """One path that differs; `old_mode`/`new_mode` are 0 and the ids None where it is absent."""

    raw_path: bytes
    old_mode: int
    old_id: pygit2.Oid | None
    new_mode: int
    new_id: pygit2.Oid | None


def tree_changes(repo: pygit2.Repository, old_tree: str, new_tree: str) -> list[EntryChange]:
    """Every non-tree entry (file, symlink, gitlink) that differs between two trees.

    Args:
        repo: The repository holding both trees.
        old_tree: Hex id of the old tree.
        new_tree: Hex id of the new tree.

    Returns:
        The changes, in no particular order.
    """
    odb = repo.odb
    out: list[EntryChange] = []
    stack: list[tuple[bytes, bytes | None, bytes | None]] = [
        (b"", pygit2.Oid(hex=old_tree).raw, pygit2.Oid(hex=new_tree).raw)
    ]
    while stack:
        prefix, old_id, new_id = stack.pop()
        if old_id == new_id:
            continue
        old = _entries(odb, old_id) if old_id is not None else {}
        new = _entries(odb, new_id) if new_id is not None else {}
        for name in old.keys() | new.keys():
            old_mode, old_sha = old.get(name, (0, None))
            new_mode, new_sha = new.get(name, (0, None))
            if old_mode == new_mode and old_sha == new_sha:
                continue
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


def _oid(raw: bytes | None) -> pygit2.Oid | None:
    return pygit2.Oid(raw=raw) if raw is not None else None


def _entries(odb: pygit2.Odb, raw_id: bytes) -> dict[bytes, tuple[int, bytes]]:
    """A tree's entries: name -> (mode, raw id). Git's format: `<octal mode> <name>\\0<20 bytes>`."""
    object_type, data = odb.read(pygit2.Oid(raw=raw_id))
    if object_type != pygit2.enums.ObjectType.TREE:
        raise pygit2.GitError(f"object {pygit2.Oid(raw=raw_id)} is not a tree")
    out: dict[bytes, tuple[int, bytes]] = {}
    find = data.find
    i, end = 0, len(data)
    while i < end:
        space = find(b" ", i)
        nul = find(b"\0", space)
        if space < 0 or nul < 0 or nul + 21 > end:
            raise pygit2.GitError(f"tree {pygit2.Oid(raw=raw_id)} is malformed")
        out[data[space + 1 : nul]] = (int(data[i:space], 8), data[nul + 1 : nul + 21])
        i = nul + 21
    return out
