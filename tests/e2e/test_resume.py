"""Sessions survive exits, questions, pauses, Ctrl-C and SIGKILL, and resume where they stopped."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

from tests.e2e.test_cli import agentcli, events
from tests.support import agentcli_process
from tests.support.agentcli_process import ForkedProcess
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.waiting import eventually_sync, processes_with


def _model(server: OpenAIServer) -> list[str]:
    return ["--model", "openai/test-model", "--api-base", server.base_url]


def _session_dir(session_id: str) -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "agentcli" / "sessions" / session_id


def _start(args: list[str], cwd: Path) -> ForkedProcess | subprocess.Popen[str]:
    return agentcli_process.start(args, cwd=cwd)


def _read_until(proc: ForkedProcess | subprocess.Popen[str], event_type: str, timeout: float = 60) -> list[dict[str, object]]:
    """Read JSON lines from a running agentcli until an event of ``event_type`` arrives."""
    seen: list[dict[str, object]] = []
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(json.loads(line))
        if seen[-1]["type"] == event_type:
            return seen
    raise AssertionError(f"no {event_type} event; got {[e['type'] for e in seen]}; stderr: {proc.stderr.read() if proc.stderr else ''}")


def _tool_results(request: dict[str, object]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}  # type: ignore[index,union-attr]


def _calls(request: dict[str, object]) -> list[str]:
    return [c["id"] for m in request["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])]  # type: ignore[index,union-attr]


def test_clarify_answer_new_prompt_pause_and_resume(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("clarify", {"question": "Which greeting?", "options": ["hello", "hi"]})]))
    first = agentcli("run", "write a greeting", *_model(server), "-o", "jsonl", cwd=workspace)
    assert first.returncode == 3, first.stderr
    session_id = events(first.stdout)[0]["session_id"]

    server.add(
        Reply(calls=[Call("write_file", {"path": "greeting.txt", "content": "hi\n"})]),
        Reply(calls=[Call("complete", {"summary": "wrote hi"})]),
    )
    answered = agentcli("resume", session_id, "--answer", "hi", *_model(server), cwd=workspace)
    assert answered.returncode == 0, answered.stdout + answered.stderr
    assert (workspace / "greeting.txt").read_text() == "hi\n"
    sent = server.requests[1]["messages"]
    assert any(m["role"] == "user" and "Which greeting?" in m["content"] and "hi" in m["content"] for m in sent)
    assert any(m["role"] == "user" and "files in the workspace may have changed" in m["content"] for m in sent)

    server.add(Reply(calls=[Call("pause", {"reason": "need the user's review"})]))
    paused = agentcli("resume", "--last", "now add a farewell", cwd=workspace)  # the session's own model
    assert paused.returncode == 5, paused.stdout + paused.stderr
    assert server.requests[-1]["messages"][-1]["content"] == "now add a farewell"

    server.add(Reply(calls=[Call("complete", {"summary": "reviewed"})]))
    done = agentcli("resume", session_id[:6], "looks good, finish", cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    listing = agentcli("sessions", cwd=workspace)
    assert session_id in listing.stdout and "completed" in listing.stdout and "write a greeting" in listing.stdout
    # The conversation the model saw grew turn by turn: nothing was re-run or re-asked.
    assert len(server.requests) == 5


def test_resume_refuses_what_does_not_fit(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("complete", {"summary": "done"})]))
    proc = agentcli("run", "go", *_model(server), "-o", "jsonl", cwd=workspace)
    session_id = events(proc.stdout)[0]["session_id"]
    assert agentcli("resume", session_id, "--answer", "x", cwd=workspace).returncode == 2
    no_prompt = agentcli("resume", session_id, cwd=workspace)
    assert no_prompt.returncode == 2 and "give a PROMPT" in no_prompt.stderr
    assert agentcli("resume", "nosuchsession", "x", cwd=workspace).returncode == 2


def test_a_message_still_queued_when_the_tui_died_is_sent_by_a_headless_resume(
    workspace: Path, server: OpenAIServer
) -> None:
    from agentcli.events import QueueChanged, QueuedMessage, event_to_json

    server.add(Reply(calls=[Call("complete", {"summary": "done"})]))
    proc = agentcli("run", "go", *_model(server), "-o", "jsonl", cwd=workspace)
    session_id = events(proc.stdout)[0]["session_id"]
    # As the TUI logs a message typed while the agent worked, its process killed before the
    # turn's end could send it.
    with (_session_dir(session_id) / "events.jsonl").open("a") as log:
        log.write(event_to_json(QueueChanged(messages=[QueuedMessage("now the tests")])) + "\n")
    server.add(Reply(calls=[Call("complete", {"summary": "tests done"})]))
    resumed = agentcli("resume", session_id, *_model(server), cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert server.requests[-1]["messages"][-1] == {"role": "user", "content": "now the tests"}
    server.add(Reply(calls=[Call("complete", {"summary": "again"})]))
    again = agentcli("resume", session_id, cwd=workspace)
    assert again.returncode == 2 and "give a PROMPT" in again.stderr, "sent once: nothing queued any more"


def test_bytes_that_are_not_utf8_in_a_prompt_or_an_answer_are_logged_and_sent_as_escapes(
    workspace: Path, server: OpenAIServer
) -> None:
    from agentcli.session.log import read_events

    server.add(Reply(calls=[Call("clarify", {"question": "Which database?"})]))
    # An argument's bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape).
    first = agentcli("run", "fix caf\udce9 and \udcff", *_model(server), "-o", "jsonl", cwd=workspace)
    assert first.returncode == 3, first.stdout + first.stderr
    session_id = events(first.stdout)[0]["session_id"]
    server.add(Reply(calls=[Call("complete", {"summary": "done"})]))
    answered = agentcli("resume", session_id, "--answer", "post\udcffgres", cwd=workspace)
    assert answered.returncode == 0, answered.stdout + answered.stderr
    assert "Traceback" not in first.stderr + answered.stderr and "subscriber" not in first.stdout + answered.stdout
    assert server.requests[0]["messages"][-1]["content"] == "fix caf\\xe9 and \\xff"
    assert "post\\xffgres" in server.requests[1]["messages"][-1]["content"]
    logged = [e.type for e in read_events(_session_dir(session_id))]
    assert logged.count("user_message") == 1 and logged.count("clarification_answered") == 1
    assert logged.count("turn_ended") == 2, "every event of both runs is in the log"


def test_sigkill_mid_stream_then_resume_to_completion(workspace: Path, server: OpenAIServer) -> None:
    said = "Let me think about this carefully before acting. " * 20
    server.add(Reply(text=said, chunk_size=5, delay_s=0.05))
    proc = _start(["run", "explain", *_model(server), "-o", "jsonl"], workspace)
    seen = _read_until(proc, "text_delta")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    session_id = seen[0]["session_id"]

    server.script.clear()
    server.add(Reply(calls=[Call("complete", {"summary": "explained"})]))
    resumed = agentcli("resume", str(session_id), "-o", "jsonl", cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    sent = server.requests[-1]["messages"]
    partial = [m for m in sent if m["role"] == "assistant"]
    assert partial and said.startswith(partial[-1]["content"]) and partial[-1]["content"]  # what had streamed is kept
    assert "interrupted during a reply" in sent[-1]["content"]


def test_sigkill_mid_tool_then_resume_pairs_every_call(workspace: Path, server: OpenAIServer) -> None:
    command = f"sleep 61.{uuid.uuid4().int % 10**6:06d}"  # this test's command, told apart from others'
    server.add(Reply(calls=[Call("bash", {"command": command}), Call("write_file", {"path": "later.txt", "content": "x"})]))
    proc = _start(["run", "wait", *_model(server), "--yes", "-o", "jsonl"], workspace)
    seen = _read_until(proc, "tool_call_started")
    eventually_sync(lambda: processes_with(command), what="the command to run")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    # The command dies with the agent (parent-death signal): no orphan runs on unwatched, and it
    # is gone long before its own 61 s are up.
    eventually_sync(lambda: not processes_with(command), what="the command to die with the agent", timeout=30)
    session_id = str(seen[0]["session_id"])
    assert json.loads((_session_dir(session_id) / "meta.json").read_text())["outcome"] is None

    listing = agentcli("sessions", cwd=workspace)
    assert "interrupted" in listing.stdout

    server.add(Reply(calls=[Call("complete", {"summary": "recovered"})]))
    resumed = agentcli("resume", session_id, cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    request = server.requests[-1]
    results = _tool_results(request)
    assert set(results) == set(_calls(request))  # no call without its result
    assert sorted(results.values()) == sorted(["Error: Interrupted before it finished: the run was paused. Its effects "
                                               "may be partial.", "Error: Not run: the turn ended before this call was reached."])
    assert not (workspace / "later.txt").exists()


def test_a_torn_last_line_is_skipped_with_a_warning(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("pause", {"reason": "stop here"})]))
    proc = agentcli("run", "go", *_model(server), "-o", "jsonl", cwd=workspace)
    session_id = str(events(proc.stdout)[0]["session_id"])
    log = _session_dir(session_id) / "events.jsonl"
    with log.open("a") as handle:
        handle.write('{"v": 1, "type": "tool_call_fin')  # the crash came mid-write
    with log.open("r+") as handle:
        lines = handle.read().splitlines()
    lines.insert(2, json.dumps({"v": 2, "type": "hologram", "ts": "2030-01-01T00:00:00Z"}))
    log.write_text("\n".join(lines))
    server.add(Reply(calls=[Call("complete", {"summary": "fine"})]))
    resumed = agentcli("resume", session_id, cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "incomplete" in resumed.stderr and "hologram" in resumed.stderr


def test_ctrl_c_pauses_cleanly_and_resume_continues(workspace: Path, server: OpenAIServer) -> None:
    sleep = f"sleep 30.{uuid.uuid4().int % 10**6:06d}"  # this test's command, told apart from others'
    server.add(Reply(calls=[Call("bash", {"command": f"{sleep}; touch too-late"})]))
    proc = _start(["run", "wait", *_model(server), "--yes", "-o", "jsonl"], workspace)
    seen = _read_until(proc, "tool_call_started")
    eventually_sync(lambda: processes_with(sleep), what="the command to run")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, err
    stream = seen + [json.loads(line) for line in out.splitlines()]
    assert stream[-1]["type"] == "turn_ended" and stream[-1]["reason"] == "interrupted with Ctrl-C"
    finished = [e for e in stream if e["type"] == "tool_call_finished"]
    assert finished[0]["interrupted"] is True
    assert not (workspace / "too-late").exists()
    server.add(Reply(calls=[Call("complete", {"summary": "continued"})]))
    resumed = agentcli("resume", str(seen[0]["session_id"]), cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr


def test_a_demo_stopped_before_it_completes_keeps_its_folder_for_resume(tmp_path: Path) -> None:
    proc = _start(["demo", "--delay", "0.2", "-o", "jsonl"], tmp_path)
    seen = _read_until(proc, "text_delta")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, err
    kept = Path(err.split("Demo files kept in ", 1)[1].split()[0])
    assert (kept / "textstats.py").is_file(), "the folder the resume hint needs"
    meta = json.loads((_session_dir(str(seen[0]["session_id"])) / "meta.json").read_text())
    assert Path(meta["workspace"]) == kept
    assert all(json.loads(line) for line in out.splitlines()), "stdout stays JSON lines"
    try:
        _resumed_demo_asks_nothing(str(seen[0]["session_id"]))
    finally:
        shutil.rmtree(kept)


def _resumed_demo_asks_nothing(session_id: str) -> None:
    """As `agentcli resume ID --headless` sets the session up (in-process: the replay's pace is
    the test's to choose), the demo plays on to its end without asking for approval, as it did."""
    import asyncio

    from agentcli.cli.common import find_session, load_settings
    from agentcli.events import PermissionRequested
    from agentcli.session.factory import resume_session, resume_settings_overrides

    entry = find_session(session_id)
    settings = load_settings(Path(entry.meta.workspace), resume_settings_overrides(entry, {}))
    session = resume_session(entry, settings, default_permission_mode="edits", replay_delay_s=0)
    asked: list[PermissionRequested] = []
    session.subscribe(lambda event: asked.append(event) if isinstance(event, PermissionRequested) else None)

    async def play() -> str:
        await session.respond(None)
        return (await session.wait_turn()).outcome

    try:
        assert asyncio.run(play()) == "completed" and not asked, [a.summary for a in asked]
    finally:
        session.close()
    assert "test_punctuation" in (Path(entry.meta.workspace) / "test_textstats.py").read_text(), "the demo's edit ran"


def test_sessions_show_and_rm(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(text="Looking.", calls=[Call("list_files", {})]), Reply(calls=[Call("complete", {"summary": "seen"})]))
    proc = agentcli("run", "look around", *_model(server), "-o", "jsonl", cwd=workspace)
    session_id = str(events(proc.stdout)[0]["session_id"])
    shown = agentcli("sessions", "show", session_id, cwd=workspace)
    assert shown.returncode == 0 and "Looking." in shown.stdout and "▶ list_files" in shown.stdout
    everywhere = agentcli("sessions", "--all", cwd=Path("/"))
    assert session_id in everywhere.stdout
    assert agentcli("sessions", "rm", session_id, cwd=workspace).returncode == 0
    assert not _session_dir(session_id).exists()
    assert agentcli("sessions", "show", session_id, cwd=workspace).returncode == 2
