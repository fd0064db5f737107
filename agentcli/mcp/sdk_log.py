"""The SDK's own warnings go to the log of the server they are about, never to the terminal.

The ``mcp`` SDK logs through ``logging`` — a server that prints a banner on stdout gets "Failed to
parse JSONRPC message from server" and a traceback per line — and with no handler configured
Python writes those to stderr: over a headless run's output, or into the TUI's screen. Each
connection's owner task sets :data:`_WRITER` (tasks the SDK starts inherit it), so a record is
written, on one line, to the stderr log of the server it came from.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import TextIO

_WRITER: ContextVar[TextIO | None] = ContextVar("mcp_server_log", default=None)


class _ToServerLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        log = _WRITER.get()
        if log is None:
            return  # not within a connection: nothing to tell it to
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                text += f": {' '.join(str(record.exc_info[1]).split())[:300]}"
            log.write(f"agentcli: the MCP client {record.levelname.lower()}: {text}\n")
            log.flush()
        except Exception:  # noqa: BLE001 - a log line must never break the connection
            pass


def route_sdk_logs() -> None:
    """Send the SDK's warnings to the servers' logs (once per process)."""
    logger = logging.getLogger("mcp")
    if not any(isinstance(handler, _ToServerLog) for handler in logger.handlers):
        handler = _ToServerLog(logging.WARNING)
        logger.addHandler(handler)
        logger.propagate = False


def log_to(log: TextIO) -> None:
    """Within the current task (and those it starts), the SDK's warnings go to ``log``."""
    _WRITER.set(log)
