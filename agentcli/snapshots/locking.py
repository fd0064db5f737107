"""Serializes store operations across threads and processes.

Two agent sessions may run in the same workspace and share one shadow repository, index
included. Each operation (capture, restore, diff against the working tree, gc) takes a
thread lock and an exclusive `flock` on a file in the store, so one never sees the other's
half-written index or has its objects pruned under it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentcli.snapshots.errors import StoreBusyError

try:  # POSIX only; on Windows the thread lock still serializes one process.
    import fcntl
except ImportError:  # pragma: no cover - not exercised on Linux CI
    fcntl = None  # type: ignore[assignment]


class StoreLock:
    """A re-entrant lock held by one thread of one process at a time.

    Args:
        path: The lock file (created if missing).
        timeout_s: How long to wait for another process before giving up.
    """

    def __init__(self, path: Path, timeout_s: float = 60.0) -> None:
        self._path = path
        self._timeout_s = timeout_s
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """Holds the lock for the duration of the `with` block."""
        with self._thread_lock:
            if self._depth == 0:
                self._acquire_file()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release_file()

    def _acquire_file(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is None:
            self._fd = fd  # type: ignore[unreachable]  # on Windows; mypy checks for this platform only
            return
        deadline = time.monotonic() + self._timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise StoreBusyError(
                        f"the snapshot store lock {self._path} is held by another agentcli process "
                        f"for more than {self._timeout_s:.0f} s; wait for it to finish or stop it"
                    ) from None
                time.sleep(0.02)
        self._fd = fd

    def _release_file(self) -> None:
        if self._fd is None:
            return
        if fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
