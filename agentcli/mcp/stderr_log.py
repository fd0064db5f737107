"""A stdio server's stderr, copied into its log file and kept under a size limit.

A server that logs every request at debug level, or loops printing a traceback, would otherwise
fill the disk under the session folder (and ``mcp-logs/``, which every ``agentcli mcp list``
appends to). The server writes into a pipe; a thread copies the pipe into the file and, past
:data:`MAX_LOG_BYTES`, keeps only the newer half: the end of a log says why a server stopped,
which is what the user (and the failure notice's "last words") reads. Handing the SDK the file
itself, as before, gave no way to bound it.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import BinaryIO, TextIO

MAX_LOG_BYTES = 1_000_000
"""The most a server's log keeps; past it the older half is dropped."""
CUT_MARK = b"[... agentcli dropped the older part of this log to keep it under its size limit ...]\n"


def log_size(path: Path | None) -> int:
    """How much the log holds now (0 when there is none)."""
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def last_words(path: Path, since: int) -> str | None:
    """The last non-blank line written after ``since`` bytes (a log may hold earlier runs)."""
    try:
        with path.open("rb") as log:
            end = log.seek(0, os.SEEK_END)
            start = since if since <= end else 0  # trimmed meanwhile: all of it is new
            log.seek(max(start, end - 4096))  # the end says why it stopped
            lines = [line.strip() for line in log.read().decode(errors="replace").splitlines()]
    except OSError:
        return None
    return next((line for line in reversed(lines) if line), None)


class StderrLog:
    """The pipe a server's stderr goes into, and the thread that copies it into ``path``."""

    def __init__(self, path: Path, limit: int | None = None) -> None:
        self.path = path
        self.limit = MAX_LOG_BYTES if limit is None else limit
        self._writer: TextIO | None = None
        self._thread: threading.Thread | None = None

    def open(self) -> TextIO:
        """The writing end, to give the server as its stderr."""
        read_fd, write_fd = os.pipe()
        self._writer = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._copy, args=(read_fd,), name=f"mcp-stderr-{self.path.stem}",
                                        daemon=True)
        self._thread.start()
        return self._writer

    async def close(self) -> None:
        """Close our writing end and wait (briefly) until what the server wrote is in the file."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._thread is not None:
            # The thread ends at the pipe's end, once the server (which holds its own copy) is gone.
            await asyncio.to_thread(self._thread.join, 2.0)

    def _copy(self, read_fd: int) -> None:
        try:
            with self.path.open("ab") as out:
                while chunk := os.read(read_fd, 65536):
                    out.write(chunk)
                    out.flush()
                    if out.tell() > self.limit:
                        self._keep_the_end(out)
        except OSError:
            pass  # a full disk or a removed folder: the server goes on, its stderr unkept
        finally:
            os.close(read_fd)

    def _keep_the_end(self, out: BinaryIO) -> None:
        with self.path.open("rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - self.limit // 2))
            tail = log.read()
        newline = tail.find(b"\n")
        if 0 <= newline < len(tail) - 1:
            tail = tail[newline + 1 :]  # from a whole line on
        out.truncate(0)
        out.write(CUT_MARK + tail)
        out.flush()
