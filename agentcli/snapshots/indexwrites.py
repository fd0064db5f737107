"""When the shadow index is written, and what other processes must know until it is.

Over 100k files the index is 10 MB and ~100 ms to write, so a capture that changed a few
entries keeps them in memory; the index on disk then lags behind, which is safe for a cache
(its stat data vouch for older files, which the next diff hashes again). Two things make the
lag invisible to other processes sharing the store: the paths changed in memory go to a small
journal (`agentcli/unwritten-paths`) that every refresh reads and looks at again, and a process
that finds the index rewritten by someone else looks again at what it held only in memory.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentcli.snapshots.shadow import ShadowRepo

INDEX_REWRITE_S = 30.0
"""The index (10 MB at 100k files, ~100 ms to write) is written at most this often while few
entries change. It is a cache: what stays in memory is valid, and an index on disk that lags
behind is valid too (its stat data vouch for older files, which the next diff hashes again)."""

INDEX_PENDING_MAX = 64
"""...unless more entries than this changed since the last write. An entry changed after the
index was written is "racily clean" to libgit2 and hashed again by every walk until the next
write; this bounds that cost. Until the write, the changed paths are listed in the store's
`agentcli/unwritten-paths` journal, so another process sharing the store looks at them again
rather than trusting the older entries of the index on disk."""


class IndexWrites:
    """The write policy and the journal of one process's view of a shadow index.

    Args:
        shadow: The shadow repository.
    """

    def __init__(self, shadow: ShadowRepo) -> None:
        self._shadow = shadow
        self._last_write: float | None = None
        self._pending: set[str] = set()  # paths changed in memory since the last write
        self._owner = f"{os.getpid()}.{id(self)}".encode()
        self._stamp: tuple[int, int] | None = None  # the index file as this process last left it

    @property
    def _journal(self) -> Path:
        return self._shadow.meta_dir / "unwritten-paths"

    @property
    def pending(self) -> frozenset[str]:
        """Paths this process changed in the index since it last wrote the file."""
        return frozenset(self._pending)

    def lost_paths(self) -> set[str]:
        """Paths whose entries in the index on disk may be older than the files' last capture."""
        lost = set(self._pending) if self.written_elsewhere() else set()
        try:
            data = self._journal.read_bytes()
        except FileNotFoundError:
            return lost
        for record in data.split(b"\0"):
            owner, _, path = record.partition(b"\t")
            if path and owner != self._owner:
                lost.add(os.fsdecode(path))
        return lost

    def forget_pending(self) -> None:
        """The index in memory was replaced by the one on disk."""
        self._pending.clear()

    def changed(self, paths: list[str]) -> None:
        """Records a refresh's changes; writes the index when the policy says so."""
        self._pending.update(paths)
        if paths:
            self._journal.parent.mkdir(parents=True, exist_ok=True)
            with open(self._journal, "ab") as fh:
                fh.write(b"".join(self._owner + b"\t" + os.fsencode(p) + b"\0" for p in paths))
        if self._last_write is None and self._shadow.index_path.exists():
            # This process's first refresh: the index on disk (a seed, or another process's)
            # is its starting point, and what changed since is journalled like any later change.
            # Writing it now cost 40 ms at 50k files for a clean first capture; git skips it too.
            self._last_write = time.monotonic()
        if (
            self._last_write is None
            or len(self._pending) > INDEX_PENDING_MAX
            or time.monotonic() - self._last_write > INDEX_REWRITE_S
        ):
            self.write(force=True)
        self._stamp = _stamp(self._shadow.index_path)

    def written_elsewhere(self) -> bool:
        """Tells whether another process wrote the index since this one last left it."""
        return self._stamp is not None and _stamp(self._shadow.index_path) != self._stamp

    def write(self, *, force: bool = False) -> None:
        """Writes the index held in memory, unless nothing is pending (or `force`)."""
        if not force and not self._pending and self._last_write is not None and self._shadow.index_path.exists():
            if time.monotonic() - self._last_write <= INDEX_REWRITE_S:
                return
        # Written after the objects it points at, so the index on disk never names a missing one.
        self._shadow.repo.index.write()
        self._last_write = time.monotonic()
        self._pending.clear()
        self._stamp = _stamp(self._shadow.index_path)
        # This index holds every journalled path as of its last refresh, which looked at all of
        # them: the journal starts over.
        self._journal.unlink(missing_ok=True)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ino
