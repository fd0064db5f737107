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

Messages both ways are a 4-byte length and a pickle (a pipe between two processes of ours).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import weakref
from pathlib import Path
from typing import IO, Any

from agentcli.snapshots.restat import Records, Refreshed

READY = b"R"
"""Sent by the process once it can hash."""

REPLY_TIMEOUT_S = 30.0
"""A reply later than this (a hung disk) ends the process; the capture then hashes that part itself."""

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
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "agentcli.snapshots.hashworker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
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
            _send(proc.stdin, (root, records))
        except (OSError, ValueError) as error:
            self._give_up(f"lost: {error}")
            return False
        self._pending = True
        return True

    def result(self) -> Refreshed | None:
        """The new stat data of the files the process found unchanged; None when it failed."""
        proc = self._proc
        self._pending = False
        if proc is None or proc.stdout is None:
            return None
        try:
            reply = _receive(proc.stdout, REPLY_TIMEOUT_S)
        except Exception as error:  # noqa: BLE001 - whatever broke, this thread hashes that part itself
            self._give_up(f"lost: {error!r}")
            return None
        if not isinstance(reply, bytes):
            return None
        self.answered += 1
        return reply

    def pid(self) -> int | None:
        """The process id while it runs (for tests and the bench's memory figure)."""
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        """Ends the process: its input closes, and it exits. A later `start` starts another."""
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


def _send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _read_exactly(fd: int, size: int, timeout_s: float | None) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        if timeout_s is not None:
            readable, _, _ = select.select([fd], [], [], timeout_s)
            if not readable:
                raise TimeoutError(f"no reply in {timeout_s:.0f} s")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _receive(stream: IO[bytes], timeout_s: float | None) -> Any:
    fd = stream.fileno()
    (length,) = _LENGTH.unpack(_read_exactly(fd, _LENGTH.size, timeout_s))
    return pickle.loads(_read_exactly(fd, length, timeout_s))


def _serve() -> None:
    """The process's loop: records in, refreshed stat data out, until its input closes."""
    from agentcli.snapshots.restat import hash_records

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = sys.stdout.buffer
    out.write(READY)
    out.flush()
    while True:
        try:
            root, records = _receive(sys.stdin.buffer, None)
        except EOFError:
            return
        try:
            reply: Refreshed | None = hash_records(root, records)
        except Exception:  # noqa: BLE001 - any failure: the capture hashes this part itself
            reply = None
        _send(out, reply)


if __name__ == "__main__":
    _serve()
