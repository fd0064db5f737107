"""What ``agentcli run`` and ``resume`` print and send, as a user reads the README: a real process
against the local OpenAI-compatible server."""

from __future__ import annotations

import json
import signal
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agentcli.session.prompt import resumed_note
from tests.e2e.test_cli import agentcli, events
from tests.support import agentcli_process
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.waiting import eventually_sync, processes_with


def _model(server: OpenAIServer) -> list[str]:
    return ["--model", "openai/test-model", "--api-base", server.base_url]


def test_escape_sequences_from_the_model_and_commands_never_reach_the_terminal(
        workspace: Path, server: OpenAIServer) -> None:
    server.add(
        Reply(text="done \x1b]0;pwned\x07 \x1b[2J", calls=[Call("bash", {"command": r"printf 'a\033[31mred\n'"})]),
        Reply(calls=[Call("complete", {"summary": "ok \x1b[32mgreen"})]),
    )
    proc = agentcli("run", "go", "--yes", *_model(server), cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # stdout is a pipe, so Rich adds no colours of its own: any ESC would be the content's.
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert r"done \x1b]0;pwned\x07 \x1b[2J" in proc.stdout
    assert r"a\x1b[31mred" in proc.stdout and r"ok \x1b[32mgreen" in proc.stdout


def test_a_double_slash_sends_the_text_with_one_slash(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("complete", {"summary": "ok"})]))
    proc = agentcli("run", "//etc/hosts is odd", *_model(server), cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert server.requests[0]["messages"][-1]["content"] == "/etc/hosts is odd"


def test_an_answer_of_an_options_number_is_that_option(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("clarify", {"question": "Which database?", "options": ["postgres", "sqlite"]})]))
    asked = agentcli("run", "set up the db", *_model(server), "-o", "jsonl", cwd=workspace)
    assert asked.returncode == 3, asked.stdout + asked.stderr
    session_id = str(events(asked.stdout)[0]["session_id"])

    server.add(Reply(calls=[Call("complete", {"summary": "sqlite it is"})]))
    answered = agentcli("resume", session_id, "--answer", " 2 ", cwd=workspace)
    assert answered.returncode == 0, answered.stdout + answered.stderr
    assert server.requests[-1]["messages"][-1]["content"] == "Answer to your question (Which database?): sqlite"


def test_one_step_and_one_second_are_singular(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("complete", {"summary": "ok"})]))
    proc = agentcli("run", "go", *_model(server), cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "· 1 step\n" in proc.stdout, proc.stdout
    now = datetime.now(UTC)
    assert "resumed 1 second after its last event" in resumed_note(now - timedelta(seconds=1.2), None)
    assert "resumed 2 minutes after" in resumed_note(now - timedelta(seconds=95), None)
    assert "resumed 2 hours after" in resumed_note(now - timedelta(hours=2), None)


def test_the_jsonl_stream_is_in_time_order_and_ends_with_the_turn(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(text="listing", calls=[Call("bash", {"command": "ls"})]))
    proc = agentcli("run", "go", *_model(server), "-o", "jsonl", cwd=workspace)  # edits mode: bash asks
    assert proc.returncode == 5, proc.stdout + proc.stderr
    stream = events(proc.stdout)
    assert stream[0]["type"] == "session_started" and stream[-1]["type"] == "turn_ended"
    assert stream[-1]["outcome"] == "approval" and stream[-1]["steps"] == 1
    stamps = [str(event["ts"]) for event in stream]
    assert stamps == sorted(stamps), [(e["type"], e["ts"]) for e in stream[-3:]]


def test_sigterm_mid_command_pauses_the_session_cleanly(workspace: Path, server: OpenAIServer) -> None:
    sleep = f"sleep 30.{uuid.uuid4().int % 10**6:06d}"
    server.add(Reply(calls=[Call("bash", {"command": f"touch started; {sleep}; touch too-late"})]))
    proc = agentcli_process.start(["run", "wait", *_model(server), "--yes", "-o", "jsonl"], cwd=workspace)
    assert proc.stdout is not None
    seen = [json.loads(proc.stdout.readline())]
    while seen[-1]["type"] != "tool_call_started":
        seen.append(json.loads(proc.stdout.readline()))
    eventually_sync(lambda: (workspace / "started").exists() and processes_with(sleep), what="the command to run")
    proc.send_signal(signal.SIGTERM)  # what `timeout` and a harness send
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, err
    stream = seen + [json.loads(line) for line in out.splitlines()]
    assert stream[-1]["type"] == "turn_ended" and stream[-1]["reason"] == "stopped by SIGTERM"
    assert [e["interrupted"] for e in stream if e["type"] == "tool_call_finished"] == [True]
    # What the command did before it was stopped has a snapshot of its own (undoable alone).
    assert [(e["reason"], [f["path"] for f in e["files"]]) for e in stream if e["type"] == "snapshot"][-1] == (
        "after bash (interrupted)", ["started"])
    eventually_sync(lambda: not processes_with(sleep), what="the command to be killed")
    assert not (workspace / "too-late").exists()
    listed = agentcli("sessions", cwd=workspace)
    assert "paused" in listed.stdout, listed.stdout


_PHASE_MODEL_WORKFLOW = """
initial = "look"
terminal = ["done"]
[[phases]]
name = "look"
tools = ["read_file", "finish_phase"]
model = "{model}"
[[phases]]
name = "done"
tools = []
[[transitions]]
from = "look"
to = "done"
tool = "finish_phase"
"""


def test_a_phase_names_a_model_string_and_it_is_the_one_called(workspace: Path, server: OpenAIServer) -> None:
    folder = workspace / ".agentcli" / "workflows"
    folder.mkdir(parents=True)
    (folder / "looker.toml").write_text(_PHASE_MODEL_WORKFLOW.format(model="openai/phase-model"))
    server.add(Reply(calls=[Call("finish_phase", {"summary": "looked"})]),
               Reply(calls=[Call("complete", {"summary": "ok"})]))
    proc = agentcli("run", "look", "-w", "looker", *_model(server), cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The phase's own model, then the default role's once the workflow reached `done`.
    assert [request["model"] for request in server.requests] == ["phase-model", "test-model"]

    (folder / "looker.toml").write_text(_PHASE_MODEL_WORKFLOW.format(model="nosuchprovider/x"))
    refused = agentcli("run", "look", "-w", "looker", "-m", "openai/test-model", cwd=workspace)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "workflow 'looker', phase 'look': " in refused.stderr and "nosuchprovider" in refused.stderr
    assert len(server.requests) == 2, "nothing sent for a model that cannot work"


def _written(marker: str) -> int:
    """Bytes written so far by the process whose command line holds ``marker``."""
    pid = processes_with(marker)[0].split(":")[0]
    io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(io["wchar"])


def test_a_flood_stopped_by_ctrl_c_leaves_no_traceback(workspace: Path, server: OpenAIServer) -> None:
    flood = f"yes {uuid.uuid4().hex}"
    server.add(Reply(calls=[Call("bash", {"command": flood})]))
    proc = agentcli_process.start(["run", "flood", *_model(server), "--yes", "-o", "jsonl"], cwd=workspace)
    eventually_sync(lambda: processes_with(flood) and _written(flood) > 200_000_000, what="a flood of output")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, err
    assert json.loads(out.splitlines()[-1])["reason"] == "interrupted with Ctrl-C"
    # The pipe left unread was closed by the garbage collector after the event loop: a traceback.
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_a_reader_that_goes_away_does_not_stop_the_agent(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(text="first line\n" * 50, calls=[Call("write_file", {"path": "done.txt", "content": "x"})]),
               Reply(calls=[Call("complete", {"summary": "ok"})]))
    proc = agentcli_process.start(["run", "go", *_model(server)], cwd=workspace)  # as `agentcli run … | head -1`
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    assert (workspace / "done.txt").read_text() == "x"


def test_an_output_that_cannot_encode_a_character_still_shows_the_run(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(text="héllo ✓", calls=[Call("complete", {"summary": "done ✓"})]))
    proc = agentcli("run", "go", *_model(server), cwd=workspace, env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The printer failed on the first "·" and was dropped: the run went on with nothing printed.
    assert r"completed: done \u2713" in proc.stdout and r"h\xe9llo" in proc.stdout, proc.stdout


def test_a_session_started_in_ask_mode_is_resumed_asking(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("write_file", {"path": ".envrc", "content": "x"})]))
    first = agentcli("run", "set up", "--permission-mode", "ask", *_model(server), "-o", "jsonl", cwd=workspace)
    assert first.returncode == 5, first.stdout + first.stderr
    session_id = str(events(first.stdout)[0]["session_id"])
    assert events(first.stdout)[0]["permission_mode"] == "ask"

    server.add(Reply(calls=[Call("write_file", {"path": ".github/ci.yml", "content": "x"})]),
               Reply(calls=[Call("complete", {"summary": "ok"})]))
    resumed = agentcli("resume", session_id, "--approve", "-o", "jsonl", cwd=workspace)  # no mode given
    # Resumed in the headless default (edits), the CI file was written without asking.
    assert resumed.returncode == 5, resumed.stdout + resumed.stderr
    assert events(resumed.stdout)[-1]["outcome"] == "approval"
    assert (workspace / ".envrc").exists() and not (workspace / ".github" / "ci.yml").exists()
