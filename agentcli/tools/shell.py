"""The bash tool: a command in the workspace with a timeout, killed as a whole process group."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from pydantic import Field

from agentcli.tools.base import Arguments, Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.process import kill_group, start_group
from agentcli.tools.sandbox import sandbox_status, wrap_command
from agentcli.tools.text import truncate_middle

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
        try:
            output, timed_out = await _collect(process, timeout)
        except asyncio.CancelledError:
            await kill_group(process)
            raise
        text = truncate_middle(output.decode("utf-8", errors="replace"), ctx.settings.max_output_chars)
        elapsed = time.monotonic() - started
        if timed_out:
            message = f"command timed out after {timeout:g} s and was killed"
            return ToolResult(ok=False, output=f"{text}\n[{message}]".lstrip(), error=message)
        code = process.returncode
        footer = f"[exit code {code}, {elapsed:.1f} s]"
        body = f"{text.rstrip()}\n{footer}" if text.strip() else f"(no output)\n{footer}"
        if code == 0:
            return ToolResult(ok=True, output=body)
        return ToolResult(ok=False, output=body, error=f"exit code {code}")


async def _collect(process: asyncio.subprocess.Process, timeout: float) -> tuple[bytes, bool]:
    assert process.stdout is not None
    chunks: list[bytes] = []

    async def read_all() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            chunks.append(chunk)
        await process.wait()

    try:
        await asyncio.wait_for(read_all(), timeout)
    except TimeoutError:
        await kill_group(process)
        return b"".join(chunks), True
    return b"".join(chunks), False
