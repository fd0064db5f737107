"""A fuzz of hostile paths through every file tool, with a folder swapped all the while.

Paths are built from the names of a workspace full of traps — a FIFO, a device node, links to
``/dev/zero`` and out of the workspace, a hard link to an outside file, a symlink loop, a folder
that a concurrent process keeps swapping for a symlink to the outside — plus ``..``, NUL bytes,
``~`` and absolute paths. Every call the permission policy lets run without approval (mode
``edits``) runs for real. Over all of them: nothing outside is read or written, every call
returns (the test's timeout is the hang detector), and memory stays bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcli.config import PermissionSettings, ToolSettings
from agentcli.permissions import Policy
from agentcli.tools import ToolContext, default_registry
from tests.tools.test_hostile_paths import OUTSIDE_SECRET, SWAPPER, _has_renameat2

REGISTRY = default_registry()
NAMES = ["ok.txt", "sub", "pipe", "zero", "node", "away.txt", "awaydir", "hard.txt", "loop", "d", "new.txt",
         "..", ".", "a\x00b", "~", "", "secret.txt"]


def _workspace(root: Path) -> tuple[Path, Path]:
    outside = root / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{OUTSIDE_SECRET}\n")
    ws = root / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "ok.txt").write_text("ok\n")
    (ws / "sub" / "ok.txt").write_text("ok\n")
    os.mkfifo(ws / "pipe")
    (ws / "zero").symlink_to("/dev/zero")
    try:
        os.mknod(ws / "node", 0o666 | 0o020000, os.makedev(1, 5))
    except PermissionError:
        (ws / "node").symlink_to("/dev/null")  # not root: a link to a device stands in
    (ws / "away.txt").symlink_to(outside / "secret.txt")
    (ws / "awaydir").symlink_to(outside)
    os.link(outside / "secret.txt", ws / "hard.txt")
    (ws / "loop").symlink_to("loop")
    (ws / "d").mkdir()
    (ws / "d" / "ok.txt").write_text("ok\n")
    (ws / "x").symlink_to(outside)
    return ws.resolve(), outside


def _outside_state(outside: Path) -> dict[str, bytes]:
    return {str(path.relative_to(outside)): path.read_bytes() if path.is_file() else b"/"
            for path in sorted(outside.rglob("*"))}


paths = st.one_of(
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join),
    st.sampled_from(["/dev/zero", "/proc/self/environ", "/etc/passwd", "/tmp", "~/.bashrc"]),
)
calls = st.one_of(
    st.builds(lambda p: ("read_file", {"path": p}), paths),
    st.builds(lambda p: ("read_file", {"path": p, "offset": 1, "limit": 3}), paths),
    st.builds(lambda p: ("write_file", {"path": p, "content": "pwned\n"}), paths),
    st.builds(lambda p: ("edit_file", {"path": p, "old_string": "ok", "new_string": "pwned"}), paths),
    st.builds(lambda p: ("edit_file", {"path": p, "old_string": "OUTSIDE", "new_string": "pwned"}), paths),
    st.builds(lambda p: ("grep", {"pattern": "OUTSIDE|ok", "path": p}), paths),
    st.builds(lambda p: ("glob", {"pattern": "**/*", "path": p}), paths),
    st.builds(lambda p: ("list_files", {"path": p}), paths),
)


@pytest.mark.timeout(600)
@pytest.mark.may_skip(reason="needs renameat2 (glibc 2.28+) for the concurrent swap")
def test_fuzzed_hostile_paths_never_leave_the_workspace(tmp_path: Path) -> None:
    if not _has_renameat2():
        pytest.skip("renameat2 is not in this C library")
    ws, outside = _workspace(tmp_path)
    expected = _outside_state(outside)
    policy = Policy(PermissionSettings(mode="edits"), ws)
    context = ToolContext(ws, ToolSettings(max_read_bytes=1024 * 1024))
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(ws / "d"), str(ws / "x")],
                               stdout=subprocess.PIPE, text=True)
    ran: list[str] = []
    try:
        assert swapper.stdout is not None and swapper.stdout.readline().strip() == "ready"
        memory_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

        @settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
        @given(calls)
        def one_call(call: tuple[str, dict[str, object]]) -> None:
            name, args = call
            if not policy.decide(name, args).allowed:
                return
            result = asyncio.run(REGISTRY.call(name, json.dumps(args), context))
            ran.append(name)
            assert OUTSIDE_SECRET not in result.output, (name, args, result.output)
            assert _outside_state(outside) == expected, (name, args, result.output)

        one_call()
        grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - memory_before
    finally:
        swapper.kill()
        swapper.wait()
    assert len(ran) > 50  # the fuzz reached the tools, not only the policy
    assert grown_kib < 256 * 1024, f"memory grew by {grown_kib // 1024} MiB"
