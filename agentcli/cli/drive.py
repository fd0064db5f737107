"""The headless driver: one turn of a Session, printed, turned into the command's exit code.

Whatever happens, the user sees a line, not a traceback, and the session is closed, so its log
is flushed and the session can be resumed:

- the turn ends: its outcome's exit code (0 completed, 1 error, 3 question, 4 halted, 5 paused
  or waiting for approval);
- the session refuses the command (``SessionStateError``): its message, exit 2;
- anything else escapes the session: ``agentcli: internal error: <Type>: <message> (details in
  the session log)``, exit 1, the traceback written to the log as an ``error`` event;
- Ctrl-C pauses the turn cleanly (exit 5); a second Ctrl-C quits at once (130). SIGTERM does
  the same (a second one quits with 143).
"""

from __future__ import annotations

import asyncio
import io
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import typer

from agentcli.cli.common import EXIT_ERROR, EXIT_USAGE
from agentcli.cli.options import OutputFormat

if TYPE_CHECKING:
    from agentcli.session import Session

EXIT_QUIT = 130
"""A second Ctrl-C: the shell's code for a process ended by SIGINT."""
EXIT_TERMINATED = 143
"""A second SIGTERM: the shell's code for a process ended by it."""


class _Refused(Exception):
    """The session refused the command that was to start the turn."""


async def drive(session: Session, start: Callable[[], Awaitable[object]], output: OutputFormat) -> int:
    """Start a turn with ``start`` (a Session command), print its events, return the exit code."""
    from agentcli.headless import JsonLinesPrinter, TextPrinter

    if isinstance(sys.stdout, io.TextIOWrapper):
        # An output whose encoding lacks a character (PYTHONIOENCODING=ascii, a latin-1 locale)
        # gets its escape (\u2713): the printer failed on the first "·" and was dropped, and the
        # run went on without printing a line.
        sys.stdout.reconfigure(errors="backslashreplace")
    session.subscribe(JsonLinesPrinter() if output is OutputFormat.jsonl else TextPrinter())
    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_interrupt(reason: str, quit_code: int) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:
            session.close()
            os._exit(quit_code)
        loop.create_task(session.pause(reason))

    loop.add_signal_handler(signal.SIGINT, on_interrupt, "interrupted with Ctrl-C", EXIT_QUIT)
    # SIGTERM (`timeout`, a harness, systemd) stops the same clean way: the command killed, every
    # call answered, the turn ended as paused in the log; it used to end the process on the spot.
    loop.add_signal_handler(signal.SIGTERM, on_interrupt, "stopped by SIGTERM", EXIT_TERMINATED)
    try:
        return await _turn(session, start)
    except _Refused as refused:
        typer.echo(f"agentcli: {refused}", err=True)
        return EXIT_USAGE
    except Exception as error:  # noqa: BLE001 - a bug, not the user's doing: one line here, the traceback in the log
        from agentcli.session.errors import failure_line

        typer.echo(f"agentcli: internal error: {failure_line(error, recorded=session.record_failure(error))}",
                   err=True)
        return EXIT_ERROR
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
        session.close()


async def _turn(session: Session, start: Callable[[], Awaitable[object]]) -> int:
    from agentcli.headless import EXIT_CODES
    from agentcli.session import SessionStateError

    try:
        await start()
    except SessionStateError as error:
        raise _Refused(str(error)) from None
    ended = await session.wait_turn()
    return EXIT_CODES[ended.outcome]


