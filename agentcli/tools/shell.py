"""The bash tool: a command in the workspace with a timeout, killed as a whole process group."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from agentcli.tools.base import Arguments, Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.capture import OutputCapture
from agentcli.tools.process import kill_group, start_group
from agentcli.tools.sandbox import sandbox_status, wrap_command

SUMMARY_CHARS = 300
"""A command is shown whole in a permission prompt up to this length."""

class BashArgs(Arguments):
    command: str = Field(description="A bash command, run in the workspace folder.")
    timeout_s: float | None = Field(None, gt=0, description="Seconds before the command is killed.")


class Bash(Tool[BashArgs]):
    name = "bash"
    description = (
        "Run a bash command in the workspace and return its combined output and exit code. "
        "No terminal input is available; long output keeps its head and tail."
    )
    arguments = BashArgs
    permission = "command"
    target, target_kind = "command", "command"
    changes_files = "always"  # a command can change any file; the snapshot after it finds out which

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        command = cls.target_of(args) or ""
        shown = command if len(command) <= SUMMARY_CHARS else command[: SUMMARY_CHARS - 1] + "…"
        return f"Run `{shown}`"

    async def run(self, args: BashArgs, ctx: ToolContext) -> ToolResult:
        if "\x00" in args.command:
            raise ToolError("the command holds a NUL byte, which no command line can carry; remove it")
        timeout = min(args.timeout_s or ctx.settings.bash_timeout_s, ctx.settings.bash_max_timeout_s)
        argv = ["bash", "-c", args.command]
        if ctx.sandbox:
            # Probed once per process, in a thread: the probe is itself a short subprocess.
            status = await asyncio.to_thread(sandbox_status)
            if not status.available or status.bwrap is None:
                return ToolResult.failure(f"the command was not run: {status.reason}")
            argv = wrap_command(argv, ctx.workspace, bwrap=status.bwrap)
        started = time.monotonic()
        # Its own process group, so a timeout or a pause kills the children it spawned too.
        # Under bwrap the group is bwrap itself: killing it takes down the sandbox's PID
        # namespace (--unshare-pid, --die-with-parent), children that left the group included.
        process = await start_group(
            *argv,
            cwd=ctx.workspace,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        capture = OutputCapture(ctx.settings.max_output_chars)
        ending = await _collect(process, timeout, capture)  # a cancellation kills the group there
        text = capture.text()
        elapsed = time.monotonic() - started
        if ending == "timed out":
            message = f"command timed out after {timeout:g} s and was killed"
            return ToolResult(ok=False, output=f"{text}\n[{message}]".lstrip(), error=message)
        code = process.returncode
        footer = f"[exit code {code}, {elapsed:.1f} s]"
        if ending == "left running":
            footer += ("\n[a background process it started still runs and holds the output open; what it prints "
                       "from now on is not shown: redirect it to a file (`cmd > cmd.log 2>&1 &`) to read it later]")
        body = f"{text.rstrip()}\n{footer}" if text.strip() else f"(no output)\n{footer}"
        if code == 0:
            return ToolResult(ok=True, output=body)
        return ToolResult(ok=False, output=body, error=f"exit code {code}")


Ending = Literal["exited", "left running", "timed out"]


async def _collect(process: asyncio.subprocess.Process, timeout: float, capture: OutputCapture) -> Ending:
    """Read the command's output into ``capture`` until it ends, and say how it ended.

    It ends when the output closes and the command has exited; or when the command (the group's
    leader) has exited and the output stays open past a short grace: a background job it started
    (a server, ``sleep 600 &``) holds it. That job is left running, as the user's shell would leave
    it, and the rest of its output is read and dropped (a pipe nobody reads would block it, and a
    closed one kill it). Waiting for the output to close instead held every ``cmd &`` until the
    timeout, which then killed the very server the command had started.
    """
    assert process.stdout is not None
    reader = asyncio.ensure_future(_read(process.stdout, capture))
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


async def _read(stream: asyncio.StreamReader, capture: OutputCapture) -> None:
    while chunk := await stream.read(65536):
        capture.feed(chunk)
