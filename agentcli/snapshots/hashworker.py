"""A second process that hashes part of a bulk refresh, so it runs on two cores.

After every file is touched with the same content the capture must hash every file (restat.py),
and Python threads cannot share that work: each `lstat`, read and hash is a short call that
trades the GIL (two threads over halves of the index measured 1.06x one). A process has a GIL
of its own. It gets the records of the last part of the index (position, stat data, blob id,
path: `restat.entry_records`), judges and hashes them exactly as the capture's own thread does
(`restat.hash_records`, the same function), and sends back the new stat data of the files it
found unchanged; the capture applies them. It never touches the index or the repository.

Its start (an interpreter and pygit2, ~80 ms of CPU) is paid off the capture's path: a session's
store (one that watches) starts it after a walk of a tree big enough to need it (`start`, which
does not wait), and a refresh uses it only once it said it is ready (`usable`); until then the
refresh runs on one thread, as before. A plain subprocess rather than `multiprocessing`: a
spawned `multiprocessing` child re-imports the parent's `__main__` (the whole CLI), and a
forked one would copy a threaded process. It dies with its parent: it exits when its input
closes, which the kernel does when the parent exits, however it exits; SIGINT (a Ctrl-C in the
terminal reaches the whole process group) is ignored so only that ends it.

It runs with `-P` from `/`, so nothing in the workspace (an `agentcli/` folder, a `select.py`
the model wrote) is importable ahead of the standard library and agentcli's own package. Messages
both ways are bytes framed by a 4-byte length: a request is the workspace root and the records;
a reply is a status byte and the refreshed entries. Nothing is unpickled from the other process.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import IO

from agentcli.snapshots.restat import Records, Refreshed

READY = b"R"
"""Sent by the process once it can hash."""

REPLY_MIN_WAIT_S = 1.0
"""The least a refresh waits for the process's reply once its own share is done; it waits longer
only as long as its own share took (the process has about as much to do). Past that (a hung disk,
a process starved of CPU) the process is ended and the capture hashes that part itself."""

_OK = b"\x01"
_FAILED = b"\x00"

_BOOTSTRAP = "import sys; sys.path.append(sys.argv[1]); from agentcli.snapshots.hashworker import _serve; _serve()"
"""The process's program: agentcli's package root goes last on the path (found anyway when
agentcli is installed; needed when it runs from a source tree)."""

_LENGTH = struct.Struct(">I")


class HashWorker:
    """The capture's side of the hashing process: start, hand it records, take its answer."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready = False
        self._pending = False
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], HashWorker] | None = None
        self.answered = 0
        """Parts of a refresh the process hashed (for the bench and tests)."""
        self.failed: str | None = None
        """Why the process was given up (it is then never started again), for the bench and tests."""

    def start(self) -> None:
        """Starts the process in the background (returns at once); a no-op when it runs."""
        if self._proc is not None or self.failed is not None:
            return
        package_root = str(Path(__file__).resolve().parents[2])  # where `agentcli` is importable from
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-P", "-c", _BOOTSTRAP, package_root],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd="/",
            )
        except OSError as error:
            self.failed = f"could not start: {error}"
            return
        self._finalizer = weakref.finalize(self, _end, self._proc)

    def usable(self) -> bool:
        """Tells whether the process is ready now (never waits).

        Not gated on a free CPU as the split walk is: a process gets its own share of a busy
        machine's CPUs, where threads share one GIL. Beside a CPU hog on the 2-core machine the
        refresh still took 0.86x its single-thread time (10k files, 6 pairs); at load 3.4, 0.68x.
        """
        proc = self._proc
        if proc is None or self.failed is not None:
            return False
        if not self._ready:
            assert proc.stdout is not None
            readable, _, _ = select.select([proc.stdout], [], [], 0)
            if not readable:
                return False
            if os.read(proc.stdout.fileno(), 1) != READY:
                self._give_up("did not start")
                return False
            self._ready = True
        return True

    def submit(self, root: bytes, records: Records) -> bool:
        """Hands the process records to judge; False when it cannot take them."""
        proc = self._proc
        if proc is None or proc.stdin is None or self._pending:
            return False
        try:
            _send(proc.stdin, root, records)
        except (OSError, ValueError) as error:
            self._give_up(f"lost: {error}")
            return False
        self._pending = True
        return True

    def result(self, wait_s: float) -> Refreshed | None:
        """The new stat data of the files the process found unchanged; None when it failed or
        had not answered within ``wait_s`` (at least `REPLY_MIN_WAIT_S`)."""
        proc = self._proc
        self._pending = False
        if proc is None or proc.stdout is None:
            return None
        try:
            reply = _receive(proc.stdout, max(REPLY_MIN_WAIT_S, wait_s))
        except (OSError, EOFError, TimeoutError, ValueError, struct.error) as error:
            self._give_up(f"lost: {error!r}")
            return None
        if reply[:1] != _OK:
            return None
        self.answered += 1
        return reply[1:]

    def pid(self) -> int | None:
        """The process id while it runs (for tests and the bench's memory figure)."""
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        """Ends the process: its input closes, and it exits. A later `start` starts another."""
        if self._pending and self._proc is not None:
            self._proc.kill()  # busy with records nobody will read: it would finish them first
        self._proc = None
        self._ready = False
        self._pending = False
        if self._finalizer is not None:
            self._finalizer()  # runs `_end` once; also run if this object is dropped, or at exit
            self._finalizer = None

    def _give_up(self, why: str) -> None:
        self.close()
        self.failed = why


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Closes the process's pipes (it exits on end of input) and reaps it."""
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass
    try:
        proc.wait(timeout=1)  # idle, it exits at once; still importing, it holds no state: killed
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _send(stream: IO[bytes], *frames: bytes) -> None:
    stream.write(b"".join(_LENGTH.pack(len(frame)) + frame for frame in frames))
    stream.flush()


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        if deadline is not None:
            readable, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                raise TimeoutError("no reply in time")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _receive(stream: IO[bytes], timeout_s: float | None) -> bytes:
    """One frame, all of it within ``timeout_s`` (None: however long it takes)."""
    fd = stream.fileno()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    (length,) = _LENGTH.unpack(_read_exactly(fd, _LENGTH.size, deadline))
    return _read_exactly(fd, length, deadline)


def _serve() -> None:
    """The process's loop: records in, refreshed stat data out, until its input closes."""
    from agentcli.snapshots.restat import hash_records

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = sys.stdout.buffer
    out.write(READY)
    out.flush()
    while True:
        try:
            root = _receive(sys.stdin.buffer, None)
            records = _receive(sys.stdin.buffer, None)
        except EOFError:
            return
        try:
            reply = _OK + hash_records(root, records)
        except Exception:  # noqa: BLE001 - any failure: the capture hashes this part itself
            reply = _FAILED
        _send(out, reply)


if __name__ == "__main__":
    _serve()
