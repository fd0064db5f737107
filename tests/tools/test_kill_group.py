"""Stopping a command's group waits for the group, not for pipes held by a process that left it.

On Python 3.11 ``Process.wait()`` returns only once the output pipes close. A command that
started a process in its own session (``setsid``, a daemon) keeps them open, so a pause or a
timeout waited out the whole grace period before going on. These tests give the grace period
an hour: a kill that waited for the pipes would hang (the outer ``wait_for`` turns that into a
failure rather than a stuck suite).
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid

import pytest

import agentcli.tools.process as process_module
from agentcli.tools.process import kill_group, start_group
from tests.support.waiting import eventually, processes_with


def _sleeps(marker: str) -> list[str]:
    return [found for found in processes_with(marker) if found.split(": ", 1)[1].startswith("sleep ")]


async def test_a_kill_returns_while_an_escaped_process_holds_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_module, "_KILL_GRACE_S", 3600.0)
    marker = f"7{uuid.uuid4().int % 10**8:08d}.5"
    process = await start_group("bash", "-c", f"setsid sleep {marker} & sleep {marker}",
                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        await eventually(lambda: len(_sleeps(marker)) >= 2, what="both sleeps to start")
        await asyncio.wait_for(kill_group(process), 120)
        assert process.returncode is not None
        # Only the escaped sleep is left, and it still holds the pipe: the kill did not wait for it.
        await eventually(lambda: len(_sleeps(marker)) == 1, what="the group's sleep to be killed")
    finally:
        for found in _sleeps(marker):
            os.kill(int(found.split(":", 1)[0]), signal.SIGKILL)
    await eventually(lambda: not _sleeps(marker), what="the escaped sleep to be cleaned up")


async def test_a_command_that_ignores_sigterm_is_killed_after_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_module, "_KILL_GRACE_S", 0.2)
    marker = f"7{uuid.uuid4().int % 10**8:08d}.5"
    process = await start_group("bash", "-c", f"trap '' TERM; sleep {marker}; true",
                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    await eventually(lambda: _sleeps(marker), what="the sleep to start")
    await asyncio.wait_for(kill_group(process), 120)
    assert process.returncode == -signal.SIGKILL
    await eventually(lambda: not _sleeps(marker), what="the whole group to be gone")
