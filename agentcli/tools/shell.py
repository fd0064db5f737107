"""The bash tool: a command in the workspace with a timeout, killed as a whole process group."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from pydantic import Field

from agentcli.tools.base import Arguments, Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.capture import OutputCapture
from agentcli.tools.process import LEFT_RUNNING_NOTE, collect, start_group
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
        ending = await collect(process, timeout, capture.feed)  # a cancellation kills the group there
        text = capture.text()
        elapsed = time.monotonic() - started
        if ending == "timed out":
            message = f"command timed out after {timeout:g} s and was killed"
            return ToolResult(ok=False, output=f"{text}\n[{message}]".lstrip(), error=message)
        code = process.returncode
        footer = f"[exit code {code}, {elapsed:.1f} s]"
        if ending == "left running":
            footer += f"\n{LEFT_RUNNING_NOTE}"
        body = f"{text.rstrip()}\n{footer}" if text.strip() else f"(no output)\n{footer}"
        if code == 0:
            return ToolResult(ok=True, output=body)
        return ToolResult(ok=False, output=body, error=f"exit code {code}")
