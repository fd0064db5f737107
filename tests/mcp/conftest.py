"""Real MCP servers for the MCP client's tests: the published reference servers (time, git),
and the SDK-built faulty server beside this file, over stdio and over streamable HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.config_mcp import McpServerSettings

FAULTY = Path(__file__).with_name("faulty_server.py")


def faulty(*args: str, **fields: object) -> McpServerSettings:
    """The faulty server over stdio (``--slow-start S`` and the like as ``args``)."""
    return McpServerSettings(command=sys.executable, args=[str(FAULTY), *args], **fields)  # type: ignore[arg-type]


def time_server(**fields: object) -> McpServerSettings:
    return McpServerSettings(command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
                             **fields)  # type: ignore[arg-type]


def git_server(repository: Path, **fields: object) -> McpServerSettings:
    return McpServerSettings(command=sys.executable, args=["-m", "mcp_server_git", "--repository", str(repository)],
                             **fields)  # type: ignore[arg-type]


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is left (its leader, our child, is reaped first if it
    is a zombie: only that pid, never another test's children)."""
    try:
        os.waitpid(pgid, os.WNOHANG)
    except ChildProcessError:
        pass  # not ours, or already reaped (by asyncio's child watcher)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def http_url() -> Iterator[str]:
    """The faulty server over streamable HTTP on 127.0.0.1 (a port of its own choosing); it
    answers 401 to a request without ``Authorization: Bearer s3cret``."""
    yield from _serve("/mcp", FAULTY_HTTP_TOKEN="s3cret")


@pytest.fixture
def sse_url() -> Iterator[str]:
    """The faulty server over the older HTTP+SSE transport on 127.0.0.1."""
    yield from _serve("/sse", FAULTY_SSE="1")


def _serve(path: str, **env: str) -> Iterator[str]:
    process = subprocess.Popen([sys.executable, str(FAULTY), "--http", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, start_new_session=True,
                               env={**os.environ, **env})
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the server listens (or dies: empty line)
        assert line.startswith("listening on "), f"the HTTP server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[-1])}{path}"
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
