"""A SIGKILLed agent leaves no command running: the whole group dies with it.

The kernel's parent-death signal reaches only the command's shell; what the shell started
(a background job, a pipeline, a subshell) used to run on as an orphan. Each test starts a real
agent process running a real ``bash`` tool call, kills it with SIGKILL mid-command, and waits
for every process of the command to be gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.support.waiting import eventually, eventually_sync, processes_with

AGENT = """
import asyncio, sys
from pathlib import Path
from agentcli.tools.base import ToolContext
from agentcli.tools.shell import Bash, BashArgs

async def main() -> None:
    await Bash().run(BashArgs(command=sys.argv[1]), ToolContext(workspace=Path(sys.argv[2])))

asyncio.run(main())
"""


def _sleeps(marker: str) -> list[str]:
    """The command's ``sleep`` processes (the agent's own command line holds the marker too)."""
    return [found for found in processes_with(marker) if found.split(": ", 1)[1].startswith("sleep ")]


def _marker() -> str:
    return f"6{uuid.uuid4().int % 10**8:08d}.5"  # a sleep length no other test uses


@pytest.mark.parametrize(
    "shape",
    [
        "sleep {m} & sleep {m}; wait",  # a background job and a foreground child
        "(sleep {m}; echo done) | cat",  # a pipeline with a subshell
        "bash -c 'sleep {m}; echo nested'",  # a shell inside the shell
        "trap '' TERM HUP; sleep {m}",  # a command that ignores the polite signals
    ],
)
def test_sigkilled_agent_takes_its_command_down(workspace: Path, shape: str) -> None:
    marker = _marker()
    command = shape.format(m=marker)
    agent = subprocess.Popen([sys.executable, "-c", AGENT, command, str(workspace)], cwd=workspace)
    try:
        eventually_sync(lambda: _sleeps(marker), what="the command to start")
    finally:
        os.kill(agent.pid, signal.SIGKILL)
        agent.wait(timeout=60)
    eventually_sync(lambda: not _sleeps(marker), what=f"every process of {command!r} to die")


async def test_a_finished_command_leaves_no_watcher_behind(workspace: Path) -> None:
    from agentcli.tools.base import ToolContext
    from agentcli.tools.shell import Bash, BashArgs

    marker = _marker()
    result = await Bash().run(BashArgs(command=f"echo {marker}"), ToolContext(workspace=workspace))
    assert result.ok and marker in result.output
    # The watcher's command line holds the supervised command, marker included.
    watchers = lambda: [found for found in processes_with(marker) if "agentcli-watch" in found]  # noqa: E731
    await eventually(lambda: not watchers(), what="the group's watcher to exit")
