"""`agentcli resume`: the user's words go where the session's view says it waits; flags that do
not fit what it waits for exit 2 naming the flag to use."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentcli.cli import app

runner = CliRunner()


def _recording(path: Path, *turns: dict[str, object]) -> str:
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"replay:{path}"


def _call(name: str, **arguments: object) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _start(workspace: Path, model: str) -> tuple[int, str]:
    result = runner.invoke(app, ["run", "go", "--model", model, "--cwd", str(workspace), "-o", "jsonl"])
    return result.exit_code, json.loads(result.stdout.splitlines()[0])["session_id"]


def test_a_question_takes_an_answer_then_the_next_turn_takes_a_task(workspace: Path, tmp_path: Path) -> None:
    model = _recording(tmp_path / "rec.json", _call("clarify", question="Which port?"),
                       _call("complete", summary="port set"), _call("complete", summary="second task done"))
    code, session_id = _start(workspace, model)
    assert code == 3

    asked = runner.invoke(app, ["resume", session_id])
    assert asked.exit_code == 2
    assert asked.stderr == "agentcli: the session waits for an answer to: Which port?\nuse --answer TEXT\n"
    approve = runner.invoke(app, ["resume", session_id, "--approve"])
    assert approve.exit_code == 2
    assert "no tool call is waiting for approval (the session is awaitingClarification)" in approve.stderr
    both = runner.invoke(app, ["resume", session_id, "--approve", "--deny"])
    assert both.exit_code == 2 and "--approve and --deny exclude each other" in both.stderr

    answered = runner.invoke(app, ["resume", session_id, "--answer", "8080", "-o", "jsonl"])
    assert answered.exit_code == 0, answered.output
    kinds = [json.loads(line)["type"] for line in answered.stdout.splitlines()]
    assert "clarification_answered" in kinds

    not_asked = runner.invoke(app, ["resume", session_id, "--answer", "8080"])
    assert not_asked.exit_code == 2
    assert "the session is not waiting for an answer (it is idle)" in not_asked.stderr
    no_task = runner.invoke(app, ["resume", session_id])
    assert no_task.exit_code == 2 and "give a PROMPT for the next task" in no_task.stderr
    next_task = runner.invoke(app, ["resume", session_id, "and now this"])
    assert next_task.exit_code == 0, next_task.output


def test_a_paused_session_goes_on_with_or_without_guidance(workspace: Path, tmp_path: Path) -> None:
    model = _recording(tmp_path / "rec.json", _call("pause", reason="check with the user"),
                       _call("pause", reason="again"), _call("complete", summary="done"))
    code, session_id = _start(workspace, model)
    assert code == 5
    assert runner.invoke(app, ["resume", session_id]).exit_code == 5
    guided = runner.invoke(app, ["resume", session_id, "use the other API", "-o", "jsonl"])
    assert guided.exit_code == 0, guided.output
    said = [json.loads(line) for line in guided.stdout.splitlines()]
    assert any(event["type"] == "user_message" and event["text"] == "use the other API" for event in said)


def test_words_given_with_a_verdict_reach_the_agent_and_an_answer_is_given_once(workspace: Path,
                                                                                 tmp_path: Path) -> None:
    model = _recording(tmp_path / "rec.json", _call("bash", command="echo hi"), _call("complete", summary="done"))
    code, session_id = _start(workspace, model)  # edits mode: the command waits for approval
    assert code == 5
    twice = runner.invoke(app, ["resume", session_id, "--answer", "a", "b"])
    assert twice.exit_code == 2 and "give the answer once" in twice.stderr

    approved = runner.invoke(app, ["resume", session_id, "--approve", "then keep the tests green", "-o", "jsonl"])
    assert approved.exit_code == 0, approved.output
    stream = [json.loads(line) for line in approved.stdout.splitlines()]
    kinds = [event["type"] for event in stream]
    said = [event for event in stream if event["type"] == "user_message"]
    assert [event["text"] for event in said] == ["then keep the tests green"], "the words were dropped unread"
    # With the call's result, before the model's next step.
    assert kinds.index("tool_call_finished") < stream.index(said[0]) < kinds.index("assistant_message")
