"""The shadow repository's write path: never touch the user's objects, batch our own.

1. The shadow repository lists the user's `.git/objects` in `objects/info/alternates`, so
   blobs the user already has are read from there instead of being stored twice. But before
   libgit2 writes an object it "freshens" any existing copy: it walks the backends and calls
   `utime()` on the loose object or pack that holds it — alternates included (libgit2
   `odb_freshen_1`). Every capture would then change mtimes under the user's `.git/objects`,
   which we promise never to do.

   So a backend of our own is registered above every built-in one. libgit2 asks it first
   whether an object exists; it answers from a separate, read-only handle on the user's
   objects, and since it has no `freshen` callback libgit2 stops there without touching
   anything. Reads of anything but pending objects raise `KeyError` (GIT_ENOTFOUND), so
   libgit2 falls through to its own fast C backends, alternates included.

2. Being the first backend that can write, it also receives every write. Outside a batch it
   stores them as loose objects; inside one (a capture) it keeps them in memory — serving
   reads and existence checks for them — and `flush()` writes them as a single pack
   (see packwriter.py), or as loose objects when there are only a few.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2

from agentcli.snapshots.packwriter import write_pack

# Above libgit2's loose (2) and packed (1) backends of both the shadow and the alternates:
# libgit2 orders backends by priority first, so this one is consulted before any of them.
GUARD_PRIORITY = 10

# Same as git's core.looseCompression default (Z_BEST_SPEED): loose objects are short-lived,
# gc packs them.
LOOSE_COMPRESSION = 1

PACK_MIN_OBJECTS = 3
"""Fewer new objects than this are written loose: a pack is two files, a loose object one
(plus, often, its fan-out directory). A one-file edit writes a blob and a few trees: a pack."""

PENDING_MAX_BYTES = 64 * 1024 * 1024
"""A batch is flushed early when its objects exceed this, bounding memory."""


class ShadowObjects(pygit2.OdbBackend):
    """An ODB backend that guards the user's objects and batches writes to our own.

    Args:
        user_objects: The user's `.git/objects` directory (read only, never written), if any.
        own_objects: The shadow repository's `objects` directory.
    """

    def __init__(self, user_objects: Path | None, own_objects: Path) -> None:
        super().__init__()
        # git_odb_open also follows the user's own objects/info/alternates.
        self._user = pygit2.Odb(str(user_objects)) if user_objects is not None else None
        self._own_dir = own_objects
        self._own = pygit2.Odb()
        self._own.add_backend(pygit2.OdbBackendLoose(str(own_objects), LOOSE_COMPRESSION, False), 1)
        self._batching = 0
        self._pending: dict[bytes, tuple[int, bytes]] = {}
        self._pending_bytes = 0

    # -- libgit2 callbacks ----------------------------------------------------------------

    def exists_cb(self, oid: pygit2.Oid) -> bool:
        """Existence from the pending batch or the user's objects, so neither is written again."""
        return oid.raw in self._pending or (self._user is not None and oid in self._user)

    def write_cb(self, oid: pygit2.Oid, data: bytes, object_type: int) -> None:
        """Queues a new object in a batch, or writes it loose outside one."""
        if not self._batching:
            self._own.write(object_type, data)
            return
        if oid.raw not in self._pending:
            self._pending[oid.raw] = (int(object_type), bytes(data))
            self._pending_bytes += len(data)
            if self._pending_bytes >= PENDING_MAX_BYTES:
                self.flush()

    def read_cb(self, oid: pygit2.Oid) -> tuple[int, bytes]:
        """Serves pending objects; anything else falls through to the built-in backends."""
        pending = self._pending.get(oid.raw)
        if pending is None:
            raise KeyError(oid)
        return pending

    def read_header_cb(self, oid: pygit2.Oid) -> tuple[int, int]:
        pending = self._pending.get(oid.raw)
        if pending is None:
            raise KeyError(oid)
        return pending[0], len(pending[1])

    def read_prefix_cb(self, oid: str) -> tuple[int, bytes, pygit2.Oid]:
        raise KeyError(oid)

    def exists_prefix_cb(self, oid: str) -> pygit2.Oid:
        raise KeyError(oid)

    def refresh_cb(self) -> None:
        """Nothing to do: the user's handle refreshes its pack list by itself on a miss."""
        return None

    # -- batching -------------------------------------------------------------------------

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Collects writes in memory for the duration of the block, then flushes them."""
        self._batching += 1
        try:
            yield
        finally:
            self._batching -= 1
            if not self._batching:
                self.flush()

    def flush(self) -> None:
        """Writes pending objects to disk: one pack, or loose objects when there are few."""
        if not self._pending:
            return
        pending = self._pending
        try:
            if len(pending) >= PACK_MIN_OBJECTS:
                write_pack(self._own_dir / "pack", ((raw, t, d) for raw, (t, d) in pending.items()))
            else:
                for object_type, data in pending.values():
                    self._own.write(object_type, data)
        finally:
            # Cleared only now: until the pack exists, reads are served from memory.
            self._pending = {}
            self._pending_bytes = 0

    # -- direct access ----------------------------------------------------------------------

    def user_has(self, oid: pygit2.Oid) -> bool:
        """Tells whether the user's object database holds `oid`."""
        return self._user is not None and oid in self._user

    def user_read(self, oid: pygit2.Oid) -> tuple[int, bytes]:
        """Reads an object from the user's object database (without touching it)."""
        if self._user is None:
            raise KeyError(oid)
        object_type, data = self._user.read(oid)
        return int(object_type), data

    def own_write(self, oid: pygit2.Oid, object_type: int, data: bytes) -> None:
        """Stores an object in the shadow repository even if the user has it too (batched when in a batch)."""
        if self._batching:
            if oid.raw not in self._pending:
                self._pending[oid.raw] = (int(object_type), bytes(data))
                self._pending_bytes += len(data)
        else:
            self._own.write(object_type, data)


def install_backend(repo: pygit2.Repository, user_objects: Path | None, own_objects: Path) -> ShadowObjects:
    """Registers a `ShadowObjects` backend on an open shadow repository.

    Args:
        repo: The shadow repository.
        user_objects: The user's objects directory, or None when there is no user repository.
        own_objects: The shadow's objects directory.

    Returns:
        The backend (also offers batching and direct reads of the user's objects).
    """
    backend = ShadowObjects(user_objects, own_objects)
    repo.odb.add_backend(backend, GUARD_PRIORITY)
    return backend
