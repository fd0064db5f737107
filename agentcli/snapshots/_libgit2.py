"""The two libgit2 calls pygit2's high-level API does not expose, made through pygit2's own cffi handle.

- `Index.diff_to_workdir` takes no pathspec, but a path hint from `write_file`/`edit_file`
  must refresh just those paths without walking the tree. libgit2 supports that with
  `GIT_DIFF_DISABLE_PATHSPEC_MATCH`: the pathspec becomes an exact path list and the
  workdir iterator only descends into directories on the way to those paths.
- `IndexEntry` hides the entry flags, and a seed copied from the user's index must drop entries
  marked assume-unchanged, skip-worktree or intent-to-add (libgit2 would trust them blindly).

Both use `pygit2.ffi`/`pygit2.C`, which pygit2 exports, with the same calls its own
`Index.diff_to_workdir` makes; the tests pin the behaviour.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import cast

import pygit2
from pygit2 import C, ffi
from pygit2.errors import check_error
from pygit2.utils import StrArray

# git_index_entry flag bits (libgit2 include/git2/index.h).
_ENTRY_VALID = 0x8000  # "assume unchanged"
_ENTRY_STAGE_MASK = 0x3000
_EXT_INTENT_TO_ADD = 1 << 13
_EXT_SKIP_WORKTREE = 1 << 14


class _RawPath:
    """A path as its bytes on disk, for pygit2's ``StrArray`` (which takes str or path-like only)."""

    __slots__ = ("raw",)

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def __fspath__(self) -> bytes:
        return self.raw


def pathspec(paths: Sequence[str]) -> list[os.PathLike[str]]:
    """Paths as the bytes on disk: a name that is not UTF-8 (decoded by ``os.fsdecode`` with
    surrogates) would make pygit2's strict UTF-8 encoding raise, failing the whole capture.

    pygit2 types ``StrArray`` as taking str path-likes, but encodes whatever ``__fspath__``
    returns and passes bytes through unchanged (``pygit2.utils.encode_string``).
    """
    return cast("list[os.PathLike[str]]", [_RawPath(os.fsencode(path)) for path in paths])


def diff_index_to_workdir(
    repo: pygit2.Repository,
    index: pygit2.Index,
    flags: int,
    paths: Sequence[str] | None = None,
) -> pygit2.Diff:
    """Diffs `index` against the working directory, optionally limited to exact paths.

    Args:
        repo: The repository owning the index.
        index: The index to compare (updated in memory when flags include UPDATE_INDEX).
        flags: `pygit2.enums.DiffOption` bits.
        paths: Exact paths (files or directories) to look at; with it, pass
            `DISABLE_PATHSPEC_MATCH` in `flags` so no tree walk happens.

    Returns:
        The diff, with no patches computed yet.
    """
    copts = ffi.new("git_diff_options *")
    check_error(C.git_diff_options_init(copts, 1))
    copts.flags = int(flags)
    copts.context_lines = 0
    cdiff = ffi.new("git_diff **")
    with StrArray(pathspec(paths) if paths is not None else None) as arr:
        if paths is not None:
            arr.assign_to(ffi.addressof(copts, "pathspec"))
        check_error(C.git_diff_index_to_workdir(cdiff, repo._repo, index._index, copts))
    return pygit2.Diff.from_c(bytes(ffi.buffer(cdiff)[:]), repo)


def diff_tree_to_index(
    repo: pygit2.Repository,
    tree: pygit2.Tree,
    index: pygit2.Index,
    flags: int,
    paths: Sequence[str],
) -> pygit2.Diff:
    """Diffs `tree` against `index` at exact paths only (files or directories).

    `Tree.diff_to_tree` walks every entry of both trees (16 ms at 100k files for a one-file
    change); limited to the paths a capture changed, only the directories on the way are read.

    Args:
        repo: The repository owning both.
        tree: The old side.
        index: The new side.
        flags: `pygit2.enums.DiffOption` bits; `DISABLE_PATHSPEC_MATCH` is added.
        paths: The paths to compare.

    Returns:
        The diff, with no patches computed yet.
    """
    copts = ffi.new("git_diff_options *")
    check_error(C.git_diff_options_init(copts, 1))
    copts.flags = int(flags) | int(pygit2.enums.DiffOption.DISABLE_PATHSPEC_MATCH)
    copts.context_lines = 0
    ctree = ffi.new("git_tree **")
    ffi.buffer(ctree)[:] = tree._pointer[:]
    cdiff = ffi.new("git_diff **")
    with StrArray(pathspec(paths)) as arr:
        arr.assign_to(ffi.addressof(copts, "pathspec"))
        check_error(C.git_diff_tree_to_index(cdiff, repo._repo, ctree[0], index._index, copts))
    return pygit2.Diff.from_c(bytes(ffi.buffer(cdiff)[:]), repo)


def any_flagged_entry(raw_index: bytes) -> bool | None:
    """Tells from an index file's bytes whether any entry has a flag `untrustworthy_entries` drops.

    Reading two bytes per entry of the file is faster than asking libgit2 for every entry
    (8 vs 14 ms at 50k entries, 35 ms under a profiler), and the usual answer is "none".

    Returns:
        False when no entry is assume-unchanged, conflicted or extended (skip-worktree and
        intent-to-add live in the extended flags); True when one is; None when the file is not
        an index of version 2 or 3 (version 4 compresses paths) or does not parse.
    """
    if len(raw_index) < 12 or raw_index[:4] != b"DIRC" or raw_index[4:8] not in (b"\0\0\0\2", b"\0\0\0\3"):
        return None
    count = int.from_bytes(raw_index[8:12], "big")
    end = len(raw_index) - 20  # the trailing checksum
    offset = 12
    find = raw_index.find
    for _ in range(count):
        if offset + 62 > end:
            return None
        flags = (raw_index[offset + 60] << 8) | raw_index[offset + 61]
        if flags & 0xF000:  # assume-valid, extended, or a stage
            return True
        length = flags & 0xFFF
        if length == 0xFFF:  # a long path: its length is where the NUL is
            length = find(b"\0", offset + 62) - (offset + 62)
            if length < 0:
                return None
        # Each entry is NUL-padded to a multiple of 8 bytes, with at least one NUL.
        offset += (62 + length + 8) & ~7
    return False if offset <= end else None


def untrustworthy_entries(index: pygit2.Index) -> list[str]:
    """Lists index entries a copied seed must not keep.

    Args:
        index: An index copied from the user's repository.

    Returns:
        Paths of entries that are conflicted (stage > 0), assume-unchanged, skip-worktree
        (sparse checkout) or intent-to-add. Dropping them makes the next diff look at the
        files themselves.
    """
    out: list[str] = []
    raw = index._index
    for i in range(C.git_index_entrycount(raw)):
        entry = C.git_index_get_byindex(raw, i)
        if (
            entry.flags & (_ENTRY_VALID | _ENTRY_STAGE_MASK)
            or entry.flags_extended & (_EXT_INTENT_TO_ADD | _EXT_SKIP_WORKTREE)
        ):
            out.append(os.fsdecode(ffi.string(entry.path)))
    return out


def packbuilder_insert_named(builder: pygit2.PackBuilder, oid: pygit2.Oid, name: str | None) -> None:
    """Adds one object to a pack, with the file name git uses to pair delta candidates.

    `PackBuilder.add` passes no name, so versions of the same file are rarely deltified
    against each other; the name is what makes a pack of many snapshots small.

    Args:
        builder: The pack builder.
        oid: The object to add.
        name: The object's file name in a tree (None for trees).
    """
    c_oid = ffi.new("git_oid *")
    ffi.buffer(c_oid)[:] = oid.raw
    c_name = ffi.new("char[]", os.fsencode(name)) if name else ffi.NULL
    check_error(C.git_packbuilder_insert(builder._packbuilder, c_oid, c_name))
