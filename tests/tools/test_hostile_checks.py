"""Detecting checks reads project files the model can replace: never a hang, never unbounded.

``run_checks`` reads pyproject.toml, setup.cfg, tox.ini, package.json and the Makefile to
choose its commands. A command the model ran may have made any of them a FIFO or a link to
``/dev/zero``: detection treats such a file as absent instead of blocking or filling memory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcli.tools.checks import detect_checks

pytestmark = pytest.mark.timeout(120)  # a hang fails here instead of freezing the suite


@pytest.mark.parametrize("name", ["pyproject.toml", "setup.cfg", "tox.ini", "package.json", "Makefile"])
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_hostile_project_file_is_treated_as_absent(workspace: Path, name: str, kind: str) -> None:
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    if kind == "fifo":
        os.mkfifo(workspace / name)
    else:
        (workspace / name).symlink_to("/dev/zero")
    detected = detect_checks(workspace)
    assert all(name not in check.reason for check in detected)


def test_a_real_makefile_and_package_json_still_count(workspace: Path) -> None:
    (workspace / "Makefile").write_text("test:\n\tpytest\n")
    (workspace / "package.json").write_text('{"scripts": {"test": "jest"}}')
    commands = [check.command for check in detect_checks(workspace)]
    assert "npm test" in commands and "make test" in commands
