"""The headless driver: one turn of a Session, printed, turned into the command's exit code.

The session is closed however the turn ends, so its log is flushed and it can be resumed.
Ctrl-C pauses the turn cleanly (exit 5); a second Ctrl-C quits at once (130).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agentcli.cli.options import OutputFormat

if TYPE_CHECKING:
    from agentcli.session import Session

EXIT_QUIT = 130
"""A second Ctrl-C: the shell's code for a process ended by SIGINT."""


async def drive(session: Session, start: Callable[[], Awaitable[None]], output: OutputFormat) -> int:
    """Start a turn with ``start`` (a Session command), print its events, return the exit code."""
    from agentcli.headless import EXIT_CODES, JsonLinesPrinter, TextPrinter

    session.subscribe(JsonLinesPrinter() if output is OutputFormat.jsonl else TextPrinter())
    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_interrupt() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:
            session.close()
            os._exit(EXIT_QUIT)
        loop.create_task(session.pause("interrupted with Ctrl-C"))

    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        await start()
        ended = await session.wait_turn()
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        session.close()
    return EXIT_CODES[ended.outcome]
