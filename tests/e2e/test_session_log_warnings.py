"""A damaged session log is reported in one ``agentcli: warning:`` line per problem, and a torn last
line is reported once: the resume that reopens the log sets it aside."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_cli import agentcli, events
from tests.e2e.test_resume import _model, _session_dir
from tests.support.openai_server import Call, OpenAIServer, Reply


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_log_warnings_are_one_line_each_and_a_torn_line_warns_once(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("pause", {"reason": "stop here"})]))
    first = agentcli("run", "go", *_model(server), "-o", "jsonl", cwd=workspace)
    assert first.returncode == 5, first.stderr
    session_id = str(events(first.stdout)[0]["session_id"])
    log = _session_dir(session_id) / "events.jsonl"
    lines = log.read_text().splitlines()
    lines.insert(2, json.dumps({"v": 2, "type": "hologram", "ts": "2030-01-01T00:00:00Z"}))
    lines.insert(3, json.dumps({"v": 1, "type": "user_message", "ts": "2030-01-01T00:00:00Z"}))  # no text
    torn = '{"v": 1, "type": "tool_call_fin'  # the crash came mid-write
    log.write_text("\n".join(lines) + "\n" + torn)

    shown = agentcli("sessions", "show", session_id, cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    assert _warnings(shown.stderr) == [
        f"agentcli: warning: {log}: line 3 has unknown event type 'hologram' (newer version?); skipped",
        f"agentcli: warning: {log}: line 4 is not a valid event (1 error); skipped",
        f"agentcli: warning: {log}: last line is incomplete (torn by a crash?) and was skipped",
    ]
    listed = agentcli("rewind", "--last", cwd=workspace)
    assert listed.returncode == 0 and len(_warnings(listed.stderr)) == 3, listed.stderr
    assert all(line.startswith("agentcli: warning: ") for line in _warnings(listed.stderr))
    assert log.read_text().endswith(torn), "a command that only reads leaves the log as it is"

    server.add(Reply(calls=[Call("complete", {"summary": "fine"})]))
    resumed = agentcli("resume", session_id, cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "incomplete" in resumed.stderr and ".py:" not in resumed.stderr and "for event in" not in resumed.stderr
    # Reopened for appending, the log lost its torn line to events.jsonl.torn: no warning about it again.
    assert (log.parent / "events.jsonl.torn").read_text() == torn + "\n"
    again = agentcli("sessions", "show", session_id, cwd=workspace)
    assert again.returncode == 0 and "incomplete" not in again.stderr, again.stderr
    assert [line.split(": ", 3)[-1] for line in _warnings(again.stderr)] == [
        "line 3 has unknown event type 'hologram' (newer version?); skipped",
        "line 4 is not a valid event (1 error); skipped",
    ]
