"""Tree-to-tree diffs: per-file unified patches and line counts.

The working tree is never diffed directly: the store first refreshes its index (cheap, stat
based) and writes the tree a capture would record, then compares trees. That keeps the working
tree side identical to what a snapshot would contain (ignores and guards included) and avoids
`tree_to_workdir`, which hashes every file.
"""

from __future__ import annotations

import pygit2
from pygit2.enums import DeltaStatus, DiffOption

from agentcli.snapshots.models import DiffResult, DiffStatus, DiffTotals, FileDiff, FileStat

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""libgit2 knows this tree without it being stored."""

FILES_LISTED_MAX = 1000
"""A snapshot lists line stats for at most this many files (an `npm install` is not a story)."""

RENAME_DETECTION_MAX = 2000
"""Rename detection compares every added file with every deleted one; beyond this many files
changed it is skipped and renames show as a deletion plus an addition."""

_STATUS: dict[DeltaStatus, DiffStatus] = {
    DeltaStatus.ADDED: "added",
    DeltaStatus.UNTRACKED: "added",
    DeltaStatus.COPIED: "added",
    DeltaStatus.DELETED: "deleted",
    DeltaStatus.MODIFIED: "modified",
    DeltaStatus.RENAMED: "renamed",
    DeltaStatus.TYPECHANGE: "typechange",
}


def tree_diff(
    repo: pygit2.Repository,
    old_tree: str | pygit2.Oid | None,
    new_tree: str | pygit2.Oid,
    *,
    context: int = 3,
    find_renames: bool = False,
) -> pygit2.Diff:
    """Diffs two trees of the shadow repository.

    Args:
        repo: The shadow repository.
        old_tree: Old side; None means the empty tree.
        new_tree: New side.
        context: Lines of context around each hunk.
        find_renames: Run rename detection (when the diff is small enough).

    Returns:
        The diff (patches are computed lazily when indexed).
    """
    old = repo[str(old_tree) if old_tree is not None else EMPTY_TREE]
    new = repo[str(new_tree)]
    # pygit2's overloads leave out the Tree objects diff() takes (it peels its arguments to trees).
    diff: pygit2.Diff = repo.diff(  # type: ignore[call-overload]
        old, new, flags=DiffOption.INCLUDE_TYPECHANGE, context_lines=context
    )
    if find_renames and len(diff) <= RENAME_DETECTION_MAX:
        diff.find_similar()
    return diff


def file_stats(diff: pygit2.Diff, limit: int = FILES_LISTED_MAX) -> tuple[list[FileStat], int]:
    """Line counts per changed file, for a timeline entry.

    Args:
        diff: A tree diff (context lines do not matter).
        limit: How many files to list at most.

    Returns:
        The listed files and how many more were left out.
    """
    total = len(diff)
    stats: list[FileStat] = []
    for i in range(min(total, limit)):
        patch = diff[i]
        if patch is None:  # pygit2 returns None for unchanged entries only
            continue
        stats.append(patch_stat(patch, _path_of(patch.delta)))
    return stats, max(0, total - limit)


def patch_stat(patch: pygit2.Patch, path: str) -> FileStat:
    """One changed path's line counts, as its patch gives them (none for a binary file)."""
    delta = patch.delta
    binary = bool(delta.is_binary)
    _, added, removed = patch.line_stats
    return FileStat(
        path=path,
        added=0 if binary else added,
        removed=0 if binary else removed,
        status=_STATUS.get(delta.status, "modified"),
        binary=binary,
    )


def diff_result(diff: pygit2.Diff, old_tree: str, new_tree: str, *, working_tree: bool) -> DiffResult:
    """Turns a tree diff into the public `DiffResult`, with patch text per file.

    Args:
        diff: The tree diff.
        old_tree: Hex id of the old side.
        new_tree: Hex id of the new side.
        working_tree: Whether the new side stands for the working tree.

    Returns:
        Files in path order, with totals.
    """
    files: list[FileDiff] = []
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        binary = bool(delta.is_binary)
        _, added, removed = patch.line_stats
        status = _STATUS.get(delta.status, "modified")
        files.append(
            FileDiff(
                path=_path_of(delta),
                old_path=shown_path(delta.old_file.path) if status == "renamed" else None,
                status=status,
                added=0 if binary else added,
                removed=0 if binary else removed,
                patch=patch.data.decode("utf-8", "replace"),
                binary=binary,
                old_mode=int(delta.old_file.mode) or None,
                new_mode=int(delta.new_file.mode) or None,
            )
        )
    totals = DiffTotals(
        files=len(files), added=sum(f.added for f in files), removed=sum(f.removed for f in files)
    )
    return DiffResult(old_tree=old_tree, new_tree=new_tree, working_tree=working_tree, files=files, totals=totals)


def _path_of(delta: pygit2.DiffDelta) -> str:
    if delta.status == DeltaStatus.DELETED:
        return shown_path(delta.old_file.path)
    return shown_path(delta.new_file.path)


def shown_path(path: str) -> str:
    """A path fit for the timeline, the log and the screen: a name whose bytes are not UTF-8
    (recorded as they are) shows them as ``\\xff`` escapes instead of unencodable surrogates."""
    if path.isascii():
        return path
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
