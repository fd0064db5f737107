"""Size accounting, budget enforcement and repacking of the shadow repository.

`git gc` is not used: it would run `repack -a`, which writes a complete new pack before
deleting the old ones (twice the space at the peak), and it cannot tell which snapshots to
give up when the store is over budget. Here:

- Only our own objects are considered. Objects borrowed from the user's repository through
  the alternates link cost us nothing and are never walked into.
- Over budget, the oldest snapshots are dropped — their refs and timeline lines — until the
  objects the remaining ones need fit in 80% of the budget (so the next captures do not
  trigger another gc straight away). The newest snapshot is always kept.
- Objects are repacked in batches of at most `BATCH_BYTES` of input, and the loose files of a
  batch are deleted as soon as its pack is written; a pack holding unreachable objects is
  rewritten with the reachable ones, then deleted. The extra space needed at any moment is one
  batch or one pack, never a second copy of the store.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, ObjectType

from agentcli.snapshots._libgit2 import packbuilder_insert_named
from agentcli.snapshots.models import Snapshot

BATCH_BYTES = 32 * 1024 * 1024
BUDGET_TARGET = 0.8
_LOOSE_DIR = re.compile(r"^[0-9a-f]{2}$")
_LOOSE_FILE = re.compile(r"^[0-9a-f]{38}$")


def dir_size(path: Path) -> int:
    """Disk space used by a directory tree, in bytes (allocated blocks where the OS reports them)."""
    total = 0
    stack = [path]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            blocks = getattr(st, "st_blocks", None)
            total += blocks * 512 if blocks is not None else st.st_size
    return total


@dataclass
class PackFile:
    """One pack of our own and the objects in it."""

    pack: Path
    idx: Path
    sizes: dict[str, int]
    """Object id -> bytes it takes in the pack (compressed, deltified)."""

    def files(self) -> list[Path]:
        """The pack's files on disk (pack, index and any companions git may have added)."""
        stem = self.pack.with_suffix("")
        return [stem.with_suffix(ext) for ext in (".pack", ".idx", ".rev", ".mtimes", ".bitmap", ".keep")]


@dataclass
class OwnObjects:
    """Objects stored in the shadow repository itself (not borrowed)."""

    loose: dict[str, Path] = field(default_factory=dict)
    loose_sizes: dict[str, int] = field(default_factory=dict)
    packs: list[PackFile] = field(default_factory=list)

    def size_of(self, oid: str) -> int:
        """Bytes the object takes in the store (0 if it is not ours)."""
        if oid in self.loose_sizes:
            return self.loose_sizes[oid]
        for pack in self.packs:
            if oid in pack.sizes:
                return pack.sizes[oid]
        return 0

    def __contains__(self, oid: str) -> bool:
        return oid in self.loose or any(oid in p.sizes for p in self.packs)


def scan_own_objects(objects_dir: Path) -> OwnObjects:
    """Lists loose objects and pack contents of the shadow repository."""
    own = OwnObjects()
    for sub in os.scandir(objects_dir):
        if not (sub.is_dir() and _LOOSE_DIR.match(sub.name)):
            continue
        for obj in os.scandir(sub.path):
            if _LOOSE_FILE.match(obj.name):
                oid = sub.name + obj.name
                own.loose[oid] = Path(obj.path)
                st = obj.stat()
                blocks = getattr(st, "st_blocks", None)
                own.loose_sizes[oid] = blocks * 512 if blocks is not None else st.st_size
    pack_dir = objects_dir / "pack"
    if pack_dir.is_dir():
        for idx in sorted(pack_dir.glob("pack-*.idx")):
            pack = idx.with_suffix(".pack")
            if pack.is_file():
                own.packs.append(PackFile(pack=pack, idx=idx, sizes=read_pack_index(idx, pack.stat().st_size)))
    return own


def read_pack_index(idx_path: Path, pack_size: int) -> dict[str, int]:
    """Reads a version 2 pack index: object ids and the bytes each takes in the pack.

    Args:
        idx_path: The `.idx` file.
        pack_size: Size of the matching `.pack`, to size its last object.

    Returns:
        Object id -> stored size (offset of the next object minus its own).
    """
    data = idx_path.read_bytes()
    if data[:4] != b"\xfftOc" or struct.unpack(">I", data[4:8])[0] != 2:
        raise ValueError(f"{idx_path} is not a version 2 pack index")
    count = struct.unpack(">I", data[8 + 255 * 4 : 8 + 256 * 4])[0]
    names_at = 8 + 256 * 4
    offsets_at = names_at + count * 20 + count * 4
    large_at = offsets_at + count * 4
    ids = [data[names_at + i * 20 : names_at + (i + 1) * 20].hex() for i in range(count)]
    offsets: list[int] = []
    for i in range(count):
        (raw,) = struct.unpack(">I", data[offsets_at + i * 4 : offsets_at + i * 4 + 4])
        if raw & 0x80000000:
            index = raw & 0x7FFFFFFF
            (raw,) = struct.unpack(">Q", data[large_at + index * 8 : large_at + index * 8 + 8])
        offsets.append(raw)
    order = sorted(range(count), key=lambda i: offsets[i])
    sizes: dict[str, int] = {}
    end_of_objects = pack_size - 20  # the pack ends with a SHA-1 trailer
    for pos, i in enumerate(order):
        nxt = offsets[order[pos + 1]] if pos + 1 < count else end_of_objects
        sizes[ids[i]] = nxt - offsets[i]
    return sizes


class Reachability:
    """Walks snapshot trees, collecting our own objects they need.

    Trees we do not hold are borrowed from the user's repository, which holds everything below
    them too, so the walk stops there.
    """

    def __init__(self, repo: pygit2.Repository, own: OwnObjects) -> None:
        self._repo = repo
        self._own = own
        self.seen: set[str] = set()
        self.names: dict[str, str] = {}
        """Own blob id -> a file name it appears under (pairs delta candidates when packing)."""

    def walk(self, tree_id: str) -> int:
        """Marks what `tree_id` needs; returns the stored bytes of newly marked own objects."""
        added = 0
        stack = [tree_id]
        while stack:
            oid = stack.pop()
            if oid in self.seen:
                continue
            self.seen.add(oid)
            if oid not in self._own:
                continue
            added += self._own.size_of(oid)
            try:
                tree = self._repo[oid]
            except KeyError:
                continue
            assert isinstance(tree, pygit2.Tree)  # only tree ids are pushed
            for entry in tree:
                child = str(entry.id)
                if entry.filemode == FileMode.TREE:
                    stack.append(child)
                elif entry.filemode == FileMode.COMMIT:
                    continue  # a gitlink names a commit in another repository
                elif child not in self.seen:
                    self.seen.add(child)
                    if child in self._own:
                        added += self._own.size_of(child)
                        if entry.name is not None:  # always set on a tree's entries
                            self.names.setdefault(child, entry.name)
        return added


@dataclass
class BudgetDecision:
    """Snapshots to drop, oldest first."""

    dropped: list[Snapshot]


def choose_drops(
    repo: pygit2.Repository, own: OwnObjects, snapshots: list[Snapshot], target_bytes: int
) -> BudgetDecision:
    """Keeps the newest snapshots whose own objects fit in `target_bytes`; drops the rest.

    Args:
        repo: The shadow repository.
        own: Our own objects.
        snapshots: Every snapshot, in any order.
        target_bytes: Space the kept snapshots' objects may take.

    Returns:
        The snapshots to drop (never the newest one).
    """
    newest_first = sorted(snapshots, key=lambda s: (s.created_at, s.session_id, s.seq), reverse=True)
    walker = Reachability(repo, own)
    used = 0
    for position, snap in enumerate(newest_first):
        cost = walker.walk(snap.tree)
        if position > 0 and used + cost > target_bytes:
            return BudgetDecision(dropped=list(reversed(newest_first[position:])))
        used += cost
    return BudgetDecision(dropped=[])


@dataclass
class RepackOutcome:
    """What a repack did."""

    objects_packed: int = 0
    objects_pruned: int = 0
    packs_rewritten: int = 0


def repack(
    repo: pygit2.Repository, objects_dir: Path, own: OwnObjects, roots: Iterable[str], *, merge_packs: bool = False
) -> RepackOutcome:
    """Packs reachable loose objects, deletes unreachable ones, rewrites packs holding garbage.

    Work is cut into units — a loose object, or a whole pack to rewrite — gathered into
    batches of at most `BATCH_BYTES`. Each batch becomes one new pack, and the unit files it
    replaces are deleted right after, so the extra space needed is one batch at most.

    Args:
        repo: The shadow repository (reads objects for the pack builder).
        objects_dir: Its `objects` directory.
        own: Our own objects, as scanned before.
        roots: Tree ids every kept snapshot (and the index) points at.
        merge_packs: Also merge small packs together (captures write one pack each).

    Returns:
        Counts of what was done.
    """
    walker = Reachability(repo, own)
    for root in roots:
        walker.walk(root)
    reachable = walker.seen
    outcome = RepackOutcome()
    pack_dir = objects_dir / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)

    # (objects to put in a new pack, files to delete once it is written, stored bytes)
    units: list[tuple[list[str], list[Path], int]] = []
    for oid, path in sorted(own.loose.items()):
        if oid in reachable:
            units.append(([oid], [path], own.loose_sizes[oid]))
        else:
            _unlink(path)
            outcome.objects_pruned += 1
    for pack in own.packs:
        garbage = [oid for oid in pack.sizes if oid not in reachable]
        small = merge_packs and pack.pack.stat().st_size < BATCH_BYTES
        if not garbage and not small:
            continue
        keep = [oid for oid in pack.sizes if oid in reachable]
        units.append((keep, pack.files(), sum(pack.sizes[o] for o in keep)))
        outcome.objects_pruned += len(garbage)
        outcome.packs_rewritten += 1
    pack_units = [u for u in units if len(u[1]) > 1]
    if len(units) == 1 and pack_units and outcome.objects_pruned == 0:
        units = []  # a single clean pack and nothing else: nothing to merge it with
    # The inode of every file a unit replaces, so a new pack that happens to get the same
    # name (same objects) is never deleted in its place.
    inodes = {path: _inode(path) for _, files, _ in units for path in files}

    batch_objects: list[str] = []
    batch_files: list[Path] = []
    batch_bytes = 0

    def flush() -> None:
        nonlocal batch_objects, batch_files, batch_bytes
        if batch_objects:
            builder = pygit2.PackBuilder(repo)
            builder.set_threads(0)  # one delta-search thread per CPU
            for oid in batch_objects:
                packbuilder_insert_named(builder, pygit2.Oid(hex=oid), walker.names.get(oid))
            builder.write(str(pack_dir))
            outcome.objects_packed += len(batch_objects)
        for path in batch_files:
            if _inode(path) == inodes.get(path):
                _unlink(path)
        batch_objects, batch_files, batch_bytes = [], [], 0

    for objects, files, size in units:
        batch_objects.extend(objects)
        batch_files.extend(files)
        batch_bytes += size
        if batch_bytes >= BATCH_BYTES:
            flush()
    flush()

    for stray in list(objects_dir.glob("tmp_*")) + list(pack_dir.glob("tmp_*")):
        # Temporary files of writes a crash interrupted (we hold the store lock: none is live).
        _unlink(stray)
    for sub in objects_dir.iterdir():
        if sub.is_dir() and _LOOSE_DIR.match(sub.name):
            try:
                sub.rmdir()
            except OSError:
                pass
    return outcome


MERGE_SMALL_BYTES = 4 * 1024 * 1024
"""Packs below this size are merged automatically; bigger ones wait for an explicit gc, so the
automatic merge stays cheap however long the session."""


def merge_small_packs(repo: pygit2.Repository, objects_dir: Path) -> int:
    """Merges every pack smaller than `MERGE_SMALL_BYTES` into one, without walking any snapshot.

    Captures write a pack each; many packs slow every object lookup. Unlike `repack`, this
    keeps every object (no reachability walk), so it costs only the packs' own size.

    Args:
        repo: The shadow repository.
        objects_dir: Its `objects` directory.

    Returns:
        How many packs were merged.
    """
    own = scan_own_objects(objects_dir)
    small = [p for p in own.packs if p.pack.stat().st_size < MERGE_SMALL_BYTES]
    if len(small) < 2:
        return 0
    inodes = {path: _inode(path) for pack in small for path in pack.files()}
    builder = pygit2.PackBuilder(repo)
    builder.set_threads(0)
    seen: set[str] = set()
    for pack in small:
        for oid in pack.sizes:
            if oid not in seen:
                seen.add(oid)
                packbuilder_insert_named(builder, pygit2.Oid(hex=oid), None)
    builder.write(str(objects_dir / "pack"))
    for path, inode in inodes.items():
        if inode is not None and _inode(path) == inode:
            _unlink(path)
    return len(small)


def _inode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def tree_type_ok(repo: pygit2.Repository, tree: str) -> bool:
    """Tells whether `tree` exists and is a tree (a snapshot whose ref can be re-created)."""
    try:
        return repo[tree].type == ObjectType.TREE
    except (KeyError, ValueError):
        return False
