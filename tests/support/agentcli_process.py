"""Start ``python -m agentcli`` for a test: forked from a server that has imported it, when that is the same.

``start`` and ``run`` stand for ``subprocess.Popen`` and ``subprocess.run`` of ``python -m agentcli``
with text pipes. The process is forked from :mod:`tests.support.agentcli_forkserver` (one per pytest
worker, started on first use), which saves each process the interpreter's start and litellm's
import. It is still a process of its own: pid, signals, pipes, working folder, environment,
arguments and exit code are its own, as are its shutdown and what it leaves behind.

What a fork cannot reproduce is an import made under another environment: litellm and agentcli
read some variables when imported. So a process whose environment differs from the server's
other than in :data:`READ_AT_RUN_TIME` starts as a fresh interpreter, as do tests about start-up
itself (``fresh=True``), which measure or inspect what the interpreter imports.
The one visible difference: the process's command line (``/proc/PID/cmdline``) is the server's;
no test looks for agentcli by its command line (markers are the commands it runs).
``TESTS_FRESH_AGENTCLI=1`` in the environment starts every process fresh: to tell whether a
failure has to do with the fork, and for bench/suite_launch.py's comparison.
"""

from __future__ import annotations

import atexit
import fnmatch
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import IO

AGENTCLI = [sys.executable, "-m", "agentcli"]

READ_AT_RUN_TIME = frozenset({"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "PYTEST_CURRENT_TEST", "COLUMNS",
                              "TESTS_FRESH_AGENTCLI", "HOME"})
"""Variables that differ from test to test and that nothing reads at import: agentcli reads its
folders when it opens them (``tests/conftest.py`` sets them per test), rich reads ``COLUMNS``
when it makes a console, and only this module reads ``TESTS_FRESH_AGENTCLI``. libgit2 reads
``HOME`` and ``XDG_CONFIG_HOME`` for the git config when pygit2 is imported: the forked process
has it look again (``agentcli_forkserver._become_agentcli``)."""

READ_WHEN_USED = ("AGENTCLI_*", "*_API_KEY", "*_API_BASE", "*_BASE_URL", "*_TOKEN")
"""Patterns of variables read when a command or a request uses them: agentcli's settings, and a
provider's key and address (litellm and agentcli look them up per request). The server records
what its imports read (``agentcli_forkserver._Reads``): a variable read there starts a process
fresh whatever this says."""

SERVER = Path(__file__).with_name("agentcli_forkserver.py")


class ForkedProcess:
    """The parts of ``subprocess.Popen`` the tests use, for a process forked by the server."""

    def __init__(self, args: list[str], conn: socket.socket, stdout: IO[str] | None, stderr: IO[str] | None) -> None:
        self.args = args
        self._conn = conn
        self._reply = conn.makefile("r", encoding="ascii")
        line = self._reply.readline()
        if not line.strip().isdigit():
            raise RuntimeError(f"the agentcli fork server did not start {args}: it answered {line!r}")
        self.pid = int(line)
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        self._readers: list[threading.Thread] | None = None
        self._read: dict[str, str] = {}

    def _read_code(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            selector = selectors.DefaultSelector()
            selector.register(self._conn, selectors.EVENT_READ)
            ready = selector.select(timeout)
            selector.close()
            if not ready:
                return None
            line = self._reply.readline()
            if not line:
                raise RuntimeError(f"the fork server lost process {self.pid}")
            self.returncode = int(line)
            self._reply.close()
            self._conn.close()
        return self.returncode

    def poll(self) -> int | None:
        return self._read_code(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._read_code(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # not a pid reused since
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Read both pipes to their end, then wait for the exit; ``TimeoutExpired`` past
        ``timeout`` (one deadline for all of it). Called again after a timeout (as ``run`` does
        after a kill), it goes on with the readers it started, as Popen's does."""
        if self._readers is None:
            self._readers = [threading.Thread(target=self._drain, args=(name, stream), daemon=True)
                             for name, stream in (("out", self.stdout), ("err", self.stderr))]
            for reader in self._readers:
                reader.start()
        deadline = None if timeout is None else time.monotonic() + timeout

        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        for reader in self._readers:
            reader.join(left())
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(left())
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        return self._read.get("out", ""), self._read.get("err", "")

    def _drain(self, name: str, stream: IO[str] | None) -> None:
        self._read[name] = stream.read() if stream is not None else ""


class _ForkServer:
    def __init__(self) -> None:
        self._folder = tempfile.mkdtemp(prefix="agentcli-fork-")
        self.path = os.path.join(self._folder, "socket")
        given = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCLI_")}
        self._process = subprocess.Popen([sys.executable, str(SERVER), self.path], env=given,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        ready = self._process.stdout.readline()
        if not ready.startswith("{"):
            raise RuntimeError(f"the agentcli fork server did not start (exit {self._process.wait()})")
        started = json.loads(ready)
        self.env: dict[str, str] = started["env"]
        """The environment its imports ran under, defaults they set included."""
        self.read: frozenset[str] = frozenset(started["read"])
        """The variables its imports read (``*``: the whole environment was iterated)."""
        self._defaults = {k: v for k, v in self.env.items() if k not in given}
        atexit.register(self.stop)

    def serves(self, env: dict[str, str]) -> bool:
        """Whether a process with ``env`` behaves as if forked from this server.

        The defaults agentcli sets before importing litellm (``agentcli.llm.warmup``) count as
        set: a fresh process sets them too, and a test process that ran agentcli in-process
        has them already.
        """
        return not self.differences(env)

    def differences(self, env: dict[str, str]) -> set[str]:
        """The variables of ``env`` that make a forked process differ from a fresh one."""
        seen = {**self._defaults, **env}
        keys = {key for key in set(seen) | set(self.env) if not self._run_time(key)}
        return {key for key in keys if seen.get(key) != self.env.get(key)}

    def _run_time(self, key: str) -> bool:
        if key in self.read or "*" in self.read:
            return False
        return key in READ_AT_RUN_TIME or any(fnmatch.fnmatchcase(key, pattern) for pattern in READ_WHEN_USED)

    def start(self, args: list[str], cwd: Path, env: dict[str, str], stdin: int | None) -> ForkedProcess:
        stdin_fd = os.open(os.devnull, os.O_RDONLY) if stdin == subprocess.DEVNULL else 0
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(self.path)
            request = json.dumps({"args": args, "cwd": str(cwd), "env": env}).encode() + b"\n"
            socket.send_fds(conn, [request], [stdin_fd, stdout_w, stderr_w])
        finally:
            if stdin_fd != 0:
                os.close(stdin_fd)
            os.close(stdout_w)
            os.close(stderr_w)
        return ForkedProcess([*AGENTCLI, *args], conn, open(stdout_r), open(stderr_r))  # the process object closes them

    def alive(self) -> bool:
        return self._process.poll() is None

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        for name in (self.path, self._folder):
            try:
                os.remove(name) if name == self.path else os.rmdir(name)
            except OSError:
                pass


_server: _ForkServer | None = None


def _fork_server() -> _ForkServer:
    global _server
    if _server is None or not _server.alive():  # a server killed meanwhile is replaced
        _server = _ForkServer()
    return _server


def start(args: list[str], *, cwd: Path, env: dict[str, str] | None = None, stdin: int | None = None,
          fresh: bool = False) -> ForkedProcess | subprocess.Popen[str]:
    """``subprocess.Popen([python, -m, agentcli, *args], stdout=PIPE, stderr=PIPE, text=True)``.

    Args:
        env: Variables set over the test's environment.
        stdin: None (the test's own) or ``subprocess.DEVNULL``.
        fresh: Start a fresh interpreter whatever the environment.
    """
    if stdin not in (None, subprocess.DEVNULL):
        raise ValueError("stdin is the test's own or subprocess.DEVNULL")
    environment = {**os.environ, **(env or {})}
    fresh = fresh or os.environ.get("TESTS_FRESH_AGENTCLI") == "1"
    if not fresh:
        differences = _fork_server().differences(environment)
        if not differences:
            return _fork_server().start(args, cwd, environment, stdin)
        if not differences <= set(env or {}):
            # Not the test's own choice: a variable the test process changed since the server
            # started (an in-process run, a fixture). Fresh is still right, but slow for every
            # process of the worker from now on: say so, so that it gets fixed.
            warnings.warn(f"agentcli started fresh, not forked: {sorted(differences - set(env or {}))} changed "
                          "in the test process since the fork server started", stacklevel=2)
    return subprocess.Popen([*AGENTCLI, *args], cwd=cwd, env=environment, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run(args: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120,
        stdin: int | None = None, fresh: bool = False) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([python, -m, agentcli, *args], capture_output=True, text=True, timeout=...)``."""
    process = start(args, cwd=cwd, env=env, stdin=stdin, fresh=fresh)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    assert process.returncode is not None
    return subprocess.CompletedProcess([*AGENTCLI, *args], process.returncode, out, err)


__all__ = ["AGENTCLI", "READ_AT_RUN_TIME", "READ_WHEN_USED", "ForkedProcess", "run", "start"]
