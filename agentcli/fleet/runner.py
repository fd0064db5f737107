"""Running one job: a headless ``agentcli run`` in a prepared directory, then the checks there.

Each job is its own process (not a Session in this process): a full session with its own log,
timeline and stuck detection, isolated from its siblings' crashes and from this loop, exactly as a
user's ``agentcli run`` would be. Its JSON-lines output feeds the live view; its session's
``meta.json`` gives the final usage. The same function runs on a Ray worker (fleet/ray_backend.py).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.fleet.models import CheckOutcome, JobReport, JobSpec

if TYPE_CHECKING:
    from agentcli.tools.checks import CheckRun

_STOP_GRACE_S = 10.0
"""After SIGINT (the session pauses and writes its log), how long before the group is killed."""
_ERROR_TAIL = 2000
_OUTPUT_TAIL = 1500

CHECKING = "fleet_checking"
"""The event ``progress`` receives when the session has ended and the checks start."""

Progress = Callable[[dict[str, object]], None]
"""Receives each event the session prints (a JSON object), as it happens."""


def command_line(spec: JobSpec, workdir: Path) -> list[str]:
    """The ``agentcli run`` argv for ``spec`` in ``workdir`` (this interpreter, this agentcli)."""
    argv = [sys.executable, "-m", "agentcli", "run", "--cwd", str(workdir), "--output", "jsonl",
            "--permission-mode", spec.permission_mode]
    if spec.model:
        argv += ["--model", spec.model]
    if spec.api_base:
        argv += ["--api-base", spec.api_base]
    if spec.workflow:
        argv += ["--workflow", spec.workflow]
    if spec.max_steps:
        argv += ["--max-steps", str(spec.max_steps)]
    if spec.sandbox is not None:
        argv.append("--sandbox" if spec.sandbox else "--no-sandbox")
    # After "--" the prompt is never read as an option, even when it starts with a dash.
    return [*argv, "--", spec.prompt]


async def run_job(spec: JobSpec, workdir: Path, *, log_dir: Path, progress: Progress | None = None,
                  env: Mapping[str, str] | None = None) -> JobReport:
    """Runs the session to its end, then the checks; cancelling stops the session cleanly.

    Args:
        spec: What to run.
        workdir: The prepared directory (a materialized snapshot or a clone).
        log_dir: Where the process's stdout (``run.jsonl``) and stderr (``stderr.txt``) go.
        progress: Called with every event the session prints.
        env: The environment (``os.environ`` by default); keys come from here, never from the spec.

    Returns:
        The report; a process that could not start or died reports exit code 1 and its stderr.
    """
    from agentcli.tools.process import kill_group, start_group

    log_dir.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 - one mkdir before a process starts
    started = time.monotonic()
    report = JobReport(exit_code=1)
    with (log_dir / "run.jsonl").open("w", encoding="utf-8") as out, \
            (log_dir / "stderr.txt").open("w", encoding="utf-8") as err:
        try:
            process = await start_group(*command_line(spec, workdir), cwd=workdir, env=dict(env or os.environ),
                                        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                        stderr=err)
        except OSError as error:
            return JobReport(exit_code=1, error=f"could not start agentcli: {error}")
        try:
            assert process.stdout is not None
            async for raw in process.stdout:
                out.write(raw.decode("utf-8", "replace"))
                out.flush()
                event = _parse(raw)
                if event is not None:
                    _fold(report, event)
                    if progress is not None:
                        progress(event)
            report.exit_code = await process.wait()
        except asyncio.CancelledError:
            await _stop(process, kill_group)
            raise
    report.wall_s = time.monotonic() - started
    if report.session_id is not None:
        _read_meta(report, env)
    if report.exit_code not in (0, 3, 4, 5):
        report.error = (log_dir / "stderr.txt").read_text(encoding="utf-8", errors="replace")[-_ERROR_TAIL:].strip()
    if report.outcome is None:
        # The session never ended a turn (a bad model, a crash): it cannot pass whatever the
        # checks say, and a project's test suite, run once per attempt, costs minutes.
        return report
    if progress is not None:
        progress({"type": CHECKING})
    report.checks = await run_checks(spec, workdir, env)
    return report


async def _stop(process: asyncio.subprocess.Process, kill: Callable[[asyncio.subprocess.Process], object]) -> None:
    """SIGINT first: the session pauses and flushes its log, so it can be resumed; then the group."""
    try:
        os.killpg(process.pid, signal.SIGINT)
        await asyncio.shield(asyncio.wait_for(process.wait(), _STOP_GRACE_S))
    except (ProcessLookupError, TimeoutError, asyncio.CancelledError):
        pass
    if process.returncode is None:
        await asyncio.shield(kill(process))  # type: ignore[arg-type]


def _parse(raw: bytes) -> dict[str, object] | None:
    try:
        event = json.loads(raw)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def _fold(report: JobReport, event: dict[str, object]) -> None:
    kind = event.get("type")
    if kind == "session_started" and isinstance(event.get("session_id"), str):
        report.session_id = str(event["session_id"])
    elif kind == "turn_ended":
        report.outcome = str(event.get("outcome"))
        report.reason = str(event.get("reason") or "")
        steps = event.get("steps")
        report.steps = steps if isinstance(steps, int) else report.steps


def _read_meta(report: JobReport, env: Mapping[str, str] | None) -> None:
    """Usage and cost over the whole session, from its ``meta.json`` (the printer shows per call)."""
    from agentcli.config import data_home

    base = (env or os.environ).get("XDG_DATA_HOME")
    home = Path(base) / "agentcli" if base else data_home()
    try:
        meta = json.loads((home / "sessions" / report.session_id / "meta.json").read_text(encoding="utf-8"))  # type: ignore[operator]
    except (OSError, ValueError):
        return
    report.steps = int(meta.get("steps") or report.steps)
    report.input_tokens = int(meta.get("input_tokens") or 0)
    report.output_tokens = int(meta.get("output_tokens") or 0)
    cost = meta.get("cost")
    report.cost = float(cost) if isinstance(cost, (int, float)) else None


def check_commands(spec: JobSpec, workdir: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The spec's checks, else the directory's ``[checks] commands``, else those detected there."""
    if spec.checks is not None:
        return list(spec.checks)
    from agentcli.config import ConfigError, load_settings

    try:
        configured = load_settings(workdir, environ=env).checks.commands
    except ConfigError:
        configured = None  # the session itself reported the bad config; detection still applies
    if configured is not None:
        return configured
    from agentcli.tools.checks import detect_checks

    return [check.command for check in detect_checks(workdir)]


async def run_checks(spec: JobSpec, workdir: Path, env: Mapping[str, str] | None = None) -> list[CheckOutcome]:
    """Runs each check in ``workdir`` one after the other (they may share build output)."""
    import tempfile

    from agentcli.tools.checks import run_check

    outcomes: list[CheckOutcome] = []
    commands = check_commands(spec, workdir, env)
    wrap: Callable[[list[str]], list[str]] | None = None
    if commands and _sandboxed(spec, workdir, env):
        # The checks run the code the agent wrote: under --sandbox they are confined as its
        # bash calls were (and as the session's own run_checks tool confines them).
        from agentcli.tools.sandbox import sandbox_status, wrap_command

        status = await asyncio.to_thread(sandbox_status)
        if not status.available or status.bwrap is None:
            return [CheckOutcome(command=command, passed=False, exit_code=None, duration_s=0.0,
                                 output_tail=f"not run: {status.reason}") for command in commands]
        where = await asyncio.to_thread(workdir.resolve)  # bwrap binds the real path
        wrap = functools.partial(wrap_command, workspace=where, bwrap=status.bwrap)
    with tempfile.TemporaryDirectory(prefix="agentcli-checks-") as scratch:
        patch = Path(scratch) / "test.patch"
        if spec.test_patch:
            patch.write_text(spec.test_patch, encoding="utf-8")
            # `git apply` works outside a repository too: the directory may be a plain copy.
            applied = await run_check(f"git apply --whitespace=nowarn {_quote(patch)}", workdir, 120)
            if not applied.passed:
                return [_outcome("apply the test patch", applied)]
        for command in commands:
            outcomes.append(_outcome(command, await run_check(command, workdir, spec.check_timeout_s, wrap=wrap)))
        if spec.test_patch:
            # Taken back, so the collected change is the agent's alone.
            await run_check(f"git apply -R --whitespace=nowarn {_quote(patch)}", workdir, 120)
    return outcomes


def _sandboxed(spec: JobSpec, workdir: Path, env: Mapping[str, str] | None) -> bool:
    """``--sandbox``/``--no-sandbox`` when given, else the directory's ``sandbox`` setting."""
    if spec.sandbox is not None:
        return spec.sandbox
    from agentcli.config import ConfigError, load_settings

    try:
        return load_settings(workdir, environ=env).sandbox
    except ConfigError:
        return False  # the session reported the bad config and ran nothing sandboxed either


def _quote(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


def _outcome(command: str, run: CheckRun) -> CheckOutcome:
    return CheckOutcome(command=command, passed=run.passed, exit_code=run.exit_code,
                        duration_s=round(run.duration_s, 3), timed_out=run.timed_out,
                        output_tail=run.output[-_OUTPUT_TAIL:])
