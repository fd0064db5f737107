"""One writer per session: an exclusive ``flock`` on ``session.lock`` in the session's folder.

The process that opens a session's log for appending holds the lock until it closes the log; a
second process that would write to the session (resume, compact, rewind, restore, the TUI) or
remove it is refused, naming the holder's pid. The kernel drops the lock when its holder dies,
so a crashed or SIGKILLed session is resumable at once, with no stale lock to clean up. Readers
(``sessions``, ``sessions show``, ``diff``) never take it.

The holder writes its pid into the file after locking it, for the refusal to name; the file
itself is left in place (removing it would let two processes lock two different files).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

LOCK_NAME = "session.lock"


class SessionInUse(Exception):
    """Another process has the session open for writing."""

    def __init__(self, session_id: str, pid: int | None) -> None:
        holder = f"pid {pid}" if pid is not None else "pid unknown"
        super().__init__(f"session {session_id} is in use by another agentcli ({holder})")
        self.session_id = session_id
        self.pid = pid


class SessionLock:
    """The held lock of one session folder; ``release`` (or the process's end) lets it go."""

    def __init__(self, directory: Path, descriptor: int) -> None:
        self.directory = directory
        self._descriptor: int | None = descriptor

    @classmethod
    def acquire(cls, directory: Path) -> SessionLock:
        """Lock ``directory``'s session, or raise :class:`SessionInUse` at once (never waits).

        The folder must exist (``FileNotFoundError`` if it was removed meanwhile).
        """
        # os.open's descriptors are not inherited by the commands the agent runs (PEP 446), so a
        # background process a tool started cannot keep the session locked after agentcli exits.
        descriptor = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise SessionInUse(directory.name, holder_pid(directory)) from None
        except BaseException:
            os.close(descriptor)
            raise
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode("ascii"), 0)
        return cls(directory, descriptor)

    @property
    def held(self) -> bool:
        return self._descriptor is not None

    def release(self) -> None:
        if self._descriptor is None:
            return
        descriptor, self._descriptor = self._descriptor, None
        try:
            # Emptied first, so a reader that finds the file unlocked never names a gone process.
            os.ftruncate(descriptor, 0)
        except OSError:
            pass  # the folder was removed under us (``sessions rm`` holds the lock while it does)
        os.close(descriptor)  # closing the last descriptor drops the flock


def holder_pid(directory: Path) -> int | None:
    """The pid the lock's holder wrote, or (in the instant before it has) the one in meta.json."""
    try:
        text = (directory / LOCK_NAME).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if text.isdigit():
        return int(text)
    try:
        pid = json.loads((directory / "meta.json").read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) else None
