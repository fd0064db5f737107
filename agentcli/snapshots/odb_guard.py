"""Keeps libgit2 from touching the user's object database through the alternates link.

The shadow repository lists the user's `.git/objects` in `objects/info/alternates`, so blobs
the user already has are read from there instead of being stored twice. But before libgit2
writes an object it "freshens" any existing copy: it walks the backends and calls `utime()` on
the loose object or pack that holds it — alternates included (libgit2 `odb_freshen_1`). Every
capture would then change mtimes under the user's `.git/objects`, which we promise never to do.

The fix is a backend of our own, registered above every built-in one. libgit2 asks it first
whether an object exists; it answers from a separate, read-only handle on the user's objects,
and since it has no `freshen` callback libgit2 stops there without touching anything. Because it
is the first backend that can write, libgit2 also sends every write to it, and it stores them
as loose objects in the shadow repository. Reads raise `KeyError` (GIT_ENOTFOUND), so libgit2
falls through to its own fast C backends, alternates included.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

# Above libgit2's loose (2) and packed (1) backends of both the shadow and the alternates:
# libgit2 orders backends by priority first, so this one is consulted before any of them.
GUARD_PRIORITY = 10

# Same as git's core.looseCompression default (Z_BEST_SPEED): loose objects are short-lived,
# gc packs them.
LOOSE_COMPRESSION = 1


class BorrowedObjectsGuard(pygit2.OdbBackend):
    """An ODB backend that answers existence from the user's objects and writes to our own.

    Args:
        user_objects: The user's `.git/objects` directory (read only, never written).
        own_objects: The shadow repository's `objects` directory.
    """

    def __init__(self, user_objects: Path, own_objects: Path) -> None:
        super().__init__()
        # git_odb_open also follows the user's own objects/info/alternates.
        self._user = pygit2.Odb(str(user_objects))
        self._own = pygit2.Odb()
        self._own.add_backend(pygit2.OdbBackendLoose(str(own_objects), LOOSE_COMPRESSION, False), 1)

    def exists_cb(self, oid: pygit2.Oid) -> bool:
        """Tells libgit2 the object exists when the user has it (so it is neither written nor freshened)."""
        return oid in self._user

    def write_cb(self, oid: pygit2.Oid, data: bytes, object_type: int) -> None:
        """Stores a new object in the shadow repository's loose object directory."""
        self._own.write(object_type, data)

    # Reads fall through to the built-in backends: KeyError becomes GIT_ENOTFOUND.
    def read_cb(self, oid: pygit2.Oid) -> tuple[int, bytes]:
        raise KeyError(oid)

    def read_header_cb(self, oid: pygit2.Oid) -> tuple[int, int]:
        raise KeyError(oid)

    def read_prefix_cb(self, oid: str) -> tuple[int, bytes, pygit2.Oid]:
        raise KeyError(oid)

    def exists_prefix_cb(self, oid: str) -> pygit2.Oid:
        raise KeyError(oid)

    def refresh_cb(self) -> None:
        """Nothing to do: the user's handle refreshes its pack list by itself on a miss."""
        return None

    def user_has(self, oid: pygit2.Oid) -> bool:
        """Tells whether the user's object database holds `oid`."""
        return oid in self._user

    def user_read(self, oid: pygit2.Oid) -> tuple[int, bytes]:
        """Reads an object from the user's object database (without touching it)."""
        object_type, data = self._user.read(oid)
        return int(object_type), data

    def own_write(self, object_type: int, data: bytes) -> pygit2.Oid:
        """Writes an object into the shadow repository even if the user has it too."""
        return self._own.write(object_type, data)


def install_guard(repo: pygit2.Repository, user_objects: Path, own_objects: Path) -> BorrowedObjectsGuard:
    """Registers a `BorrowedObjectsGuard` on an open shadow repository.

    Args:
        repo: The shadow repository.
        user_objects: The user's objects directory.
        own_objects: The shadow's objects directory.

    Returns:
        The guard, which also offers direct reads of the user's objects.
    """
    guard = BorrowedObjectsGuard(user_objects, own_objects)
    repo.odb.add_backend(guard, GUARD_PRIORITY)
    return guard
