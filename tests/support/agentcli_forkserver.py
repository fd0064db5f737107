"""The process a test's ``agentcli`` processes are forked from, with agentcli and litellm imported.

Run as a script (``python agentcli_forkserver.py SOCKET``) by :mod:`tests.support.agentcli_process`.
Every ``agentcli`` process of the end-to-end tests used to start a fresh interpreter and import
litellm (~1.6 s of CPU each, ~80 processes a run). This server pays the imports once per pytest
worker, then forks a process per request: a real process all the same, with its own pid, the
test's pipes as stdin/stdout/stderr, the test's working folder, environment and arguments, real
signals and a real exit code, and the interpreter's own shutdown (atexit, thread joins, flushes).

For each request it forks a waiter, and the waiter forks the agentcli process: the waiter tells
the test the pid, waits on the process and tells the exit code (the test process cannot wait on
a process that is not its child). The server itself never waits: SIGCHLD is ignored, so the
kernel reaps its waiters.

No ``try``/``finally`` around the fork: the forked agentcli process leaves through a
``SystemExit`` raised by agentcli's ``main``, which must reach the interpreter's top level.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import signal
import socket
import sys
from typing import Any

PR_SET_PDEATHSIG = 1


HEADLESS = ("agentcli.headless", "agentcli.fleet", "agentcli.mcp.manager", "agentcli.session.factory",
            "agentcli.snapshots.store", "agentcli.tools.registry", "tiktoken_ext.openai_public",
            "litellm.litellm_core_utils.default_encoding")
"""What a headless command imports once it runs (~0.5 s more per process); the TUI is left out.
litellm's tokenizer module sets ``TIKTOKEN_CACHE_DIR`` whatever it was (so a test process that
counted tokens in-process has it): imported here, the server's environment has it too."""


class _Reads:
    """The variables Python code reads from ``os.environ`` while the imports run.

    A variable read then is frozen into the server's imports: a process that differs in it must
    start fresh. One that nothing read can be forked whatever its value. Iterating the whole
    environment (a scan for a prefix) could have read any: it is recorded as ``*``.
    """

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> _Reads:
        environ = type(os.environ)
        reads = self

        def getitem(self: Any, key: str) -> str:
            reads._note(key)
            return reads._saved["__getitem__"](self, key)  # type: ignore[no-any-return]

        def contains(self: Any, key: object) -> bool:
            reads._note(str(key))
            return reads._saved["__contains__"](self, key)  # type: ignore[no-any-return]

        def iterate(self: Any) -> Any:
            reads._note("*")
            return reads._saved["__iter__"](self)

        for name, method in (("__getitem__", getitem), ("__contains__", contains), ("__iter__", iterate)):
            self._saved[name] = getattr(environ, name)
            setattr(environ, name, method)
        return self

    def __exit__(self, *exc: object) -> None:
        for name, method in self._saved.items():
            setattr(type(os.environ), name, method)

    def _note(self, key: str) -> None:
        # sysconfig reads HOME for the user base of ``pip install --user``, which agentcli never
        # uses; anything else that reads a variable at import counts.
        caller = sys._getframe(1)
        while caller.f_back is not None and caller.f_code.co_filename.endswith(
                (__file__, "posixpath.py", "os.py", "_collections_abc.py", "<frozen posixpath>", "<frozen os>",
                 "<frozen _collections_abc>")):
            caller = caller.f_back
        if not (key == "HOME" and caller.f_code.co_filename.endswith("sysconfig.py")):
            self.names.add(key)


def _import() -> None:
    # What ``python -m agentcli`` imports first, then litellm exactly as agentcli imports it in the
    # background (same environment defaults, collector off, then frozen), then the rest.
    import importlib
    import pkgutil

    import agentcli.cli
    from agentcli.llm import warmup

    warmup._quiet_environment()
    warmup._import()
    for name in HEADLESS:
        importlib.import_module(name)
    # Every command's module (run, resume, sessions, mcp, race...), as naming the command would.
    for module in pkgutil.iter_modules(agentcli.cli.__path__, "agentcli.cli."):
        importlib.import_module(module.name)


def _become_agentcli(request: dict[str, Any], fds: list[int]) -> None:
    """Turn this forked process into ``python -m agentcli ARGS`` run as the request says; never returns."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update(request["env"])
    # libgit2 found the global and XDG git config from HOME and XDG_CONFIG_HOME when pygit2 was
    # imported here; None has it look again, from this process's (``core.excludesFile``).
    import pygit2

    for level in (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG, pygit2.enums.ConfigLevel.SYSTEM):
        pygit2.settings.search_path[level] = None  # type: ignore[assignment]  # None: look again
    # ``python -m`` puts the working folder first on the path; so does this.
    sys.path[0] = os.getcwd()
    import runpy

    sys.argv = ["-m", *request["args"]]
    runpy.run_module("agentcli", run_name="__main__", alter_sys=True)
    sys.exit(0)


def _serve(path: str, read: set[str]) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    # The environment the imports ran under, with what they set (litellm's defaults), and what
    # they read: the test process compares each request's with it.
    print(json.dumps({"env": dict(os.environ), "read": sorted(read)}), flush=True)
    while True:
        conn, _ = listener.accept()
        data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
        while not data.endswith(b"\n"):
            more = conn.recv(1 << 16)
            if not more:
                break
            data += more
        if len(fds) != 3 or not data.endswith(b"\n"):
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        if os.fork() == 0:
            _wait_on_agentcli(listener, conn, json.loads(data), fds)
        conn.close()
        for fd in fds:
            os.close(fd)


def _wait_on_agentcli(listener: socket.socket, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    listener.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # what a fresh interpreter has, and waitpid needs
    pid = os.fork()
    if pid == 0:
        conn.close()
        _become_agentcli(request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    os._exit(0)


def main() -> None:
    # Dies with the pytest worker that started it, whatever way that worker ends.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    with _Reads() as reads:
        _import()
    gc.freeze()  # the forked processes share these pages instead of copying them on a collection
    _serve(sys.argv[1], reads.names)


if __name__ == "__main__":
    main()
