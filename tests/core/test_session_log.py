"""The session log on disk, and rebuilding a session from it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from agentcli.config import Settings
from agentcli.events import AssistantMessage, ToolCallFinished, ToolCallRequest, ToolCallStarted, UserMessage, event_to_json
from agentcli.secrets import Redactor
from agentcli.session.factory import new_session, resume_session
from agentcli.session.log import SessionLogWarning, find_session, list_sessions, read_events, status
from agentcli.session.resume import rebuild
from tests.support.sessions import replay

SECRET = "sk-live-abcdefghijklmnop1234"


async def test_secrets_never_reach_the_log(workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("MY_SERVICE_TOKEN", 'tok"en-with\\quote')
    client = replay(
        ("", [("bash", {"command": "echo key=$OPENAI_API_KEY; echo tok=$MY_SERVICE_TOKEN"})]),
        ("", [("complete", {"summary": f"used {SECRET}"})]),
    )
    data = isolated_dirs / "data" / "agentcli"
    session = new_session(workspace, Settings(), model_client=client, data_dir=data, default_permission_mode="all")
    await session.run_turn(f"my key is {SECRET}, use it")
    session.close()
    directory = data / "sessions" / session.id
    raw = (directory / "events.jsonl").read_text() + (directory / "meta.json").read_text()
    assert SECRET not in raw and 'tok\\"en-with' not in raw and "tok\"en-with" not in raw
    assert "[redacted:OPENAI_API_KEY]" in raw and "[redacted:MY_SERVICE_TOKEN]" in raw


def test_an_event_holding_bytes_that_are_not_utf8_is_logged_with_them_escaped(tmp_path: Path) -> None:
    from agentcli.session.log import SessionLog

    log = SessionLog.create(tmp_path, "0123456789ab", tmp_path)
    log(ToolCallFinished(call_id="a", name="bash", ok=True, output="caf\udce9", duration_s=0))
    log(UserMessage(text="a lone \ud800"))
    log.close()
    loaded = list(read_events(tmp_path / "sessions" / "0123456789ab"))
    assert [e.type for e in loaded] == ["tool_call_finished", "user_message"]
    assert loaded[0].output == "caf\\xe9"  # type: ignore[attr-defined]
    assert loaded[1].text == "a lone \\ud800"  # type: ignore[attr-defined]


def test_redactor_ignores_short_and_non_secret_values() -> None:
    redact = Redactor({"PATH": "/usr/bin:/bin", "DEBUG_KEY": "1", "API_KEY": "abcdefgh12"})
    assert redact("/usr/bin:/bin and 1 and abcdefgh12") == "/usr/bin:/bin and 1 and [redacted:API_KEY]"


async def test_log_lines_meta_and_listing(workspace: Path, isolated_dirs: Path) -> None:
    data = isolated_dirs / "data" / "agentcli"
    session = new_session(workspace, Settings(), model_client=replay(("hi", [("complete", {"summary": "s"})])), data_dir=data)
    await session.run_turn("  do   the\nthing  ")
    session.close()
    lines = (data / "sessions" / session.id / "events.jsonl").read_text().splitlines()
    assert all(json.loads(line)["v"] == 1 for line in lines)
    [entry] = list_sessions(data, workspace)
    assert entry.meta.title == "do the thing" and entry.meta.outcome == "completed" and status(entry.meta) == "completed"
    assert entry.meta.steps == 1 and entry.meta.tool_calls == 1 and entry.meta.pid is None
    assert list_sessions(data, workspace / "elsewhere") == []
    assert find_session(data, session.id[:5]).meta.id == session.id


def test_torn_and_unknown_lines_are_skipped_with_warnings(tmp_path: Path) -> None:
    good = event_to_json(UserMessage(text="hello"))
    (tmp_path / "events.jsonl").write_text(
        "\n".join([good, json.dumps({"v": 9, "type": "teleported"}), good, '{"type": "user_mess'])
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = list(read_events(tmp_path))
    assert [e.type for e in loaded] == ["user_message", "user_message"]
    messages = [str(w.message) for w in caught if issubclass(w.category, SessionLogWarning)]
    assert any("teleported" in m for m in messages) and any("last line is incomplete" in m for m in messages)


def test_rebuild_pairs_interrupted_calls_and_keeps_streamed_text() -> None:
    calls = [ToolCallRequest(id="a", name="bash", arguments="{}"), ToolCallRequest(id="b", name="read_file", arguments="{}")]
    events = [
        UserMessage(text="go"),
        AssistantMessage(text="", tool_calls=calls),
        ToolCallStarted(call_id="a", name="bash", arguments="{}"),
    ]
    state = rebuild(events)
    tools = [m for m in state.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["a", "b"]
    assert "Interrupted" in tools[0]["content"] and "Not run" in tools[1]["content"]
    assert state.interrupted == "a tool call"
    finished = ToolCallFinished(call_id="a", name="bash", ok=True, output="done", duration_s=1)
    from agentcli.events import TextDelta

    mid_stream = rebuild([*events, finished, ToolCallFinished(call_id="b", name="read_file", ok=True, output="x",
                                                               duration_s=0), TextDelta(text="Half a sen")])
    assert mid_stream.messages[-1] == {"role": "assistant", "content": "Half a sen"}
    assert mid_stream.interrupted == "a reply"


async def test_the_log_keeps_the_queue_until_a_step_boundary_delivers_it(workspace: Path, isolated_dirs: Path) -> None:
    data = isolated_dirs / "data" / "agentcli"
    session = new_session(workspace, Settings(), data_dir=data, model_client=replay(
        ("Reading.", [("list_files", {})]), ("", [("complete", {"summary": "done"})])))
    session.queue("also the README", attached="README.md: hello", files=["README.md"])
    session.queue("and the tests")
    await session.run_turn("look around")
    session.close()
    events = list(read_events(find_session(data, session.id).directory))
    delivered = [i for i, e in enumerate(events) if isinstance(e, UserMessage) and e.queued]
    assert [events[i].text for i in delivered] == ["also the README", "and the tests"]  # type: ignore[attr-defined]
    assert rebuild(events).queued == []
    before = rebuild(events[:delivered[0]]).queued
    assert [(m.text, m.attached, m.files) for m in before] == [("also the README", "README.md: hello", ["README.md"]),
                                                               ("and the tests", "", [])]
    assert [m.text for m in rebuild(events[:delivered[1]]).queued] == ["and the tests"], "delivered oldest first"


async def test_a_queue_sent_after_the_turn_ended_is_logged_once_sent(workspace: Path, isolated_dirs: Path) -> None:
    from agentcli.events import QueueChanged
    from agentcli.session import SessionStateError

    data = isolated_dirs / "data" / "agentcli"
    client = replay(("", [("complete", {"summary": "first"})]), ("", [("complete", {"summary": "second"})]))
    session = new_session(workspace, Settings(), model_client=client, data_dir=data)
    await session.run_turn("start")
    session.queue("also the README", attached="README.md: hello", files=["README.md"])
    session.queue("and the tests")
    assert await session.send_queued()
    assert (await session.wait_turn()).reason == "second"
    assert session.queued == [] and not await session.send_queued(), "nothing left to send"
    session.close()
    events = list(read_events(find_session(data, session.id).directory))
    sent = next(i for i, e in enumerate(events) if isinstance(e, UserMessage) and e.text.startswith("also"))
    message = events[sent]
    assert isinstance(message, UserMessage) and not message.queued
    assert (message.text, message.attached, message.files) == (
        "also the README\n\nand the tests", "README.md: hello", ["README.md"])
    cleared = next(i for i, e in enumerate(events) if isinstance(e, QueueChanged) and not e.messages)
    assert cleared > sent, "the queue is logged empty only once its message is in the log"
    assert [m.text for m in rebuild(events[:sent]).queued] == ["also the README", "and the tests"], "not yet sent"
    assert rebuild(events[:sent + 1]).queued == [], "a log cut before the queue's change: sent, not sent again"
    assert rebuild(events).queued == []

    # Refused (a call waits for approval): the messages stay queued, in order, and in the log.
    waiting = new_session(workspace, Settings(), data_dir=data, default_permission_mode="ask",
                          model_client=replay(("", [("bash", {"command": "true"})])))
    assert (await waiting.run_turn("run it")).outcome == "approval"
    waiting.queue("one")
    waiting.queue("two")
    with pytest.raises(SessionStateError):
        await waiting.send_queued()
    assert waiting.queued == ["one", "two"]
    waiting.close()
    logged = rebuild(read_events(find_session(data, waiting.id).directory)).queued
    assert [m.text for m in logged] == ["one", "two"]


def test_a_queue_sent_whole_as_an_answer_reads_as_delivered() -> None:
    from agentcli.events import ClarificationAnswered, QueueChanged, QueuedMessage

    queue = QueueChanged(messages=[QueuedMessage("use tabs", "a.txt: x", ["a.txt"]), QueuedMessage("and spaces")])
    answer = ClarificationAnswered(call_id="c", question="tabs?", answer="use tabs\n\nand spaces\n\na.txt: x")
    assert rebuild([UserMessage(text="go"), queue, answer]).queued == []
    other = ClarificationAnswered(call_id="c", question="tabs?", answer="spaces")
    assert [m.text for m in rebuild([UserMessage(text="go"), queue, other]).queued] == ["use tabs", "and spaces"]


async def test_resume_rebuilds_without_rerunning_anything(workspace: Path, isolated_dirs: Path) -> None:
    data = isolated_dirs / "data" / "agentcli"
    counter = workspace / "runs.txt"
    client = replay(
        ("", [("bash", {"command": f"echo run >> {counter}"})]),
        ("", [("pause", {"reason": "check"})]),
        ("", [("complete", {"summary": "after resume"})]),
    )
    first = new_session(workspace, Settings(), model_client=client, data_dir=data, default_permission_mode="all")
    assert (await first.run_turn("go")).outcome == "paused"
    first.close()
    entry = find_session(data, first.id)
    client.position = 0  # resume_session must move a replay past the turns already played
    second = resume_session(entry, Settings(), model_client=client)
    assert second.view.control == "paused"
    assert client.position == 2
    await second.resume()
    assert (await second.wait_turn()).reason == "after resume"
    assert counter.read_text() == "run\n"  # the bash call was not re-run
    roles = [m["role"] for m in second.turn.messages]
    assert roles[:5] == ["user", "assistant", "tool", "assistant", "tool"]


async def test_a_model_switch_is_kept_when_the_session_is_resumed(workspace: Path, isolated_dirs: Path) -> None:
    from agentcli.config import load_settings
    from agentcli.describe import describe
    from agentcli.events import ModelChanged
    from agentcli.session.factory import resume_settings_overrides

    data = isolated_dirs / "data" / "agentcli"
    session = new_session(workspace, Settings(model="openai/gpt-4o-mini"),
                          model_client=replay(("hi", [("complete", {"summary": "s"})])), data_dir=data)
    session.set_model("openai/gpt-4.1")
    session.set_model("anthropic/claude-sonnet-4-5", "plan")
    session.close()
    entry = find_session(data, session.id)
    assert entry.meta.model == "openai/gpt-4.1" and entry.meta.models == {"plan": "anthropic/claude-sonnet-4-5"}
    switches = [e for e in read_events(entry.directory) if isinstance(e, ModelChanged)]
    assert [(e.role, e.model) for e in switches] == [("default", "openai/gpt-4.1"),
                                                      ("plan", "anthropic/claude-sonnet-4-5")]
    description = describe(switches[1])
    assert description is not None and "plan: anthropic/claude-sonnet-4-5" in description.text

    kept = load_settings(workspace, overrides=resume_settings_overrides(entry, {"model": None}))
    assert kept.model == "openai/gpt-4.1" and kept.models.plan == "anthropic/claude-sonnet-4-5"
    flagged = load_settings(workspace, overrides=resume_settings_overrides(entry, {"model": "ollama/qwen3"}))
    assert flagged.model == "ollama/qwen3", "a --model flag on resume still wins"
    assert flagged.models.plan == "anthropic/claude-sonnet-4-5"
    resumed = resume_session(entry, kept, model_client=replay())
    assert resumed.settings.model_for("plan") == "anthropic/claude-sonnet-4-5"
    resumed.close()
