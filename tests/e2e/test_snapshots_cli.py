"""Every change — bash included — lands on the timeline; any entry restores, and the restore undoes."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.config import Settings
from agentcli.events import SnapshotCaptured, SnapshotRestored, StateChanged
from agentcli.session.factory import new_session
from tests.e2e.test_cli import agentcli, events, recording
from tests.support.sessions import Recorder, replay


def test_timeline_diff_restore_and_undo_from_the_cli(workspace: Path, tmp_path: Path) -> None:
    (workspace / "keep.txt").write_text("the user's uncommitted work\n")
    model = recording(
        tmp_path / "rec.json",
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "app.py", "content": "print(1)\n"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo 'print(2)' >> app.py && rm keep.txt && mkdir -p out && echo data > out/x.txt"}}]},
        {"tool_calls": [{"name": "complete", "arguments": {"summary": "done"}}]},
    )
    run = agentcli("run", "make changes", "--model", model, "--yes", "-o", "jsonl", cwd=workspace)
    assert run.returncode == 0, run.stderr
    snaps = [e for e in events(run.stdout) if e["type"] == "snapshot"]
    assert [(s["seq"], s["reason"]) for s in snaps] == [(1, "session start"), (2, "after write_file"), (3, "after bash")]
    bash_changes = {f["path"]: f["status"] for f in snaps[2]["files"]}
    assert bash_changes == {"app.py": "modified", "keep.txt": "deleted", "out/x.txt": "added"}

    listing = agentcli("snapshots", cwd=workspace)
    assert listing.returncode == 0 and "after bash" in listing.stdout and "session start" in listing.stdout
    diff = agentcli("diff", "2", "3", cwd=workspace)
    assert "+print(2)" in diff.stdout and "-the user's uncommitted work" in diff.stdout
    against_now = agentcli("diff", "1", "--stat", cwd=workspace)
    assert "3 files" in against_now.stdout
    assert agentcli("diff", "1", "2", "--stat", cwd=workspace).stdout.endswith("\n1 file, +1 −0\n")
    assert agentcli("diff", "3", cwd=workspace).stdout == "no changes: the files are the same\n"

    preview = agentcli("restore", "1", "--dry-run", cwd=workspace)
    assert preview.returncode == 0
    assert "write   keep.txt" in preview.stdout and "delete  app.py" in preview.stdout and "delete  out/x.txt" in preview.stdout
    assert not (workspace / "keep.txt").exists()  # a dry run changes nothing
    unconfirmed = agentcli("restore", "1", cwd=workspace)
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr

    done = agentcli("restore", "1", "--yes", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / "keep.txt").read_text() == "the user's uncommitted work\n"
    assert not (workspace / "app.py").exists() and not (workspace / "out").exists()
    undo_ref = done.stdout.split("agentcli restore ")[1].split()[0]
    undone = agentcli("restore", undo_ref, "--yes", cwd=workspace)
    assert undone.returncode == 0, undone.stderr
    assert (workspace / "app.py").read_text() == "print(1)\nprint(2)\n" and (workspace / "out/x.txt").exists()
    assert not (workspace / "keep.txt").exists()
    assert agentcli("restore", "99", cwd=workspace).returncode == 2


async def test_session_restore_api_for_front_ends(workspace: Path, isolated_dirs: Path) -> None:
    client = replay(("", [("write_file", {"path": "a.txt", "content": "v1\n"})]),
                    ("", [("write_file", {"path": "a.txt", "content": "v2\n"})]),
                    ("", [("complete", {"summary": "s"})]))
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "data" / "agentcli",
                          default_permission_mode="all")
    rec = Recorder()
    session.subscribe(rec)
    await session.run_turn("go")
    visited = [e.target for e in rec.of(StateChanged)]
    assert visited.count("capturingBaseline") == 1  # session start
    assert visited.count("capturingSnapshot") == 2  # after each write
    timeline = await session.timeline()
    assert [s.seq for s in timeline] == [1, 2, 3]
    plan = await session.plan_restore("2")
    assert plan.writes == ["a.txt"] and plan.deletes == []
    diff = await session.diff("2")
    assert diff.files[0].path == "a.txt" and "+v2" in diff.files[0].patch
    result = await session.restore("2")
    assert (workspace / "a.txt").read_text() == "v1\n"
    restored = rec.of(SnapshotRestored)[-1]
    assert restored.target_seq == 2 and restored.written == ["a.txt"] and restored.undo_snapshot_id == result.undo.id
    assert rec.of(SnapshotCaptured)[-1].reason.startswith("restored snapshot")
    assert "restored the workspace to snapshot 2" in session.turn.messages[-1]["content"]
    await session.restore(result.undo.id)
    assert (workspace / "a.txt").read_text() == "v2\n"
    session.close()
    assert json.loads((session.log.directory / "meta.json").read_text())["outcome"] == "completed"


async def test_closing_a_session_packs_the_store_index_and_a_new_session_unpacks_it(workspace: Path,
                                                                                  isolated_dirs: Path) -> None:
    data = isolated_dirs / "data" / "agentcli"
    client = replay(("", [("write_file", {"path": "a.txt", "content": "v1\n"})]), ("", [("complete", {"summary": "s"})]))
    session = new_session(workspace, Settings(), model_client=client, data_dir=data, default_permission_mode="all")
    await session.run_turn("go")
    session.close()
    [store] = [path.parent for path in data.rglob("index.z")]
    assert not (store / "index").exists(), "closed: only the packed index stays"

    again = new_session(workspace, Settings(), model_client=replay(("", [("complete", {"summary": "s"})])),
                        data_dir=data, default_permission_mode="all")
    await again.run_turn("look")
    assert [s.reason for s in await again.timeline()] == ["session start"]  # its own, from the unpacked index
    assert (store / "index").exists()
    again.close()
    assert not (store / "index").exists()
