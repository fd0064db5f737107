"""Running a command as its own process group, reading its output, and stopping the whole group."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Literal

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
    read_end, write_end = os.pipe()  # both non-inheritable: only the leader gets the read end
    start = asyncio.ensure_future(asyncio.create_subprocess_exec(
        "bash", "-c", _SUPERVISOR, "agentcli-watch", str(read_end), *argv,
        start_new_session=True, preexec_fn=die_with_agent, pass_fds=(read_end,), **options))
    try:
        process = await asyncio.shield(start)
    except asyncio.CancelledError:
        os.close(write_end)
        await kill_group(await start)
        raise
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    task = asyncio.ensure_future(_release_watcher(process, write_end))
    _releases.add(task)
    task.add_done_callback(_releases.discard)
    return process


_SUPERVISOR = """fd=$1; shift
{ if ! read -r _ <&"$fd"; then kill -KILL 0; fi; } </dev/null >/dev/null 2>&1 &
eval "exec $fd<&-"
exec "$@"
"""
"""Start a watcher in the new group, then become the command itself (same pid, no new signal
dispositions). The watcher reads agentcli's pipe: a line means the command ended and it leaves
quietly; end of file means agentcli died, however (SIGKILL included: the kernel closes the
pipe), and it kills the whole group. The parent-death signal alone reached only the leader: a
background job, a pipeline or a nested shell ran on as an orphan. A pipe rather than a signal,
also because a parent-death signal fires when the forking *thread* ends, not the process. The
watcher is forked from inside the group's session because a process of agentcli's session may
not join it (setpgid across sessions is EPERM)."""

_releases: set[asyncio.Task[None]] = set()
"""Tasks that tell each watcher its command ended (kept so they are not collected)."""


async def _release_watcher(process: asyncio.subprocess.Process, write_end: int) -> None:
    """Once the command ends, let its watcher go without touching the group: a server the
    command left running in the background keeps running, as it did before."""
    try:
        await process.wait()
        os.write(write_end, b"\n")
    except OSError:
        pass  # the watcher is gone already (the group was killed)
    finally:
        os.close(write_end)


async def kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, then SIGKILL whatever is left after a grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        if not await _leader_exited(process, _KILL_GRACE_S):
            continue
        if sig == signal.SIGTERM:
            # The leader is gone; children that ignored SIGTERM still die.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return


async def _leader_exited(process: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether the group's leader exits within ``timeout`` s.

    Not ``process.wait()``: on Python 3.11 that also waits for the output pipes to close, and a
    process that left the group (``setsid``, a daemon) keeps them open, so a pause or a timeout
    waited out the whole grace period. The exit is known when asyncio's child watcher has reaped
    the leader; nothing wakes a waiter for that alone, so it is polled.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while process.returncode is None:
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.005)
    return True


LEFT_RUNNING_NOTE = (
    "[a background process it started still runs and holds the output open; what it prints from now on is "
    "not shown: redirect it to a file (`cmd > cmd.log 2>&1 &`) to read it later]")
"""Said after a command whose output a background job it started still holds open."""

Ending = Literal["exited", "left running", "timed out"]


async def collect(process: asyncio.subprocess.Process, timeout: float, feed: Callable[[bytes], None]) -> Ending:
    """Read the command's output into ``feed`` until it ends, and say how it ended (``bash`` and
    ``run_checks`` both run their commands through it).

    It ends when the output closes and the command has exited; or when the command (the group's
    leader) has exited and the output stays open past a short grace: a background job it started
    (a server, ``sleep 600 &``) holds it. That job is left running, as the user's shell would leave
    it, and the rest of its output is read and dropped (a pipe nobody reads would block it, and a
    closed one kill it). Waiting for the output to close instead held every ``cmd &`` until the
    timeout, which then killed the very server the command had started.
    """
    assert process.stdout is not None
    reader = asyncio.ensure_future(_read(process.stdout, feed))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        while not reader.done():
            if process.returncode is not None:
                await asyncio.wait({reader}, timeout=max(0.0, min(_LEFT_OPEN_GRACE_S, deadline - loop.time())))
                if not reader.done():
                    _draining.add(reader)
                    reader.add_done_callback(_draining.discard)
                    return "left running"
                break
            if loop.time() >= deadline:
                raise TimeoutError
            # Woken by the end of the output at once; the leader's exit alone wakes nothing, so
            # it is looked at every _POLL_S while a background job keeps the output open.
            await asyncio.wait({reader}, timeout=min(_POLL_S, deadline - loop.time()))
        await asyncio.wait_for(process.wait(), max(0.0, deadline - loop.time()))
    except TimeoutError:
        await _stop(process, reader)
        return "timed out"
    except BaseException:  # a pause (cancellation) or a failure: nothing is left running
        await _stop(process, reader)
        raise
    return "exited"


async def _stop(process: asyncio.subprocess.Process, reader: asyncio.Future[None]) -> None:
    """Kill the group, then read its output to the end: the pipe is closed here, not by the
    garbage collector once the event loop has gone (a traceback at exit, after a flood)."""
    await kill_group(process)
    await asyncio.wait({reader}, timeout=_LEFT_OPEN_GRACE_S)
    reader.cancel()


_POLL_S = 0.05
_LEFT_OPEN_GRACE_S = 0.5
"""How long the output may stay open after the command exits: children finishing their last
writes. Longer, it is a background job the command left running."""

_draining: set[asyncio.Task[None]] = set()
"""Readers of output a background job still holds open (kept so they are not collected)."""


async def _read(stream: asyncio.StreamReader, feed: Callable[[bytes], None]) -> None:
    while chunk := await stream.read(65536):
        feed(chunk)
