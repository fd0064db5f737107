"""``agentcli`` as a user (or the acceptance harness) runs it: a real process, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support import agentcli_process
from tests.support.openai_server import Call, OpenAIServer, Reply


def agentcli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m agentcli ARGS`` to its end (forked with agentcli imported: tests/support/agentcli_process.py)."""
    return agentcli_process.run(list(args), cwd=cwd, env=env, timeout=timeout)


def recording(path: Path, *turns: dict[str, object]) -> str:
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"replay:{path}"


def events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_run_completes_a_multi_step_task_against_an_openai_compatible_server(workspace: Path, server: OpenAIServer) -> None:
    server.add(
        Reply(text="Writing fizzbuzz.", calls=[Call("write_file", {"path": "fizzbuzz.py", "content": (
            "for i in range(1, 16):\n"
            "    print('FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else i)\n"
        )})]),
        Reply(calls=[Call("bash", {"command": "python3 fizzbuzz.py | tail -1"})]),
        Reply(text="It prints FizzBuzz at 15.", calls=[Call("complete", {"summary": "fizzbuzz.py written and run"})]),
    )
    proc = agentcli("run", "write fizzbuzz.py and run it", "--yes", "--model", "openai/test-model",
                    "--api-base", server.base_url, "--output", "jsonl", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert "FizzBuzz" in (workspace / "fizzbuzz.py").read_text()
    stream = events(proc.stdout)
    kinds = [e["type"] for e in stream]
    assert kinds[0] == "session_started" and kinds[-1] == "turn_ended"
    assert stream[-1]["outcome"] == "completed"
    bash = [e for e in stream if e["type"] == "tool_call_finished" and e["name"] == "bash"][0]
    assert bash["ok"] and "FizzBuzz" in bash["output"]
    # The session log on disk holds the same events.
    data = Path(os.environ["XDG_DATA_HOME"]) / "agentcli" / "sessions" / stream[0]["session_id"]
    logged = [json.loads(line) for line in (data / "events.jsonl").read_text().splitlines()]
    assert [e["type"] for e in logged] == kinds and all(e["v"] == 1 for e in logged)
    meta = json.loads((data / "meta.json").read_text())
    assert meta["outcome"] == "completed" and meta["title"] == "write fizzbuzz.py and run it"


def test_text_output_shows_tools_and_the_summary(workspace: Path, server: OpenAIServer) -> None:
    server.add(
        Reply(text="Checking.", calls=[Call("list_files", {})]),
        Reply(calls=[Call("complete", {"summary": "nothing to do"})], usage=(1000, 50)),
    )
    proc = agentcli("run", "check", "--model", "openai/test-model", "--api-base", server.base_url, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert "▶ list_files" in proc.stdout
    assert "completed" in proc.stdout and "nothing to do" in proc.stdout
    assert "1,012 in / 57 out · no price · " in proc.stdout  # the TUI's words, and its explanation
    assert "no price: litellm has no price for a model this session used" in proc.stdout


@pytest.mark.parametrize(
    ("turns", "extra", "code", "needle"),
    [
        ([{"tool_calls": [{"name": "clarify", "arguments": {"question": "Which port?", "options": ["80", "8080"]}}]}],
         [], 3, "Which port?"),
        ([{"tool_calls": [{"name": "list_files"}]}] * 5, ["--max-steps", "2"], 4, "step limit reached"),
        ([{"tool_calls": [{"name": "pause", "arguments": {"reason": "need a review"}}]}], [], 5, "need a review"),
        ([{"text": "done?"}, {"text": "done!"}], [], 5, "stopped without complete/clarify/pause"),
    ],
    ids=["clarify-3", "halted-4", "paused-5", "silent-stop-5"],
)
def test_exit_codes_say_how_the_run_ended(
    workspace: Path, tmp_path: Path, turns: list[dict[str, object]], extra: list[str], code: int, needle: str
) -> None:
    model = recording(tmp_path / "rec.json", *turns)
    proc = agentcli("run", "do it", "--model", model, *extra, cwd=workspace)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert needle in proc.stdout


def test_clarify_prints_the_question_and_options(workspace: Path, tmp_path: Path) -> None:
    model = recording(tmp_path / "rec.json", {"tool_calls": [{"name": "clarify", "arguments": {
        "question": "Which database?", "options": ["postgres", "sqlite"]}}]})
    proc = agentcli("run", "add storage", "--model", model, cwd=workspace)
    assert proc.returncode == 3
    assert "Which database?" in proc.stdout and "1. postgres" in proc.stdout and "2. sqlite" in proc.stdout
    assert "--answer" in proc.stdout


def test_usage_and_configuration_errors_exit_2(workspace: Path) -> None:
    assert agentcli("run", cwd=workspace).returncode == 2  # missing prompt
    assert agentcli("run", "x", "--output", "yaml", cwd=workspace).returncode == 2
    missing = agentcli("run", "x", "--cwd", str(workspace / "nope"), cwd=workspace)
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    (workspace / ".agentcli.toml").write_text("max_steps = 'lots'\n")
    bad = agentcli("run", "x", cwd=workspace)
    assert bad.returncode == 2
    assert ".agentcli.toml" in bad.stderr and "max_steps" in bad.stderr
    (workspace / ".agentcli.toml").write_text("model = 'replay:/no/such/file.json'\n")
    no_recording = agentcli("run", "x", cwd=workspace)
    assert no_recording.returncode == 2 and "/no/such/file.json" in no_recording.stderr


def test_empty_words_a_model_string_with_no_model_and_a_url_with_no_scheme_are_refused(
    workspace: Path, server: OpenAIServer
) -> None:
    from agentcli.session.log import list_sessions

    for prompt in ("", "   ", "\n\t"):
        empty = agentcli("run", prompt, cwd=workspace)
        assert empty.returncode == 2 and "the prompt is empty" in empty.stderr, empty.stderr
    nameless = agentcli("run", "go", "-m", "openai/", cwd=workspace)
    assert nameless.returncode == 2 and "'openai/' names no model" in nameless.stderr
    for base in ("127.0.0.1:8000/v1", "not a url"):
        bad = agentcli("run", "go", "-m", "openai/x", "--api-base", base, cwd=workspace)
        assert bad.returncode == 2 and "api_base" in bad.stderr and "not an http:// or https:// URL" in bad.stderr
    (workspace / ".agentcli.toml").write_text("api_base = 'localhost:11434'\n")
    configured = agentcli("run", "go", cwd=workspace)
    assert configured.returncode == 2 and ".agentcli.toml" in configured.stderr and "api_base" in configured.stderr
    (workspace / ".agentcli.toml").unlink()
    data = Path(os.environ["XDG_DATA_HOME"]) / "agentcli"
    assert not list_sessions(data, workspace), "nothing refused made a session"

    server.add(Reply(calls=[Call("clarify", {"question": "Which?"})]))
    asked = agentcli("run", "go", "-m", "openai/x", "--api-base", server.base_url, "-o", "jsonl", cwd=workspace)
    session_id = str(events(asked.stdout)[0]["session_id"])
    for args in (["--answer", " "], [" "]):
        refused = agentcli("resume", session_id, *args, cwd=workspace)
        assert refused.returncode == 2 and "is empty" in refused.stderr, refused.stderr
    assert len(server.requests) == 1, "no empty message reached the model"


def test_a_data_folder_that_cannot_be_written_is_an_error_naming_it(workspace: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {"XDG_DATA_HOME": str(blocker / "data")}
    for args in (["run", "go", "-m", "openai/x"], ["demo", "--delay", "0"]):
        proc = agentcli(*args, cwd=workspace, env=env)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "cannot write the session log" in proc.stderr and str(blocker) in proc.stderr
        assert "Traceback" not in proc.stderr


def test_model_and_api_base_come_from_the_environment(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("complete", {"summary": "env ok"})]))
    proc = agentcli("run", "go", cwd=workspace, env={"AGENTCLI_MODEL": "openai/env-model", "AGENTCLI_API_BASE": server.base_url})
    assert proc.returncode == 0, proc.stderr
    assert server.requests[0]["model"] == "env-model"


def test_demo_runs_offline_to_completion(tmp_path: Path) -> None:
    offline = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "", "AGENTCLI_API_BASE": "http://127.0.0.1:9/nothing"}
    proc = agentcli("demo", "--delay", "0", "--output", "jsonl", cwd=tmp_path, env=offline)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = [e["output"] for e in events(proc.stdout) if e["type"] == "tool_call_finished" and e["name"] == "bash"]
    assert "FAILED (failures=1)" in runs[0]  # the bug it starts from
    assert "Ran 4 tests" in runs[-1] and "\nOK" in runs[-1]  # fixed, with the new test
    assert events(proc.stdout)[-1]["outcome"] == "completed"
    text = agentcli("demo", "--delay", "0", cwd=tmp_path, env=offline)
    assert text.returncode == 0 and "▶ edit_file textstats.py" in text.stdout and "completed" in text.stdout


def test_openai_base_url_from_the_environment_needs_no_key(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("complete", {"summary": "base url from env"})]))
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": ""}
    proc = agentcli("run", "go", "--model", "openai/local-model", "--yes", cwd=workspace, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert server.requests[0]["model"] == "local-model"
