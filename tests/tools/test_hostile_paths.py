"""Hostile paths through every file tool: no hang, no read or write outside, bounded reads.

FIFOs, device files, symlinks to ``/dev/zero`` and out of the workspace, hard links to outside
files, NUL bytes, huge files, and a folder swapped for a symlink by a concurrent process between
the check and the use. Each answer is an error the model can read, or the approval prompt.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.config import PermissionSettings, ToolSettings
from agentcli.permissions import Policy
from agentcli.tools import ToolContext, default_registry
from agentcli.tools.base import ToolResult

REGISTRY = default_registry()
OUTSIDE_SECRET = "OUTSIDE-SECRET-7f3a"

pytestmark = pytest.mark.timeout(120)  # a hang fails here instead of freezing the suite


async def call(ws: Path, name: str, args: dict[str, object], **limits: int) -> ToolResult:
    return await REGISTRY.call(name, json.dumps(args), ToolContext(ws, ToolSettings(**limits)))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(f"{OUTSIDE_SECRET}\n")
    return folder


# -- special files ------------------------------------------------------------------------------


SPECIAL_CALLS = [
    ("read_file", {"path": "{p}"}),
    ("read_file", {"path": "{p}", "offset": 1, "limit": 5}),
    ("write_file", {"path": "{p}", "content": "x"}),
    ("edit_file", {"path": "{p}", "old_string": "a", "new_string": "b"}),
    ("grep", {"pattern": "x", "path": "{p}"}),
]


def _fill(args: dict[str, object], path: str) -> dict[str, object]:
    return {key: value.format(p=path) if isinstance(value, str) else value for key, value in args.items()}


@pytest.mark.parametrize(("tool", "args"), SPECIAL_CALLS)
async def test_a_fifo_is_refused_by_every_tool_without_blocking(
    workspace: Path, tool: str, args: dict[str, object]
) -> None:
    os.mkfifo(workspace / "pipe")
    result = await call(workspace, tool, _fill(args, "pipe"))
    assert not result.ok and "FIFO" in result.output


@pytest.mark.parametrize(("tool", "args"), SPECIAL_CALLS)
async def test_a_link_to_dev_zero_is_refused(workspace: Path, tool: str, args: dict[str, object]) -> None:
    (workspace / "zero").symlink_to("/dev/zero")
    result = await call(workspace, tool, _fill(args, "zero"))
    assert not result.ok and ("outside the workspace" in result.output or "/dev" in result.output)


@pytest.mark.may_skip(reason="creating a device node needs root (CAP_MKNOD)")
@pytest.mark.parametrize(("tool", "args"), SPECIAL_CALLS)
async def test_a_device_node_in_the_workspace_is_refused(workspace: Path, tool: str, args: dict[str, object]) -> None:
    try:
        os.mknod(workspace / "zero", 0o666 | 0o020000, os.makedev(1, 5))  # a copy of /dev/zero
    except PermissionError:
        pytest.skip("mknod needs root")
    result = await call(workspace, tool, _fill(args, "zero"))
    assert not result.ok and "device" in result.output


@pytest.mark.parametrize(("tool", "args"), SPECIAL_CALLS)
async def test_a_nul_byte_in_a_path_is_refused(workspace: Path, tool: str, args: dict[str, object]) -> None:
    result = await call(workspace, tool, _fill(args, "a\x00b"))
    assert not result.ok and "NUL" in result.output


async def test_grep_of_a_folder_skips_fifos_devices_and_links_out(workspace: Path, outside: Path) -> None:
    (workspace / "ok.txt").write_text("needle here\n")
    os.mkfifo(workspace / "pipe")
    (workspace / "zero").symlink_to("/dev/zero")
    (workspace / "away.txt").symlink_to(outside / "secret.txt")
    (workspace / "away").symlink_to(outside)
    result = await call(workspace, "grep", {"pattern": "needle|OUTSIDE"})
    assert result.ok and result.output.splitlines()[0] == "ok.txt:1:needle here"
    assert OUTSIDE_SECRET not in result.output


async def test_grep_skips_hard_links_and_says_so(workspace: Path, outside: Path) -> None:
    (workspace / "ok.txt").write_text("OUTSIDE is a word here\n")
    try:
        os.link(outside / "secret.txt", workspace / "linked.txt")
    except OSError:
        pytest.skip("hard links across these folders are not possible here")
    result = await call(workspace, "grep", {"pattern": "OUTSIDE"})
    assert OUTSIDE_SECRET not in result.output
    assert "ok.txt:1:" in result.output and "linked.txt" in result.output and "hard-linked" in result.output


async def test_huge_files_are_refused_before_being_read(workspace: Path) -> None:
    os.truncate(_touch(workspace / "big.txt"), 64 * 1024 * 1024)  # sparse: 64 MiB of zeros, no disk
    for tool, args in [("read_file", {"path": "big.txt"}),
                       ("edit_file", {"path": "big.txt", "old_string": "a", "new_string": "b"})]:
        result = await call(workspace, tool, args, max_read_bytes=1024 * 1024)
        assert not result.ok and "limit" in result.output


# -- approval for links out ---------------------------------------------------------------------


def _touch(path: Path) -> Path:
    path.touch()
    return path


def _policy(ws: Path, mode: str) -> Policy:
    return Policy(PermissionSettings(mode=mode), ws)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["ask", "edits"])
@pytest.mark.parametrize("tool", ["read_file", "grep"])
def test_reading_a_hard_link_needs_approval(workspace: Path, outside: Path, mode: str, tool: str) -> None:
    try:
        os.link(outside / "secret.txt", workspace / "linked.txt")
    except OSError:
        pytest.skip("hard links across these folders are not possible here")
    decision = _policy(workspace, mode).decide(tool, {"path": "linked.txt", "pattern": "x"})
    assert decision.needs_approval and "hard-linked" in decision.reason


@pytest.mark.parametrize("tool", ["read_file", "grep", "write_file", "edit_file"])
def test_a_symlink_out_is_denied_for_every_file_tool(workspace: Path, outside: Path, tool: str) -> None:
    (workspace / "away.txt").symlink_to(outside / "secret.txt")
    args = {"path": "away.txt", "pattern": "x", "content": "x", "old_string": "a", "new_string": "b"}
    assert _policy(workspace, "all").decide(tool, args).denied


# -- a concurrent swap between check and use ----------------------------------------------------

SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
print("ready", flush=True)
while True:
    # renameat2(RENAME_EXCHANGE): the folder and the symlink trade names atomically.
    libc.renameat2(-100, a, -100, b, 2)
"""


def _has_renameat2() -> bool:
    return hasattr(ctypes.CDLL(None), "renameat2")


@pytest.fixture
def swapping(workspace: Path, outside: Path) -> Iterator[Path]:
    """``workspace/d`` flips between a real folder and a symlink to ``outside``, all the time."""
    if not _has_renameat2():
        pytest.skip("renameat2 is not in this C library")
    (workspace / "d").mkdir()
    (workspace / "d" / "secret.txt").write_text("inside\n")
    (workspace / "x").symlink_to(outside)
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(workspace / "d"), str(workspace / "x")],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert swapper.stdout is not None and swapper.stdout.readline().strip() == "ready"
        yield outside
    finally:
        swapper.kill()
        swapper.wait()


@pytest.mark.may_skip(reason="needs renameat2 (glibc 2.28+) for an atomic swap")
async def test_a_folder_swapped_for_a_symlink_never_lets_a_tool_out(workspace: Path, swapping: Path) -> None:
    outside = swapping
    (outside / "only-outside.txt").write_text("a name no listing of the workspace may show\n")
    leaks: list[str] = []
    for number in range(150):
        write = await call(workspace, "write_file", {"path": f"d/new{number}.txt", "content": "written\n"})
        edit = await call(workspace, "edit_file", {"path": "d/secret.txt", "old_string": "side", "new_string": "SIDE"})
        read = await call(workspace, "read_file", {"path": "d/secret.txt"})
        grep = await call(workspace, "grep", {"pattern": "SECRET", "path": "."})
        listing = await call(workspace, "list_files", {"path": "d"})
        found = await call(workspace, "glob", {"pattern": "**/*", "path": "d"})
        for result in (write, edit, read, grep, listing, found):
            if OUTSIDE_SECRET in result.output or "OUTSIDE-SIDE" in result.output or "only-outside" in result.output:
                leaks.append(result.output)
    written_outside = sorted(path.name for path in outside.iterdir())
    assert written_outside == ["only-outside.txt", "secret.txt"], f"files written outside: {written_outside}"
    assert (outside / "secret.txt").read_text() == f"{OUTSIDE_SECRET}\n"
    assert leaks == []


# -- through the whole runtime ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["edits", "all"])
async def test_hostile_writes_end_the_turn_with_errors_the_model_reads(
    workspace: Path, isolated_dirs: Path, mode: str
) -> None:
    from agentcli.config import Settings
    from agentcli.events import ToolCallFinished
    from agentcli.session.factory import new_session
    from tests.support.sessions import replay

    os.mkfifo(workspace / "pipe")
    calls: list[tuple[str, dict[str, object]]] = [
        ("write_file", {"path": "/dev/zero", "content": "x"}),
        ("write_file", {"path": "pipe", "content": "x"}),
        ("edit_file", {"path": "pipe", "old_string": "a", "new_string": "b"}),
        ("write_file", {"path": "a\x00b", "content": "x"}),
        ("grep", {"pattern": "x", "path": "pipe"}),
        ("grep", {"pattern": "x"}),
    ]
    client = replay(*[("", [call]) for call in calls], ("", [("complete", {"summary": "done"})]))
    settings = Settings(permissions=PermissionSettings(mode=mode))  # type: ignore[arg-type]
    session = new_session(workspace, settings, model_client=client, data_dir=isolated_dirs / "data")
    finished: list[ToolCallFinished] = []
    session.subscribe(lambda event: finished.append(event) if isinstance(event, ToolCallFinished) else None)
    await session.run_turn("try the hostile paths")
    session.close()
    results = [(event.name, event.ok, event.output) for event in finished]
    assert [ok for _, ok, _ in results[:5]] == [False] * 5, results
    assert results[5][1] and results[-1][0] == "complete"


# -- a hard link made after the permission check --------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args"),
    [("read_file", {"path": "f.txt"}), ("edit_file", {"path": "f.txt", "old_string": "OUT", "new_string": "in"}),
     ("write_file", {"path": "f.txt", "content": "pwned\n"}), ("grep", {"pattern": "OUT", "path": "f.txt"})],
)
async def test_a_file_linked_after_the_check_is_refused_unless_approved(
    workspace: Path, outside: Path, tool: str, args: dict[str, object]
) -> None:
    # The policy saw f.txt with one name and let the call run; then it became a hard link out.
    (workspace / "f.txt").write_text("inside\n")
    assert _policy(workspace, "edits").decide(tool, args).allowed
    (workspace / "f.txt").unlink()
    try:
        os.link(outside / "secret.txt", workspace / "f.txt")
    except OSError:
        pytest.skip("hard links across these folders are not possible here")
    unapproved = await REGISTRY.call(tool, json.dumps(args), ToolContext(workspace, ToolSettings()))
    assert OUTSIDE_SECRET not in unapproved.output
    assert (outside / "secret.txt").read_text() == f"{OUTSIDE_SECRET}\n"
    assert "hard-linked" in unapproved.output
    approved = await REGISTRY.call(
        "read_file", json.dumps({"path": "f.txt"}), ToolContext(workspace, ToolSettings(), links_approved=True)
    )
    assert OUTSIDE_SECRET in approved.output  # what the user approved, the tool does


@pytest.mark.parametrize(("mode", "allow"), [("all", []), ("edits", ["read_file:hard.txt"])])
async def test_an_approved_hard_link_is_read_through_the_runtime(
    workspace: Path, outside: Path, isolated_dirs: Path, mode: str, allow: list[str]
) -> None:
    from agentcli.config import Settings
    from agentcli.events import ToolCallFinished
    from agentcli.session.factory import new_session
    from tests.support.sessions import replay

    try:
        os.link(outside / "secret.txt", workspace / "hard.txt")
    except OSError:
        pytest.skip("hard links across these folders are not possible here")
    client = replay(("", [("read_file", {"path": "hard.txt"})]), ("", [("complete", {"summary": "done"})]))
    settings = Settings(permissions=PermissionSettings(mode=mode, allow=allow))  # type: ignore[arg-type]
    session = new_session(workspace, settings, model_client=client, data_dir=isolated_dirs / "data")
    finished: list[ToolCallFinished] = []
    session.subscribe(lambda event: finished.append(event) if isinstance(event, ToolCallFinished) else None)
    await session.run_turn("read it")
    session.close()
    assert finished[0].ok and OUTSIDE_SECRET in finished[0].output
