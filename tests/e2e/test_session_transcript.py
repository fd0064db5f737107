"""``agentcli sessions show``: the transcript read back from the log has the user's words in it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_cli import agentcli, events
from tests.e2e.test_resume import _model
from tests.support.openai_server import Call, OpenAIServer, Reply


def test_show_has_the_task_the_answer_and_the_guidance(workspace: Path, server: OpenAIServer) -> None:
    (workspace / "notes.md").write_text("say hello politely\n")
    server.add(Reply(text="Reading your notes.", calls=[Call("clarify", {"question": "Which greeting?"})]))
    first = agentcli("run", "write a greeting as @notes.md says", *_model(server), "-o", "jsonl", cwd=workspace)
    assert first.returncode == 3, first.stderr
    session_id = str(events(first.stdout)[0]["session_id"])
    server.add(Reply(calls=[Call("pause", {"reason": "want a review"})]))
    answered = agentcli("resume", session_id, "--answer", "hello there", cwd=workspace)
    assert answered.returncode == 5, answered.stdout + answered.stderr
    assert "› " not in answered.stdout, "a live run does not echo what the user just typed"
    server.add(Reply(calls=[Call("complete", {"summary": "greeted"})]))
    guided = agentcli("resume", session_id, "add an exclamation mark\nand keep it short", cwd=workspace)
    assert guided.returncode == 0, guided.stdout + guided.stderr

    shown = agentcli("sessions", "show", session_id, cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    task = lines.index("› write a greeting as @notes.md says")
    assert lines[task + 1] == "  attached: notes.md"
    said = next(i for i, line in enumerate(lines) if "Reading your notes." in line)
    answer = lines.index("› hello there")
    guidance = lines.index("› add an exclamation mark")
    assert lines[guidance + 1] == "  and keep it short"
    assert task < said < answer < guidance, shown.stdout
    assert "say hello politely" not in shown.stdout, "attachments are named, not printed"
    assert "continue with" not in shown.stdout, "the session completed: no earlier turn's hint is current"

    server.add(Reply(calls=[Call("pause", {"reason": "again"})]))
    assert agentcli("resume", session_id, "one more thing", cwd=workspace).returncode == 5
    paused = agentcli("sessions", "show", session_id, cwd=workspace).stdout
    assert paused.count("continue with") == 1 and paused.rstrip().endswith(f"continue with: agentcli resume {session_id}")
