"""Permission modes and the approval round trip, headless, against the local server."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agentcli.config import PermissionSettings, Settings
from agentcli.events import PermissionRequested, ToolCallFinished
from agentcli.session.factory import new_session
from tests.e2e.test_cli import agentcli, events
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.sessions import Recorder, replay


def _model(server: OpenAIServer) -> list[str]:
    return ["--model", "openai/test-model", "--api-base", server.base_url]


def test_headless_pause_then_approve_for_the_session(workspace: Path, server: OpenAIServer) -> None:
    server.add(
        Reply(calls=[Call("write_file", {"path": "notes.md", "content": "edits run freely\n"}),
                     Call("bash", {"command": "pytest -q"})]),
    )
    first = agentcli("run", "test it", *_model(server), "-o", "jsonl", cwd=workspace)
    assert first.returncode == 5, first.stderr
    stream = events(first.stdout)
    assert (workspace / "notes.md").exists()  # edits mode: file tools inside the workspace run
    asked = [e for e in stream if e["type"] == "permission_requested"]
    assert asked and asked[0]["tool"] == "bash" and "pytest -q" in asked[0]["summary"]
    assert stream[-1]["outcome"] == "approval" and "approval needed" in stream[-1]["reason"]
    session_id = str(stream[0]["session_id"])

    # Approved for the session, the command runs; the same command later runs without asking.
    server.add(Reply(calls=[Call("bash", {"command": "pytest -q"})]), Reply(calls=[Call("complete", {"summary": "ok"})]))
    approved = agentcli("resume", session_id, "--approve", "--scope", "session", "-o", "jsonl", cwd=workspace)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    runs = [e for e in events(approved.stdout) if e["type"] == "tool_call_finished" and e["name"] == "bash"]
    assert len(runs) == 2 and not any("Permission denied" in r["output"] for r in runs)
    assert not [e for e in events(approved.stdout) if e["type"] == "permission_requested"]
    # Every call is paired with exactly one result in what the model saw.
    history = server.requests[-1]["messages"]
    calls = [c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert sorted(calls) == sorted(results)


def test_headless_deny_gives_the_model_an_error_it_acts_on(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("bash", {"command": "rm -rf build"})]))
    first = agentcli("run", "clean", *_model(server), "-o", "jsonl", cwd=workspace)
    assert first.returncode == 5
    session_id = str(events(first.stdout)[0]["session_id"])
    wrong = agentcli("resume", session_id, "more", cwd=workspace)
    assert wrong.returncode == 2 and "--approve or --deny" in wrong.stderr
    server.add(Reply(calls=[Call("complete", {"summary": "left build alone"})]))
    denied = agentcli("resume", session_id, "--deny", cwd=workspace)
    assert denied.returncode == 0, denied.stdout + denied.stderr
    tool_result = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert "Permission denied by the user" in tool_result["content"]


def test_always_writes_the_rule_to_the_workspace_config(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("bash", {"command": "make lint"})]))
    first = agentcli("run", "lint", *_model(server), "-o", "jsonl", cwd=workspace)
    session_id = str(events(first.stdout)[0]["session_id"])
    server.add(Reply(calls=[Call("complete", {"summary": "linted"})]))
    assert agentcli("resume", session_id, "--approve", "--scope", "always", cwd=workspace).returncode == 0
    config = tomllib.loads((workspace / ".agentcli.toml").read_text())
    assert config["permissions"]["allow"] == ["bash:make lint"]
    # A new session runs it without asking.
    server.add(Reply(calls=[Call("bash", {"command": "make lint"})]), Reply(calls=[Call("complete", {"summary": "ok"})]))
    again = agentcli("run", "lint again", *_model(server), "-o", "jsonl", cwd=workspace)
    assert again.returncode == 0 and not [e for e in events(again.stdout) if e["type"] == "permission_requested"]


@pytest.mark.parametrize(
    ("mode", "asks"),
    [("ask", {"bash", "write_file:.github"}), ("edits", {"bash"}), ("all", set())],
)
async def test_each_mode(workspace: Path, isolated_dirs: Path, mode: str, asks: set[str]) -> None:
    calls = [
        ("write_file", {"path": "src/app.py", "content": "x = 1\n"}),
        ("write_file", {"path": ".github/workflows/ci.yml", "content": "on: push\n"}),
        ("read_file", {"path": "src/app.py"}),
        ("bash", {"command": "ls"}),
    ]
    asked: list[str] = []
    for name, arguments in calls:
        client = replay(("", [(name, arguments)]), ("", [("complete", {"summary": "s"})]))
        settings = Settings(permissions=PermissionSettings(mode=mode))  # type: ignore[arg-type]
        session = new_session(workspace, settings, model_client=client, data_dir=isolated_dirs / "d", record=False)
        rec = Recorder()
        session.subscribe(rec)
        ended = await session.run_turn("go")
        if rec.of(PermissionRequested):
            assert ended.outcome == "approval" and session.control_state == "awaitingPermission"
            label = name if name == "bash" else f"{name}:{arguments['path'].split('/')[0]}"
            asked.append(label)
            await session.deny()
            assert (await session.wait_turn()).outcome == "completed"
            assert "Permission denied by the user" in rec.of(ToolCallFinished)[0].output
        else:
            assert ended.outcome == "completed"
    assert set(asked) == asks


async def test_deny_rules_win_and_paths_outside_are_refused_in_every_mode(workspace: Path, isolated_dirs: Path) -> None:
    settings = Settings(permissions=PermissionSettings(mode="all", allow=["bash"], deny=["bash:curl *"]))
    client = replay(("", [("bash", {"command": "curl http://example.com"}), ("read_file", {"path": "/etc/passwd"})]),
                    ("", [("complete", {"summary": "s"})]))
    session = new_session(workspace, settings, model_client=client, data_dir=isolated_dirs / "d", record=False)
    rec = Recorder()
    session.subscribe(rec)
    assert (await session.run_turn("go")).outcome == "completed"
    curl, passwd = rec.of(ToolCallFinished)[:2]
    assert not curl.ok and "Permission denied" in curl.output
    assert not passwd.ok and "outside the workspace" in passwd.output


def test_secrets_in_tool_output_are_redacted_before_the_model_sees_them(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("bash", {"command": "echo $MY_API_TOKEN"})]), Reply(calls=[Call("complete", {"summary": "s"})]))
    proc = agentcli("run", "show", *_model(server), "--yes", "-o", "jsonl", cwd=workspace,
                    env={"MY_API_TOKEN": "tok-1234567890-secret"})
    assert proc.returncode == 0
    tool_result = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"][0]
    assert "tok-1234567890-secret" not in tool_result["content"] and "redacted" in tool_result["content"]
    assert "tok-1234567890-secret" not in proc.stdout
