"""The ``run_checks`` tool: run the project's checks and report which pass.

``data`` holds ``passed`` (the verdict, from exit codes only) and ``results`` per command; the
review of the call raises the ``checks_signal`` that moves a workflow's validate phase.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping
from typing import ClassVar

from agentcli.config import CheckSettings
from agentcli.tools.base import Arguments, Permission, Tool, ToolContext, ToolResult
from agentcli.tools.checks import CheckRun, DetectedCheck, detect_checks, run_check
from agentcli.tools.process import LEFT_RUNNING_NOTE

_PASSED_TAIL_CHARS = 400
"""Output shown for a passing check: its last lines, usually the runner's summary."""


class RunChecksArgs(Arguments):
    """No arguments: which checks run is the project's choice, not the model's."""


class RunChecks(Tool[RunChecksArgs]):
    name = "run_checks"
    description = (
        "Run the project's checks (tests, linters) and report which pass. The verdict comes from "
        "their exit codes; failing checks show the end of their output."
    )
    arguments = RunChecksArgs
    permission: ClassVar[Permission] = "command"  # the commands run project code

    @classmethod
    def preview(cls, args: Mapping[str, object]) -> str:
        return "the project's checks"

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        return "Run the project's checks"

    def __init__(self, commands: list[str] | None = None, timeout_s: float = 600.0) -> None:
        """Set the commands once, from the config.

        Args:
            commands: ``[checks] commands`` from the config; None detects them in the workspace
                at every call (a project gains tests while the agent works).
            timeout_s: Seconds each command may run before its process group is killed.
        """
        self.commands = list(commands) if commands is not None else None
        self.timeout_s = timeout_s

    @classmethod
    def from_settings(cls, checks: CheckSettings) -> RunChecks:
        return cls(checks.commands, checks.timeout_s)

    async def run(self, args: RunChecksArgs, ctx: ToolContext) -> ToolResult:
        detected: list[DetectedCheck] = []
        if self.commands is None:
            detected = detect_checks(ctx.workspace)
            commands = [check.command for check in detected]
        else:
            commands = self.commands
        if not commands:
            why = (
                "the [checks] commands list in the config is empty" if self.commands is not None
                else "none are configured ([checks] commands) and none were detected (no tests, "
                "ruff, package.json test script, Cargo.toml, go.mod or Makefile check/test target)"
            )
            return ToolResult(
                ok=True,
                output=f"No checks to run: {why}. Nothing was verified; this counts as passed.",
                data={"passed": True, "results": [], "source": "config" if self.commands is not None else "detected"},
            )
        wrap: Callable[[list[str]], list[str]] | None = None
        # getattr: ToolContext gains `sandbox` with the sandbox work; checks run project code, so
        # they run in the sandbox exactly when bash does.
        if getattr(ctx, "sandbox", False):
            from agentcli.tools.sandbox import sandbox_status, wrap_command

            status = await asyncio.to_thread(sandbox_status)
            bwrap = status.bwrap
            if not status.available or bwrap is None:
                return ToolResult.failure(f"the checks were not run: {status.reason}")
            wrap = functools.partial(wrap_command, workspace=ctx.workspace, bwrap=bwrap)

        runs = [await run_check(command, ctx.workspace, self.timeout_s, wrap=wrap) for command in commands]
        return _report(runs, detected, ctx.settings.max_output_chars, self.timeout_s)


def _report(runs: list[CheckRun], detected: list[DetectedCheck], budget: int, timeout_s: float) -> ToolResult:
    failed = [run for run in runs if not run.passed]
    passed = not failed
    if passed:
        head = f"All {len(runs)} check{'s' if len(runs) != 1 else ''} passed."
    else:
        head = f"{len(failed)} of {len(runs)} check{'s' if len(runs) != 1 else ''} failed: " + ", ".join(
            run.command for run in failed
        ) + "."
    sections = [head]
    if detected:
        sections.append(
            "Checks detected in the workspace (set [checks] commands in .agentcli.toml to choose them):\n"
            + "\n".join(f"- {check.command}: {check.reason}" for check in detected)
        )
    per_failure = max(1000, (budget - 2000) // max(1, len(failed)))
    for run in runs:
        if run.timed_out:
            status = f"FAILED: timed out after {timeout_s:g} s and was killed"
        elif run.passed:
            status = f"passed (exit code 0, {run.duration_s:.1f} s)"
        else:
            status = f"FAILED (exit code {run.exit_code}, {run.duration_s:.1f} s)"
        tail = _tail(run.output, _PASSED_TAIL_CHARS if run.passed else per_failure)
        note = f"\n{LEFT_RUNNING_NOTE}" if run.left_running else ""
        sections.append(f"$ {run.command}\n{status}" + (f"\n{tail}" if tail else "") + note)
    data = {
        "passed": passed,
        "results": [
            {
                "command": run.command,
                "exit_code": run.exit_code,
                "passed": run.passed,
                "duration_s": run.duration_s,
                "timed_out": run.timed_out,
                "left_running": run.left_running,
            }
            for run in runs
        ],
        "source": "detected" if detected else "config",
    }
    output = "\n\n".join(sections)
    if passed:
        return ToolResult(ok=True, output=output, data=data)
    return ToolResult(ok=False, output=output, error=head, data=data)


def _tail(text: str, limit: int) -> str:
    text = text.rstrip()
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    if 0 <= newline < len(cut) - 1:
        cut = cut[newline + 1 :]  # start on a whole line
    return f"[… {len(text) - len(cut)} earlier characters not shown]\n{cut}"
