"""The project's checks: finding them when none are configured, and running them.

Detection looks only at files (no command is run to find out): a check is proposed where the
project shows it uses the tool, each with the reason it was chosen. Running is ``bash``'s own
(tools/process.py ``collect``): its own process group, killed whole on timeout or cancellation,
and a background job it leaves running (a server a check starts) does not hold it up. The
verdict is the exit code and nothing else; words such as "FAILED" in the output never count.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import time
import tomllib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.tools.base import ToolError
from agentcli.tools.fsaccess import open_regular, read_bounded
from agentcli.tools.paths import resolve_in_workspace
from agentcli.tools.process import collect, start_group

_KEEP_BYTES = 256 * 1024
"""Output kept per command while it runs: the tail, where test runners print their summary."""

_SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "env", ".tox", ".nox", "__pycache__",
    "site-packages", "build", "dist", "target", ".mypy_cache", ".pytest_cache", ".ruff_cache",
})
_MAX_DIRS_WALKED = 2000
"""Looking for test files stops after this many folders: a huge tree without tests/ is rare."""

_NPM_PLACEHOLDER = "no test specified"
"""What `npm init` writes as the test script; it always fails, so it is not a check."""

_MAKE_TARGET = re.compile(r"^(check|test)\s*:(?!=)", re.MULTILINE)


@dataclass(frozen=True)
class DetectedCheck:
    """A check command found in the workspace, with why it was chosen."""

    command: str
    reason: str


@dataclass(frozen=True)
class CheckRun:
    """One check command's outcome; ``passed`` is ``exit_code == 0`` and nothing else."""

    command: str
    exit_code: int | None
    """None when the command was killed at the timeout."""
    passed: bool
    duration_s: float
    output: str
    """The tail of its combined stdout and stderr."""
    timed_out: bool = False
    left_running: bool = False
    """It exited, but a background job it started still runs and holds its output open."""


class _Tail:
    """The last ``_KEEP_BYTES`` of a command's output, where test runners print their summary."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._kept = 0

    def feed(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._kept += len(chunk)
        while self._kept - len(self._chunks[0]) >= _KEEP_BYTES and len(self._chunks) > 1:
            self._kept -= len(self._chunks.popleft())

    def text(self) -> str:
        return b"".join(self._chunks)[-_KEEP_BYTES:].decode("utf-8", errors="replace")


# -- detection ----------------------------------------------------------------------------------


def detect_checks(workspace: Path) -> list[DetectedCheck]:
    """The checks the workspace's files point to, in the order they should run (lint first).

    Args:
        workspace: The project folder.

    Returns:
        ``ruff check .`` where ruff is configured; ``pytest -q`` where tests exist and pytest is
        installed or configured; ``npm test`` where package.json has a real test script;
        ``cargo test`` for Cargo.toml; ``go test ./...`` for go.mod; ``make check`` (else
        ``make test``) where the Makefile has that target. Each rule stands alone, so a Makefile
        whose ``test`` runs pytest means pytest runs twice: set ``[checks] commands`` to choose.
    """
    pyproject = _read_toml(workspace, "pyproject.toml")
    tool_table: dict[str, Any] = pyproject.get("tool", {}) if isinstance(pyproject.get("tool"), dict) else {}
    found: list[DetectedCheck] = []
    if (ruff := _ruff(workspace, tool_table)) is not None:
        found.append(ruff)
    if (pytest := _pytest(workspace, tool_table)) is not None:
        found.append(pytest)
    if (npm := _npm(workspace)) is not None:
        found.append(npm)
    if (workspace / "Cargo.toml").is_file():
        found.append(DetectedCheck("cargo test", "Cargo.toml (a Rust crate)"))
    if (workspace / "go.mod").is_file():
        found.append(DetectedCheck("go test ./...", "go.mod (a Go module)"))
    if (make := _make(workspace)) is not None:
        found.append(make)
    return found


_MAX_PROJECT_FILE_BYTES = 1024 * 1024
"""A project file larger than this is not a configuration agentcli reads to choose checks."""


def _project_file(workspace: Path, name: str) -> str | None:
    """A project file's text, or None when it is absent or not a small regular file.

    A command may have made it a FIFO or a link to ``/dev/zero``: it is opened as the file
    tools open theirs (no link out, non-blocking, size checked first), never by name.
    """
    try:
        path = resolve_in_workspace(workspace, name, must_exist=True)
        fd = open_regular(workspace, path, name, links=False)
    except (ToolError, OSError):
        return None
    try:
        return read_bounded(fd, _MAX_PROJECT_FILE_BYTES, name).decode("utf-8", errors="replace")
    except (ToolError, OSError):
        return None
    finally:
        os.close(fd)


def _read_toml(workspace: Path, name: str) -> dict[str, Any]:
    text = _project_file(workspace, name)
    try:
        return tomllib.loads(text) if text is not None else {}
    except tomllib.TOMLDecodeError:
        return {}  # broken: the project's own tools will say so when they run


def _venv_bin(workspace: Path, name: str) -> str | None:
    """A workspace virtualenv's executable, relative to the workspace, if it exists."""
    for venv in (".venv", "venv"):
        if (workspace / venv / "bin" / name).is_file():
            return f"{venv}/bin/{name}"
    return None


def _venv_has_package(workspace: Path, package: str) -> str | None:
    for venv in (".venv", "venv"):
        if any((workspace / venv / "lib").glob(f"python*/site-packages/{package}")):
            return venv
    return None


def _ruff(workspace: Path, tool: dict[str, Any]) -> DetectedCheck | None:
    if (workspace / "ruff.toml").is_file():
        where = "ruff.toml"
    elif (workspace / ".ruff.toml").is_file():
        where = ".ruff.toml"
    elif "ruff" in tool:
        where = "pyproject.toml [tool.ruff]"
    else:
        return None
    local = _venv_bin(workspace, "ruff")
    if local:
        return DetectedCheck(f"{local} check .", f"ruff is configured ({where}); using the workspace's {local}")
    return DetectedCheck("ruff check .", f"ruff is configured ({where})")


def _pytest_config(workspace: Path, tool: dict[str, Any]) -> str | None:
    if "pytest" in tool:
        return "pyproject.toml [tool.pytest]"
    if (workspace / "pytest.ini").is_file():
        return "pytest.ini"
    if (workspace / "conftest.py").is_file():
        return "conftest.py"
    for name, section in (("setup.cfg", "[tool:pytest]"), ("tox.ini", "[pytest]")):
        if section in (_project_file(workspace, name) or ""):
            return f"{name} {section}"
    return None


def _test_location(workspace: Path) -> str | None:
    for name in ("tests", "test"):
        if (workspace / name).is_dir():
            return f"a {name}/ folder"
    walked = 0
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                return os.path.relpath(os.path.join(folder, name), workspace)
        walked += 1
        if walked >= _MAX_DIRS_WALKED:
            break
    return None


def _pytest(workspace: Path, tool: dict[str, Any]) -> DetectedCheck | None:
    tests = _test_location(workspace)
    if tests is None:
        return None
    venv = _venv_has_package(workspace, "pytest")
    if venv is not None:
        return DetectedCheck(f"{venv}/bin/python -m pytest -q", f"tests ({tests}) and pytest in the workspace's {venv}")
    if shutil.which("pytest"):
        return DetectedCheck("pytest -q", f"tests ({tests}) and pytest on PATH")
    config = _pytest_config(workspace, tool)
    if config is not None:
        return DetectedCheck("pytest -q", f"tests ({tests}) and pytest configured ({config}); pytest is not on PATH")
    return None


def _npm(workspace: Path) -> DetectedCheck | None:
    try:
        package = json.loads(_project_file(workspace, "package.json") or "null")
    except ValueError:
        return None
    scripts = package.get("scripts") if isinstance(package, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(test, str) or not test.strip() or _NPM_PLACEHOLDER in test:
        return None
    return DetectedCheck("npm test", f"package.json has a test script ({test.strip()[:60]})")


def _make(workspace: Path) -> DetectedCheck | None:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        text = _project_file(workspace, name)
        if text is None:
            continue
        targets = set(_MAKE_TARGET.findall(text))
        # `check` usually runs the tests and more, so it is preferred when both exist.
        for target in ("check", "test"):
            if target in targets:
                return DetectedCheck(f"make {target}", f"{name} has a '{target}' target")
        return None
    return None


# -- running ------------------------------------------------------------------------------------


async def run_check(
    command: str,
    workspace: Path,
    timeout_s: float,
    *,
    wrap: Callable[[list[str]], list[str]] | None = None,
) -> CheckRun:
    """Run one check in the workspace; killed with its whole process group at the timeout.

    ``CI=true`` is set so test runners that would otherwise wait in watch mode (jest via
    react-scripts, vitest) run once; there is no terminal to answer them.

    Args:
        command: A bash command line.
        workspace: Where it runs.
        timeout_s: Seconds before its process group is killed; the check then fails.
        wrap: Turns the argv into a sandboxed one (bubblewrap), when the sandbox is on.
    """
    argv = ["bash", "-c", command]
    if wrap is not None:
        argv = wrap(argv)
    started = time.monotonic()
    process = await start_group(
        *argv,
        cwd=workspace,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "CI": "true"},
    )
    tail = _Tail()
    ending = await collect(process, timeout_s, tail.feed)  # a cancellation kills the group there
    duration = round(time.monotonic() - started, 3)
    if ending == "timed out":
        return CheckRun(command, None, False, duration, tail.text(), timed_out=True)
    code = process.returncode
    return CheckRun(command, code, code == 0, duration, tail.text(), left_running=ending == "left running")
