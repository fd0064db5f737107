"""Waiting on conditions, never on elapsed time: the suite runs on loaded machines.

A test that sleeps "long enough" for something to happen fails when the machine is slower than
the guess, and wastes the time when it is faster. These helpers poll a condition instead, and
give up only after a deadline far longer than the condition should ever need: reaching it means
the thing did not happen, not that the machine was busy.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

DEADLINE_S = 60.0
"""How long a condition may take before the test fails (the suite's pytest timeout is 300 s)."""

POLL_S = 0.02
"""How often a condition is checked: the granularity of the wait, not a guess at its length."""


async def eventually(predicate: Callable[[], object], *, what: str, timeout: float = DEADLINE_S) -> None:
    """Return as soon as ``predicate()`` is true; fail the test if it is still false after ``timeout``.

    Args:
        predicate: The condition, checked on this event loop between polls.
        what: What is awaited, for the failure message ("the child to be killed").
        timeout: Seconds before giving up; generous, since a loaded machine is slow.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(POLL_S)


def eventually_sync(predicate: Callable[[], object], *, what: str, timeout: float = DEADLINE_S) -> None:
    """:func:`eventually` for tests without an event loop (subprocesses, files)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(POLL_S)


def processes_with(marker: str) -> list[str]:
    """``pid: command line`` of every process whose command line contains ``marker``.

    Tests give the commands they start a unique marker (``sleep 30.123456``), so a process of
    another test running at the same time is never mistaken for theirs.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        # A zombie has exited and only waits to be reaped: it runs nothing and has no cmdline.
        if marker in cmdline and state != "Z":
            found.append(f"{entry.name}: {cmdline}")
    return found


__all__ = ["DEADLINE_S", "POLL_S", "eventually", "eventually_sync", "processes_with"]
