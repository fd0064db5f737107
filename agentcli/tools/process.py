"""Running a command as its own process group, and stopping the whole group."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import sys
from typing import Any

_KILL_GRACE_S = 2.0


_PR_SET_PDEATHSIG = 1


def die_with_agent() -> None:
    """In the child, before exec: on Linux, be killed if agentcli dies (even by SIGKILL).

    A killed agent cannot kill its command's process group, so the command would run on,
    unwatched; the kernel's parent-death signal stops at least the command itself.
    """
    if sys.platform != "linux":
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


async def start_group(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """Start ``argv`` as its own process group that dies with the agent; a cancellation that
    lands while it starts still kills the whole group.

    Cancelled after the fork but before its pipes are connected, ``create_subprocess_exec``
    kills only the group's leader: a child the command had already started ran on, holding the
    output pipe open, and the cancelled call waited for it to exit. So the start is shielded,
    and the group killed once it is known.
    """
    start = asyncio.ensure_future(
        asyncio.create_subprocess_exec(*argv, start_new_session=True, preexec_fn=die_with_agent, **options))
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        await kill_group(await start)
        raise


async def kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, then SIGKILL whatever is left after a grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            await asyncio.wait_for(process.wait(), _KILL_GRACE_S)
        except TimeoutError:
            continue
        if sig == signal.SIGTERM:
            # The leader is gone; children that ignored SIGTERM still die.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return
