"""A call cut off by a pause gets a snapshot of its own, so exactly what it did can be undone."""

from __future__ import annotations

import asyncio
import threading
import uuid
from pathlib import Path
from typing import Any

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
    # Its effects, not its command line: bash's own argv holds the sleep before anything ran.
    await eventually(lambda: not (workspace / "kept.txt").exists() and processes_with(sleep),
                     what="the command to have changed files and be sleeping")
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


async def test_a_pause_during_the_capture_after_a_command_keeps_it(workspace: Path, isolated_dirs: Path) -> None:
    client = replay(("", [("bash", {"command": "echo made > made.txt"})]), ("", [("complete", {"summary": "done"})]))
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "data",
                          default_permission_mode="all")
    store = session.turn.snapshots
    assert store is not None
    real_capture = store.capture
    entered, gate = threading.Event(), threading.Event()

    def held_capture(**kwargs: Any) -> Any:
        """The real capture, held at its start after the command so the pause lands during it."""
        if kwargs["tool_name"] == "bash":
            entered.set()
            gate.wait(30)
        return real_capture(**kwargs)

    store.capture = held_capture  # type: ignore[method-assign]
    seen: list[Event] = []
    session.subscribe(seen.append)
    await session.send_user_message("go")
    await eventually(entered.is_set, what="the capture after the command to start")
    capture_task = session.turn.task
    assert capture_task is not None
    pausing = asyncio.ensure_future(session.pause())
    await eventually(lambda: capture_task.cancelling() > 0, what="the pause to cancel the capture")
    gate.set()
    await pausing
    ended = await session.wait_turn()
    session.close()
    assert ended.outcome == "paused"
    snaps = [e for e in seen if isinstance(e, SnapshotCaptured) and e.reason == "after bash"]
    assert [[f.path for f in s.files] for s in snaps] == [["made.txt"]], "the store wrote it: the log records it"
    assert seen.index(snaps[0]) < seen.index(next(e for e in seen if isinstance(e, TurnEnded)))


def test_the_tui_timeline_names_the_cut_off_call_as_such() -> None:
    from agentcli.tui.widgets import TimelineEntry

    def label(reason: str) -> str:
        event = SnapshotCaptured(snapshot_id="s", seq=2, tree="0" * 40, reason=reason, tool_name="bash", files=[])
        return TimelineEntry.from_event(event).label

    assert label("after bash (interrupted)") == "bash (interrupted)"
    assert label("after bash (failed)") == "bash (failed)"
    assert label("after bash") == "bash"
