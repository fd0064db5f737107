"""A call cut off by a pause gets a snapshot of its own, so exactly what it did can be undone."""

from __future__ import annotations

import uuid
from pathlib import Path

from agentcli.config import Settings
from agentcli.events import Event, SnapshotCaptured, ToolCallFinished, TurnEnded
from agentcli.session.factory import new_session
from tests.support.sessions import replay
from tests.support.waiting import eventually, processes_with


async def test_a_paused_command_has_a_snapshot_of_its_own(workspace: Path, isolated_dirs: Path) -> None:
    (workspace / "kept.txt").write_text("the user's file\n")
    sleep = f"sleep 30.{uuid.uuid4().int % 10**6:06d}"
    client = replay(
        ("", [("bash", {"command": f"echo half > half.txt; rm kept.txt; {sleep}; touch too-late"})]),
        ("", [("complete", {"summary": "done"})]),
    )
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "data",
                          default_permission_mode="all")
    seen: list[Event] = []
    session.subscribe(seen.append)
    await session.send_user_message("go")
    await eventually(lambda: processes_with(sleep), what="the command to run")
    await session.pause()
    ended = await session.wait_turn()
    assert ended.outcome == "paused"
    finished = [e for e in seen if isinstance(e, ToolCallFinished)]
    snaps = [e for e in seen if isinstance(e, SnapshotCaptured)]
    assert finished[0].interrupted
    cut = next(s for s in snaps if s.tool_call_id == finished[0].call_id)
    assert cut.reason == "after bash (interrupted)" and cut.tool_name == "bash"
    assert {(f.path, f.status) for f in cut.files} == {("half.txt", "added"), ("kept.txt", "deleted")}
    # Recorded before the turn ends: a headless run exits at its end, and a resume must find it.
    assert seen.index(cut) < seen.index(next(e for e in seen if isinstance(e, TurnEnded)))

    # Undo exactly that call: the state before it comes back.
    before = snaps[snaps.index(cut) - 1]
    await session.restore(before.snapshot_id)
    assert (workspace / "kept.txt").read_text() == "the user's file\n" and not (workspace / "half.txt").exists()
    await session.resume()
    assert (await session.wait_turn()).outcome == "completed"
    session.close()
    added = [s for s in seen if isinstance(s, SnapshotCaptured) and ("half.txt", "added") in
             {(f.path, f.status) for f in s.files}]
    assert {s.snapshot_id for s in added} == {cut.snapshot_id}, "the command's change is in its own snapshot only"
