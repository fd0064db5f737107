"""The checks a fleet job runs after its session: confined by the sandbox exactly when its bash was."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.fleet.models import JobSpec
from agentcli.fleet.runner import run_checks
from tests.permissions.test_sandbox import needs_bwrap


@needs_bwrap
@pytest.mark.parametrize("how", ["--sandbox", "sandbox = true in the directory's .agentcli.toml"])
async def test_sandboxed_checks_cannot_write_outside_the_directory(how: str, tmp_path: Path) -> None:
    """A check runs code the agent wrote (its tests); under the sandbox that code stays in its directory."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    flag = True if how == "--sandbox" else None
    if flag is None:
        (workdir / ".agentcli.toml").write_text("sandbox = true\n")
    outside = tmp_path / "escaped"
    command = f"touch inside.txt && touch {outside}"

    [boxed] = await run_checks(JobSpec(prompt="", sandbox=flag, checks=[command]), workdir)
    assert (workdir / "inside.txt").exists(), boxed.output_tail
    assert not outside.exists()  # the sandbox's /tmp is its own: the write went nowhere

    [free] = await run_checks(JobSpec(prompt="", sandbox=False, checks=[command]), workdir)
    assert free.passed and outside.exists()  # the same check, not sandboxed, reaches it
