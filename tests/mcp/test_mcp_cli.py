"""``agentcli mcp list``, ``agentcli mcp call`` and a headless run with a workspace `.mcp.json`:
real processes, and none left behind."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.e2e.test_cli import agentcli, events, recording
from tests.mcp.conftest import FAULTY, group_alive


def _mcp_json(workspace: Path, pid_file: Path) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        "faulty": {"command": sys.executable, "args": [str(FAULTY)], "env": {"FAULTY_PID_FILE": str(pid_file)}},
        "gone": {"command": "no-such-mcp-server-here"},
    }}))


def test_list_shows_servers_tools_and_failures(workspace: Path, tmp_path: Path) -> None:
    _mcp_json(workspace, tmp_path / "pid")
    (workspace / ".agentcli.toml").write_text('[mcp.servers.faulty]\nresearch = ["echo"]\n')
    listed = agentcli("mcp", "list", cwd=workspace)
    assert listed.returncode == 1, listed.stderr  # one server failed
    out = listed.stdout
    assert "✓ time" in out and "mcp__time__get_current_time  [read-only]" in out
    assert "mcp__faulty__touch  [asks]" in out and "mcp__faulty__echo  [read-only, research]" in out
    assert "left out: broken" in out
    assert "✗ gone" in out and "error: the command was not found" in out
    assert "gone.log" not in out  # it never ran: no log to point at
    assert not group_alive(int((tmp_path / "pid").read_text()))


def test_call_a_tool_by_hand(workspace: Path, tmp_path: Path) -> None:
    _mcp_json(workspace, tmp_path / "pid")
    called = agentcli("mcp", "call", "time", "get_current_time", '{"timezone": "UTC"}', cwd=workspace)
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["timezone"] == "UTC"
    failed = agentcli("mcp", "call", "faulty", "mcp__faulty__fail", cwd=workspace)
    assert failed.returncode == 1 and failed.stdout.startswith("Error:")
    unknown = agentcli("mcp", "call", "faulty", "nope", cwd=workspace)
    assert unknown.returncode == 2 and "offers no tool 'nope'" in unknown.stderr and "echo" in unknown.stderr
    bad = agentcli("mcp", "call", "time", "get_current_time", "{oops", cwd=workspace)
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr
    missing = agentcli("mcp", "call", "nowhere", "x", cwd=workspace)
    assert missing.returncode == 2 and "no enabled MCP server named 'nowhere'" in missing.stderr


def test_a_headless_run_uses_the_servers_and_leaves_no_process(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    _mcp_json(workspace, pid_file)
    model = recording(tmp_path / "rec.json",
                      {"tool_calls": [{"name": "mcp__faulty__echo", "arguments": {"text": "hello from mcp"}}]},
                      {"tool_calls": [{"name": "complete", "arguments": {"summary": "echoed"}}]})
    run = agentcli("run", "echo something", "--model", model, "-o", "jsonl", cwd=workspace)
    assert run.returncode == 0, run.stdout + run.stderr
    stream = events(run.stdout)
    finished = [e for e in stream if e["type"] == "tool_call_finished"]
    assert finished[0]["name"] == "mcp__faulty__echo" and finished[0]["output"] == "hello from mcp"
    notices = [(str(e["text"]), e["severity"]) for e in stream if e["type"] == "notice" and e["kind"] == "mcp"]
    # A server that failed is a warning; the others being ready is news.
    assert any("MCP server 'gone' is not available" in text and severity == "warning" for text, severity in notices)
    assert any(text.startswith("MCP servers ready in ") and severity == "info" for text, severity in notices), notices
    assert not group_alive(int(pid_file.read_text()))


def test_an_mcp_call_approved_on_resume_runs_once_its_server_is_up(workspace: Path, tmp_path: Path) -> None:
    _mcp_json(workspace, tmp_path / "pid")
    model = recording(tmp_path / "rec.json",
                      {"tool_calls": [{"name": "mcp__faulty__touch", "arguments": {"path": "made.txt"}}]},
                      {"tool_calls": [{"name": "complete", "arguments": {"summary": "made"}}]})
    first = agentcli("run", "make a file", "--model", model, "-o", "jsonl", cwd=workspace)
    assert first.returncode == 5, first.stdout + first.stderr  # edits mode: a tool that may write asks
    asked = [e for e in events(first.stdout) if e["type"] == "permission_requested"]
    assert asked and asked[0]["tool"] == "mcp__faulty__touch"
    assert not (workspace / "made.txt").exists()
    session_id = str(events(first.stdout)[0]["session_id"])
    approved = agentcli("resume", session_id, "--approve", "-o", "jsonl", cwd=workspace)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert (workspace / "made.txt").read_text() == "written by the faulty server\n"


@pytest.mark.parametrize(("text", "named"), [
    ("{not json", ".mcp.json: not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ('{"mcpServers": []}', ".mcp.json: mcpServers: must be an object of servers by name"),
    ('{"mcpServers": {"x": {"command": 5}}}', ".mcp.json: mcpServers.x.command: Input should be a valid string"),
    ('{"mcpServers": {"x": "uvx"}}', ".mcp.json: mcpServers.x: must be an object, found a string"),
    ('{"mcpServers": {"x": {"args": ["a"]}}}', ".mcp.json: mcpServers.x: a stdio server needs a `command`"),
])
def test_a_broken_mcp_json_exits_2_naming_the_file_and_the_field(workspace: Path, text: str, named: str) -> None:
    (workspace / ".mcp.json").write_text(text)
    listed = agentcli("mcp", "list", cwd=workspace)
    assert listed.returncode == 2, listed.stdout + listed.stderr
    assert f"agentcli: {workspace}/{named}" in listed.stderr
    assert "No MCP servers configured" not in listed.stdout
    called = agentcli("mcp", "call", "x", "tool", cwd=workspace)
    assert called.returncode == 2 and f"{workspace}/{named}" in called.stderr
    assert (workspace / ".mcp.json").read_text() == text


def test_a_broken_entry_stops_mcp_list_before_any_server_starts(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "faulty": {"command": sys.executable, "args": [str(FAULTY)], "env": {"FAULTY_PID_FILE": str(pid_file)}},
        "typo": {"command": "x", "timeout_s": "soon"},
    }}))
    listed = agentcli("mcp", "list", cwd=workspace)
    assert listed.returncode == 2 and "mcpServers.typo.timeout_s" in listed.stderr
    assert not pid_file.exists()  # nothing was started


def test_a_run_warns_about_a_broken_mcp_json_and_goes_on(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".mcp.json").write_text('{"mcpServers": {"x": {"command": 5}}}')
    model = recording(tmp_path / "rec.json", {"tool_calls": [{"name": "complete", "arguments": {"summary": "done"}}]})
    run = agentcli("run", "go", "--model", model, "-o", "jsonl", cwd=workspace)
    assert run.returncode == 0, run.stdout + run.stderr
    notices = [str(e["text"]) for e in events(run.stdout) if e["type"] == "notice"]
    assert any(".mcp.json: mcpServers.x.command" in text for text in notices), notices


def test_mcp_call_exits_1_when_the_server_does_not_start_as_mcp_list_does(workspace: Path) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "gone": {"command": "no-such-mcp-server-here"},
        "broken": {"command": sys.executable, "args": [str(FAULTY), "--fail-start", "no database here"]}}}))
    called = agentcli("mcp", "call", "gone", "anything", cwd=workspace)
    assert called.returncode == 1, called.stderr
    assert "the MCP server 'gone' did not start: the command was not found" in called.stderr
    broken = agentcli("mcp", "call", "broken", "anything", cwd=workspace)
    assert broken.returncode == 1 and "its last words: no database here" in broken.stderr
    assert "(its stderr: " in broken.stderr and "broken.log" in broken.stderr
    listed = agentcli("mcp", "list", cwd=workspace)
    assert listed.returncode == 1 and "its stderr: " in listed.stdout and "broken.log" in listed.stdout
