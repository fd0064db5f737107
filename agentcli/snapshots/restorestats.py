"""The line counts of a restore's result entry, from the blob pairs its plan names.

A timeline entry lists each changed file's added and removed lines. For a capture they come
from a diff of the previous tree with the index, which looks each blob up again through the
object database (the store's own backend first, then the packs, deltas resolved) before
diffing it: ~100 µs a file, a quarter of a 100-file restore's CPU. A restore already knows
every pair (the plan's old and new blob ids), so each pair is diffed straight from the two
blobs' bytes with `Patch.create_from` — libgit2's own diff, the same binary test and the same
counts — at about a third of the cost.

Only what this models exactly is done here: regular files written, added or deleted. A path
that changes type (shown as one "typechange" entry by the diff), a symlink, or a mode set
without a content change (the layout step, a chmod) sends the caller back to the diff.
"""

from __future__ import annotations

import os

import pygit2

from agentcli.snapshots.diff import FILES_LISTED_MAX, patch_stat, shown_path
from agentcli.snapshots.models import FileStat, PlannedChange
from agentcli.snapshots.restore import Applied


def restore_file_stats(
    repo: pygit2.Repository, changes: list[PlannedChange], applied: Applied, limit: int = FILES_LISTED_MAX
) -> tuple[list[FileStat], int] | None:
    """Line counts per changed file for a restore's result, as `diff.file_stats` gives them.

    Args:
        repo: The shadow repository, holding every blob the plan names.
        changes: The plan the restore applied.
        applied: What it changed (its chmods, the layout step's included).
        limit: How many files to list at most.

    Returns:
        The listed files and how many more were left out, in the diff's order (by path bytes);
        None when the restore holds a change this does not model.
    """
    if applied.chmodded:
        return None  # a mode set without a write: the diff knows whether the tree saw it
    pairs: dict[str, tuple[str | None, str | None]] = {}
    for change in changes:
        if change.kind == "symlink" or change.action == "chmod" or change.path in pairs:
            return None  # a link, a mode flip, or a type change (a deletion plus a write)
        pairs[change.path] = (change.old_id, change.new_id if change.action == "write" else None)
    ordered = sorted(pairs, key=os.fsencode)  # the index's order, which the diff follows
    stats: list[FileStat] = []
    for path in ordered[:limit]:
        old_id, new_id = pairs[path]
        try:
            old = _bytes(repo, old_id)
            new = applied.written_bytes.get(path) if new_id is not None else None
            if new is None:
                new = _bytes(repo, new_id)
            patch = pygit2.Patch.create_from(old, new, context_lines=0)
        except (KeyError, ValueError, pygit2.GitError):
            return None  # a blob unreadable now: the diff says what it can (the files are written)
        stats.append(patch_stat(patch, shown_path(path)))
    return stats, max(0, len(ordered) - limit)


def _bytes(repo: pygit2.Repository, oid: str | None) -> bytes | None:
    if oid is None:
        return None
    return repo.odb.read(oid)[1]
