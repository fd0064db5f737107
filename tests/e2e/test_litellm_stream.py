"""The whole agent through litellm's real HTTP streaming path against the local server."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

from agentcli.events import (
    AssistantMessage,
    ErrorOccurred,
    RetryScheduled,
    TextDelta,
    ToolCallFinished,
    UsageReported,
)
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.config import RetrySettings
from tests.support.openai_server import Call, Fail, OpenAIServer, Reply
from tests.support.sessions import make_session


def _session(workspace: Path, server: OpenAIServer, **settings: object):
    client = LiteLLMClient(RetrySettings(attempts=3, base_delay_s=0.01))
    return make_session(workspace, client, model="openai/test-model", api_base=server.base_url, **settings)


async def test_text_and_tool_calls_split_across_chunks_with_usage(workspace: Path, server: OpenAIServer) -> None:
    server.add(
        Reply(text="I will create the file now.", calls=[Call("write_file", {"path": "hello.py", "content": "print('hello')\n"})],
              chunk_size=3, usage=(100, 20)),
        Reply(calls=[Call("bash", {"command": "python3 hello.py"})], chunk_size=2, usage=(150, 10)),
        Reply(text="Works.", calls=[Call("complete", {"summary": "hello.py prints hello"})], usage=(200, 15)),
    )
    session, rec = _session(workspace, server)
    ended = await session.run_turn("write hello.py and run it")
    assert ended.outcome == "completed" and ended.reason == "hello.py prints hello"
    assert (workspace / "hello.py").read_text() == "print('hello')\n"
    text = "".join(delta.text for delta in rec.of(TextDelta))
    assert text == "I will create the file now.Works."
    # Coalesced: fewer delta events than the 3-character chunks the server sent.
    assert len(rec.of(TextDelta)) < len("I will create the file now.") // 3
    bash = [f for f in rec.of(ToolCallFinished) if f.name == "bash"][0]
    assert bash.ok and "hello" in bash.output
    usage = rec.of(UsageReported)
    assert [(u.input_tokens, u.output_tokens) for u in usage] == [(100, 20), (150, 10), (200, 15)]
    assert usage[-1].total_input_tokens == 450 and usage[-1].total_output_tokens == 45
    assert usage[-1].cost is None  # a model litellm has no price for costs null, not 0
    # The request carried the tools and asked for usage in the stream.
    first = server.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "bash", "complete"}
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert first["messages"][0]["role"] == "system" and "complete" in first["messages"][0]["content"]
    # The assembled call went back to the model in the history, paired with its result.
    history = server.requests[1]["messages"]
    call = history[-2]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"path": "hello.py", "content": "print('hello')\n"}
    assert history[-1] == {"role": "tool", "tool_call_id": call["id"], "content": "Created hello.py (1 line)"}


async def test_429_then_success_is_retried(workspace: Path, server: OpenAIServer) -> None:
    server.add(Fail(429, "slow down"), Reply(calls=[Call("complete", {"summary": "ok"})]))
    session, rec = _session(workspace, server)
    assert (await session.run_turn("go")).outcome == "completed"
    retries = rec.of(RetryScheduled)
    assert len(retries) == 1 and retries[0].attempt == 1 and "slow down" in retries[0].error
    assert len(server.requests) == 2


async def test_retry_after_ms_and_an_http_date_retry_after_are_honoured(workspace: Path, server: OpenAIServer) -> None:
    """OpenAI's ``retry-after-ms`` wins over ``Retry-After``; a ``Retry-After`` HTTP date is read
    as the time left until it (capped at the longest delay accepted, 0.3 s here)."""
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server.add(Fail(429, "slow down", retry_after=5, retry_after_ms=120), Fail(429, "slow down", retry_after=soon),
               Reply(calls=[Call("complete", {"summary": "ok"})]))
    client = LiteLLMClient(RetrySettings(attempts=3, base_delay_s=0.01, max_delay_s=0.3))
    session, rec = make_session(workspace, client, model="openai/test-model", api_base=server.base_url)
    assert (await session.run_turn("go")).outcome == "completed"
    assert [r.delay_s for r in rec.of(RetryScheduled)] == [0.12, 0.3]


async def test_500_then_success_is_retried(workspace: Path, server: OpenAIServer) -> None:
    server.add(Fail(500), Fail(503), Reply(calls=[Call("complete", {"summary": "ok"})]))
    session, rec = _session(workspace, server)
    assert (await session.run_turn("go")).outcome == "completed"
    assert [r.attempt for r in rec.of(RetryScheduled)] == [1, 2]


async def test_exhausted_retries_pause_and_lose_nothing(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("write_file", {"path": "kept.txt", "content": "work\n"})]), Fail(500), Fail(500), Fail(500))
    session, rec = _session(workspace, server)
    ended = await session.run_turn("go")
    assert ended.outcome == "paused" and "retries exhausted" in ended.reason
    errors = rec.of(ErrorOccurred)  # for the log: it ends the turn, so the turn's end shows it
    assert [(e.kind, e.fatal) for e in errors] == [("model:server", True)] and errors[0].detail
    assert (workspace / "kept.txt").read_text() == "work\n"
    # The server recovers; resuming continues from the same conversation.
    server.add(Reply(calls=[Call("complete", {"summary": "done after outage"})]))
    await session.resume()
    assert (await session.wait_turn()).outcome == "completed"
    resumed_history = server.requests[-1]["messages"]
    assert any(m["role"] == "tool" and m["content"].startswith("Created kept.txt") for m in resumed_history)


async def test_client_errors_are_not_retried_and_end_the_turn_as_errors(workspace: Path, server: OpenAIServer) -> None:
    server.add(Fail(401, "bad key"))
    session, rec = _session(workspace, server)
    ended = await session.run_turn("go")
    assert ended.outcome == "error" and "bad key" in ended.reason
    assert len(server.requests) == 1 and rec.of(ErrorOccurred)[0].fatal


async def test_malformed_arguments_then_a_corrected_call(workspace: Path, server: OpenAIServer) -> None:
    server.add(
        Reply(calls=[Call("write_file", '{"path": "a.txt", "content": "x"')]),
        Reply(calls=[Call("write_file", {"path": "a.txt", "content": "x"})]),
        Reply(calls=[Call("complete", {"summary": "fixed my call"})]),
    )
    session, rec = _session(workspace, server)
    assert (await session.run_turn("go")).outcome == "completed"
    first, second = rec.of(ToolCallFinished)[:2]
    assert not first.ok and "not valid JSON" in first.output
    assert second.ok and (workspace / "a.txt").read_text() == "x"
    # The broken call is kept in history as a JSON object so strict providers accept it.
    broken = server.requests[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(broken) == {"_malformed_arguments": '{"path": "a.txt", "content": "x"'}


async def test_a_call_cut_short_by_the_output_limit_is_not_run_and_the_model_is_told_why(
    workspace: Path, server: OpenAIServer
) -> None:
    """``finish_reason: length`` in the middle of a call's arguments: the call was never finished,
    so it does not run (no "not valid JSON" to answer, which would only bring the same long call
    back); the model reads that its reply hit the output limit, and the next request is valid."""
    server.add(
        Reply(text="Writing the whole file.", calls=[Call("write_file", '{"path": "big.txt", "content": "aaa')],
              finish_reason="length"),
        Reply(calls=[Call("write_file", {"path": "big.txt", "content": "a"})]),
        Reply(calls=[Call("complete", {"summary": "wrote it in parts"})]),
    )
    session, rec = _session(workspace, server)
    assert (await session.run_turn("write big.txt")).outcome == "completed"
    assert not server.refused
    assert [f.name for f in rec.of(ToolCallFinished)] == ["write_file", "complete"]
    assert rec.of(AssistantMessage)[0].finish_reason == "length" and not rec.of(AssistantMessage)[0].tool_calls
    second = server.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "Writing the whole file."}
    assert second[-1]["role"] == "user" and "cut off by the output length limit" in second[-1]["content"]


async def test_a_stream_that_ends_inside_a_call_is_retried_and_said_so(workspace: Path, server: OpenAIServer) -> None:
    """No finish reason, no ``[DONE]``, a call's arguments half sent: litellm makes up ``stop``.
    The half call never runs; the call is retried, and the retry says what happened."""
    server.add(
        Reply(text="Reading.", calls=[Call("write_file", {"path": "a.txt", "content": "x"})], end_after=6),
        Reply(calls=[Call("complete", {"summary": "done on the second try"})]),
    )
    session, rec = _session(workspace, server)
    assert (await session.run_turn("go")).outcome == "completed"
    assert [r.error for r in rec.of(RetryScheduled)] == [
        "openai/test-model's reply ended in the middle of a tool call (the server stopped mid-way)"]
    assert [f.name for f in rec.of(ToolCallFinished)] == ["complete"] and not (workspace / "a.txt").exists()


async def test_stop_without_control_tool_reminds_once_then_pauses(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(text="All done I think."), Reply(text="Yes, done."))
    session, rec = _session(workspace, server)
    ended = await session.run_turn("go")
    assert ended.outcome == "paused" and ended.reason == "stopped without complete/clarify/pause"
    assert len(server.requests) == 2
    assert "complete, clarify or pause" in server.requests[1]["messages"][-1]["content"]
    assert [m.text for m in rec.of(AssistantMessage)] == ["All done I think.", "Yes, done."]


async def test_unknown_tool_and_wrong_schema_keep_the_run_going(workspace: Path, server: OpenAIServer) -> None:
    server.add(
        Reply(calls=[Call("teleport", {"to": "mars"}), Call("edit_file", {"path": "x.py"})]),
        Reply(calls=[Call("complete", {"summary": "recovered"})]),
    )
    session, rec = _session(workspace, server)
    assert (await session.run_turn("go")).outcome == "completed"
    unknown, schema = rec.of(ToolCallFinished)[:2]
    assert "unknown tool 'teleport'" in unknown.output
    assert "old_string" in schema.output and "new_string" in schema.output
