"""One writer per session: while an agentcli runs a session, another may read it but not write or remove it."""

from __future__ import annotations

import json
import signal
import uuid
from pathlib import Path

from tests.e2e.test_cli import agentcli
from tests.e2e.test_resume import _model, _read_until, _session_dir, _start
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.waiting import eventually_sync, processes_with


def test_a_running_session_is_refused_to_writers_until_its_process_dies(
    git_workspace: Path, server: OpenAIServer
) -> None:
    workspace = git_workspace
    command = f"sleep 90.{uuid.uuid4().int % 10**6:06d}"  # this test's command, told apart from others'
    server.add(Reply(calls=[Call("bash", {"command": command})]))
    runner = _start(["run", "wait for it", *_model(server), "--yes", "-o", "jsonl"], workspace)
    seen = _read_until(runner, "tool_call_started")
    eventually_sync(lambda: processes_with(command), what="the command to run")
    session_id = str(seen[0]["session_id"])
    log = _session_dir(session_id) / "events.jsonl"
    before = log.read_bytes()
    requests = len(server.requests)

    refused = {
        "resume": agentcli("resume", session_id, "go on", "--headless", cwd=workspace),
        "resume --last": agentcli("resume", "--last", "go on", cwd=workspace),
        "sessions rm": agentcli("sessions", "rm", session_id, cwd=workspace),
        "compact": agentcli("compact", session_id, cwd=workspace),
        "rewind": agentcli("rewind", session_id, "1", cwd=workspace),
        "rewind --undo": agentcli("rewind", session_id, "--undo", cwd=workspace),
        "restore": agentcli("restore", "1", "--session", session_id, "--yes", cwd=workspace),
    }
    for name, result in refused.items():
        assert result.returncode == 2, f"{name}: {result.stdout}{result.stderr}"
        assert f"agentcli: session {session_id} is in use by another agentcli (pid {runner.pid})" in result.stderr, name
    assert log.read_bytes() == before, "the refused commands wrote nothing"
    assert len(server.requests) == requests
    assert json.loads((_session_dir(session_id) / "meta.json").read_text())["pid"] == runner.pid

    # Those that only read keep working on the running session.
    listing = agentcli("sessions", cwd=workspace)
    assert listing.returncode == 0 and "running" in listing.stdout
    shown = agentcli("sessions", "show", session_id, cwd=workspace)
    assert shown.returncode == 0 and "wait for it" in shown.stdout, shown.stderr
    points = agentcli("rewind", session_id, cwd=workspace)
    assert points.returncode == 0 and "wait for it" in points.stdout, points.stderr
    timeline = agentcli("snapshots", "--session", session_id, cwd=workspace)
    assert timeline.returncode == 0, timeline.stderr
    assert log.read_bytes() == before
    assert json.loads((_session_dir(session_id) / "meta.json").read_text())["pid"] == runner.pid

    # The kernel drops the lock with its holder: a SIGKILLed session resumes with nothing to clean up.
    runner.send_signal(signal.SIGKILL)
    runner.wait(timeout=60)
    eventually_sync(lambda: not processes_with(command), what="the command to die with the agent", timeout=30)
    server.add(Reply(calls=[Call("complete", {"summary": "done waiting"})]))
    resumed = agentcli("resume", session_id, "go on", cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads((_session_dir(session_id) / "meta.json").read_text())["pid"] is None
    removed = agentcli("sessions", "rm", session_id, cwd=workspace)
    assert removed.returncode == 0 and not _session_dir(session_id).exists(), removed.stderr


def test_a_session_is_free_again_once_its_run_ends(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("pause", {"reason": "stop here"})]))
    first = agentcli("run", "go", *_model(server), "-o", "jsonl", cwd=workspace)
    assert first.returncode == 5, first.stderr
    server.add(Reply(calls=[Call("complete", {"summary": "fine"})]))
    again = agentcli("resume", "--last", cwd=workspace)
    assert again.returncode == 0, again.stdout + again.stderr
