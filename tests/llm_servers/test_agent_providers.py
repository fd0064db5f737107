"""The agent through litellm's real provider code paths: Anthropic Messages with thinking and
prompt caching, Ollama's native chat, and an OpenAI-compatible server, each failure classified.

The servers (``tests/support``) speak each provider's wire format and refuse what the real API
refuses, so a session that finishes here sent nothing the provider would have rejected.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentcli.config import ModelLimitSettings, ModelRoles, ReasoningRoles, RetrySettings, Settings
from agentcli.events import (
    AssistantMessage,
    ErrorOccurred,
    Notice,
    ReasoningDelta,
    RetryScheduled,
    ToolCallStarted,
    UsageReported,
)
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.session.factory import new_session, resume_session
from agentcli.session.log import list_sessions
from tests.llm_servers.conftest import API_KEY
from tests.support.anthropic_server import AnthropicServer, Call, Empty, Fail, Reply, StreamError
from tests.support.ollama_server import Call as OllamaCall
from tests.support.ollama_server import OllamaModel, OllamaServer
from tests.support.ollama_server import Reply as OllamaReply
from tests.support.openai_server import Call as OpenAICall
from tests.support.openai_server import OpenAIServer
from tests.support.openai_server import Reply as OpenAIReply
from tests.support.sessions import Recorder
from tests.support.sessions import litellm_session as _session

CLAUDE = "anthropic/claude-sonnet-4-5-20250929"
FAST_RETRY = RetrySettings(attempts=3, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)


def _settings(server_url: str, **fields: Any) -> Settings:
    return Settings(model=CLAUDE, api_base=server_url, retry=fields.pop("retry", FAST_RETRY), **fields)


def _ok(server: AnthropicServer) -> None:
    refused = [(r.status, r.body) for r in server.responses() if r.status != 200]
    assert not refused, refused


def _step(number: int) -> Reply:
    return Reply(thinking=f"Step {number}: look at file {number}.", text=f"Reading {number}.",
                 calls=[Call("read_file", {"path": f"f{number}.txt"})])


@pytest.fixture(autouse=True)
def files(workspace: Path) -> None:
    for number in range(1, 11):
        (workspace / f"f{number}.txt").write_text(f"file {number}\n")


async def test_thinking_with_tools_for_ten_steps_pause_restart_resume_and_finish_without_a_400(
    workspace: Path, anthropic_server: AnthropicServer, isolated_dirs: Path
) -> None:
    settings = _settings(anthropic_server.base_url, models=ModelRoles(reasoning=ReasoningRoles(default=2048)))
    anthropic_server.add(*[_step(n) for n in range(1, 7)], Reply(thinking="Stop here.", calls=[
        Call("pause", {"reason": "halfway"})]))
    first = new_session(workspace, settings, model_client=LiteLLMClient(settings.retry), default_permission_mode="all")
    rec = Recorder()
    first.subscribe(rec)
    ended = await asyncio.wait_for(first.run_turn("walk the files"), 60)
    assert ended.outcome == "paused" and ended.reason == "halfway"
    assert rec.of(ReasoningDelta) and "Step 1" in rec.of(AssistantMessage)[0].reasoning
    assert all(m.thinking_blocks and m.thinking_blocks[0].signature for m in rec.of(AssistantMessage))
    body = anthropic_server.requests[-1]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048} and body["max_tokens"] > 2048
    first.close()  # the process ends here: the next one rebuilds everything from the log

    anthropic_server.add(*[_step(n) for n in range(7, 11)], Reply(thinking="Done.", calls=[
        Call("complete", {"summary": "walked ten"})]))
    entry = list_sessions(isolated_dirs / "data" / "agentcli", workspace)[0]
    second = resume_session(entry, settings, model_client=LiteLLMClient(settings.retry), default_permission_mode="all")
    await second.resume()
    assert (await asyncio.wait_for(second.wait_turn(), 60)).outcome == "completed"
    second.close()
    _ok(anthropic_server)
    assert len(anthropic_server.requests) == 12
    # Every request after a tool use sent the previous turn's thinking back, signed.
    last = anthropic_server.requests[-1]["messages"]
    assistant = [m for m in last if m["role"] == "assistant"]
    assert all(m["content"][0]["type"] == "thinking" and m["content"][0]["signature"] for m in assistant[-4:])


async def test_a_thinking_session_resumed_with_an_openai_model_sends_no_claude_thinking_blocks(
    workspace: Path, anthropic_server: AnthropicServer, isolated_dirs: Path
) -> None:
    """The signed blocks are Claude's: an OpenAI-compatible server's schema refuses the field."""
    settings = _settings(anthropic_server.base_url, models=ModelRoles(reasoning=ReasoningRoles(default=2048)))
    anthropic_server.add(_step(1), Reply(thinking="Ask.", calls=[Call("pause", {"reason": "switching models"})]))
    first = new_session(workspace, settings, model_client=LiteLLMClient(settings.retry), default_permission_mode="all")
    assert (await asyncio.wait_for(first.run_turn("walk the files"), 30)).outcome == "paused"
    first.close()
    with OpenAIServer().start() as openai:
        openai.add(OpenAIReply(calls=[OpenAICall("complete", {"summary": "done elsewhere"})]))
        other = Settings(model="openai/test-model", api_base=openai.base_url, retry=FAST_RETRY)
        entry = list_sessions(isolated_dirs / "data" / "agentcli", workspace)[0]
        second = resume_session(entry, other, model_client=LiteLLMClient(other.retry), default_permission_mode="all")
        await second.resume("go on")
        assert (await asyncio.wait_for(second.wait_turn(), 30)).outcome == "completed"
        second.close()
        assert not openai.refused
        replies = [m for m in openai.requests[0]["messages"] if m["role"] == "assistant"]
        assert len(replies) == 2 and not any("thinking_blocks" in m for m in replies)
        assert replies[0]["content"] == "Reading 1." and replies[1]["content"] == ""


async def test_a_tool_use_made_without_thinking_is_continued_without_it(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    """Reasoning switched on while a tool use made without it is in progress (the server would
    refuse to continue it with thinking on): that one call goes without thinking, and no 400."""
    anthropic_server.add(Reply(calls=[Call("read_file", {"path": "f1.txt"})]),
                         Reply(calls=[Call("complete", {"summary": "s"})]))
    session, _ = _session(workspace, _settings(anthropic_server.base_url))
    thinking = _settings(anthropic_server.base_url, models=ModelRoles(reasoning=ReasoningRoles(default=2048)))

    def switch_reasoning_on(event: Any) -> None:
        if isinstance(event, UsageReported):
            session.turn.settings = thinking  # the next call asks for thinking

    session.subscribe(switch_reasoning_on)
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    _ok(anthropic_server)
    assert [("thinking" in body) for body in anthropic_server.requests] == [False, False]


async def test_a_thinking_budget_past_the_models_output_limit_is_lowered_to_fit_it(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    """``build = 64000`` on a model that writes at most 64,000 tokens: budget plus room for the
    answer would ask for more than the API takes (a 400 on every call); the budget gives way."""
    anthropic_server.add(Reply(thinking="Think.", calls=[Call("complete", {"summary": "s"})]))
    settings = _settings(anthropic_server.base_url, models=ModelRoles(reasoning=ReasoningRoles(default=64_000)))
    session, rec = _session(workspace, settings)
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    _ok(anthropic_server)
    body = anthropic_server.requests[0]
    assert body["max_tokens"] == 64_000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 64_000 - 4096}
    assert any("thinking budget lowered from 64,000 to 59,904" in n.text for n in rec.of(Notice))


async def test_a_configured_output_limit_is_the_ceiling_a_thinking_budget_fits_under(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    """``[models.limits]`` is there for when litellm's figure is wrong (Opus 4.1 writes 32,000 where
    litellm says 64,000): the budget fits under the configured limit, not litellm's."""
    anthropic_server.add(Reply(thinking="Think.", calls=[Call("complete", {"summary": "s"})]))
    models = ModelRoles(reasoning=ReasoningRoles(default=8000),
                        limits={CLAUDE: ModelLimitSettings(max_output_tokens=8192)})
    session, rec = _session(workspace, _settings(anthropic_server.base_url, models=models))
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    body = anthropic_server.requests[0]
    assert (body["max_tokens"], body["thinking"]["budget_tokens"]) == (8192, 8192 - 4096)
    assert any("lowered from 8,000 to 4,096" in n.text for n in rec.of(Notice))


async def test_a_reply_of_blank_text_goes_back_without_it_not_as_words_the_model_never_wrote(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    """Claude's ``"\n\n"`` before a tool call, then a reply of only a line break: the API refuses
    whitespace-only text, and litellm would put a "[System: …sanitised…]" text in its place."""
    anthropic_server.add(Reply(text="\n\n", calls=[Call("read_file", {"path": "f1.txt"})]),
                         Reply(text="\n"),
                         Reply(calls=[Call("complete", {"summary": "s"})]))
    session, _ = _session(workspace, _settings(anthropic_server.base_url))
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    _ok(anthropic_server)
    sent = anthropic_server.requests[-1]["messages"]
    assert "sanitised" not in str(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [block["type"] for block in sent[1]["content"]] == ["tool_use"]
    assert [block["type"] for block in sent[2]["content"]] == ["tool_result", "text"]  # the reminder


async def test_prompt_cache_breakpoints_and_cache_reads_over_a_session(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    anthropic_server.add(*[Reply(calls=[Call("read_file", {"path": f"f{n}.txt"})]) for n in range(1, 7)],
                         Reply(calls=[Call("complete", {"summary": "s"})]))
    session, rec = _session(workspace, _settings(anthropic_server.base_url))
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    _ok(anthropic_server)
    for body in anthropic_server.requests:
        marks = sum(1 for tool in body["tools"] if "cache_control" in tool)
        marks += sum(1 for block in body["system"] if "cache_control" in block)
        marks += sum(1 for m in body["messages"] for block in m["content"] if isinstance(block, dict)
                     and "cache_control" in block)
        assert 2 < marks <= 4
    usage = rec.of(UsageReported)
    assert usage[0].cache_read_tokens == 0 and usage[0].cache_write_tokens > 0
    assert all(u.cache_read_tokens > 0 for u in usage[1:])
    assert usage[-1].total_cache_read_tokens / usage[-1].total_input_tokens > 0.5
    assert all(u.cost is not None for u in usage)


async def test_after_a_step_of_many_parallel_calls_the_next_request_reads_all_the_previous_one_wrote(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    """Twelve calls in one reply put 24 blocks between the previous request's end and this one's: the
    API's look-back from the last two results would not reach it, and the history would be written
    to the cache again instead of read. A breakpoint where the previous request ended reads it."""
    anthropic_server.add(Reply(calls=[Call("read_file", {"path": "f1.txt"})]),
                         Reply(calls=[Call("read_file", {"path": f"f{n % 10 + 1}.txt"}) for n in range(12)]),
                         Reply(calls=[Call("complete", {"summary": "s"})]))
    session, rec = _session(workspace, _settings(anthropic_server.base_url))
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    _ok(anthropic_server)
    first, second, third = rec.of(UsageReported)
    assert second.cache_read_tokens == first.cache_read_tokens + first.cache_write_tokens
    assert third.cache_read_tokens == second.cache_read_tokens + second.cache_write_tokens


async def test_the_output_limit_is_always_sent_and_configurable(workspace: Path, anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(calls=[Call("complete", {"summary": "s"})]))
    limits = {CLAUDE: ModelLimitSettings(max_output_tokens=1234)}
    session, _ = _session(workspace, _settings(anthropic_server.base_url, models=ModelRoles(limits=limits)))
    await asyncio.wait_for(session.run_turn("go"), 30)
    assert anthropic_server.requests[0]["max_tokens"] == 1234


async def test_an_api_base_ending_in_v1_still_reaches_the_messages_endpoint(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    anthropic_server.add(Reply(calls=[Call("complete", {"summary": "s"})]))
    session, _ = _session(workspace, _settings(anthropic_server.base_url + "/v1"))
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"


@pytest.mark.parametrize(("failure", "says"), [
    (Fail(529), "anthropic is overloaded; try again shortly"),
    (Fail(500), "anthropic server error 500: Internal server error"),
    (Reply(text="hello world", chunk_size=3, cut_after=4), "reply broke off mid-stream"),
    # An overloaded_error event after the stream started: overload, not a lost connection.
    (Reply(text="hello world", chunk_size=3, stream_error=StreamError(after_events=4)),
     "anthropic is overloaded (its reply broke off mid-stream)"),
    (Empty(), "reply ended empty"),
])
async def test_transient_failures_are_retried_then_the_call_succeeds(
    failure: Any, says: str, workspace: Path, anthropic_server: AnthropicServer
) -> None:
    anthropic_server.add(failure, Reply(calls=[Call("complete", {"summary": "s"})]))
    session, rec = _session(workspace, _settings(anthropic_server.base_url))
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    assert len(rec.of(RetryScheduled)) == 1
    assert says in rec.of(RetryScheduled)[0].error


async def test_retry_after_is_honoured(workspace: Path, anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Fail(429, retry_after=0.2), Reply(calls=[Call("complete", {"summary": "s"})]))
    retry = RetrySettings(attempts=3, base_delay_s=0.01, max_delay_s=5)
    session, rec = _session(workspace, _settings(anthropic_server.base_url, retry=retry))
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    assert [r.delay_s for r in rec.of(RetryScheduled)] == [0.2]
    assert "rate limit" in rec.of(RetryScheduled)[0].error


async def test_a_rejected_key_ends_at_once_without_retries(
    workspace: Path, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
    session, rec = _session(workspace, _settings(anthropic_server.base_url))
    ended = await asyncio.wait_for(session.run_turn("go"), 30)
    assert ended.outcome == "error" and "rejected the API key" in ended.reason
    assert "from ANTHROPIC_API_KEY: check ANTHROPIC_API_KEY" in ended.reason, ended.reason
    assert not rec.of(RetryScheduled) and len(anthropic_server.requests) + len(anthropic_server.log) >= 1
    error = rec.of(ErrorOccurred)[-1]
    assert error.kind == "model:auth" and "invalid x-api-key" in (error.detail or "")
    assert "AnthropicException" not in ended.reason  # litellm's raw words stay in the log


async def test_a_missing_key_names_the_variable_and_sends_nothing(
    workspace: Path, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    session, _ = _session(workspace, _settings(anthropic_server.base_url))
    ended = await asyncio.wait_for(session.run_turn("go"), 30)
    assert ended.outcome == "error" and "ANTHROPIC_API_KEY is not set" in ended.reason
    assert not anthropic_server.log


async def test_a_context_overflow_with_nothing_to_compact_pauses_with_the_figures(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    anthropic_server.add(Fail(400, "prompt is too long: 215000 tokens > 200000 maximum"))
    session, rec = _session(workspace, _settings(anthropic_server.base_url))
    ended = await asyncio.wait_for(session.run_turn("go"), 30)
    assert ended.outcome == "paused" and "does not fit" in ended.reason and "200,000-token window" in ended.reason


async def test_a_prompt_that_leaves_no_room_for_the_output_is_an_overflow_with_the_figures(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    """Anthropic's other overflow: the prompt fits, but not with ``max_tokens`` on top."""
    refusal = ("input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000, decrease input length "
               "or `max_tokens` and try again")
    anthropic_server.add(Fail(400, refusal))
    session, rec = _session(workspace, _settings(anthropic_server.base_url))
    ended = await asyncio.wait_for(session.run_turn("go"), 30)
    assert ended.outcome == "paused" and "does not fit" in ended.reason
    assert "~190,000 tokens of a 200,000-token window" in ended.reason


async def test_the_output_room_kept_in_the_window_is_the_limit_sent_with_a_thinking_budget(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    """A 30,000-token budget raises ``max_tokens`` past the usual 32,000; Anthropic refuses a prompt
    that leaves less than that of the window, so the compaction guard must keep all of it free."""
    anthropic_server.add(Reply(thinking="Think.", calls=[Call("complete", {"summary": "s"})]))
    settings = _settings(anthropic_server.base_url, models=ModelRoles(reasoning=ReasoningRoles(default=30_000)))
    session, _ = _session(workspace, settings)
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    sent = anthropic_server.requests[0]["max_tokens"]
    assert sent == 30_000 + 4096
    assert session.turn.max_output == sent
    assert session.turn.context_budget() == min(160_000, 200_000 - sent)


async def test_a_stalled_stream_is_cut_and_retried(workspace: Path, anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="slow", delay_s=2.0), Reply(calls=[Call("complete", {"summary": "s"})]))
    retry = RetrySettings(attempts=3, base_delay_s=0.01, max_delay_s=0.05, stall_timeout_s=0.5)
    session, rec = _session(workspace, _settings(anthropic_server.base_url, retry=retry))
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    assert "sent nothing for 0.5 s" in rec.of(RetryScheduled)[0].error


async def test_ollama_chat_two_parallel_calls_stay_two(workspace: Path, ollama_server: OllamaServer) -> None:
    (workspace / "a.py").write_text("a\n")
    (workspace / "b.py").write_text("b\n")
    ollama_server.add(OllamaReply(calls=[OllamaCall("read_file", {"path": "a.py"}),
                                         OllamaCall("read_file", {"path": "b.py"})]),
                      OllamaReply(calls=[OllamaCall("complete", {"summary": "read both"})]))
    settings = Settings(model="ollama_chat/qwen3:8b", api_base=ollama_server.base_url, retry=FAST_RETRY)
    session, rec = _session(workspace, settings)
    assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
    reads = [e for e in rec.of(ToolCallStarted) if e.name == "read_file"]
    assert [e.preview for e in reads] == ["a.py", "b.py"]
    assert any(isinstance(e, Notice) and "knows no limits" in e.text for e in rec.events)  # an unknown model
    assert ollama_server.requests[0]["options"]["num_predict"] == 4096
    # Ollama's own default context is a few thousand tokens, silently truncating the rest: the
    # window the agent budgets with is asked for.
    assert ollama_server.requests[0]["options"]["num_ctx"] == 32_768


async def test_a_model_whose_server_refuses_thinking_goes_on_without_it(workspace: Path) -> None:
    """Reasoning set for every role, an Ollama model without the thinking capability: the server
    refuses ``think``; the call goes again without it, once said, and the next calls never ask."""
    models = {"llama3.1:8b": OllamaModel(family="llama", capabilities=("completion", "tools"))}
    with OllamaServer(models=models).start() as ollama:
        ollama.add(OllamaReply(calls=[OllamaCall("read_file", {"path": "f1.txt"})]),
                   OllamaReply(calls=[OllamaCall("complete", {"summary": "read it"})]))
        settings = Settings(model="ollama_chat/llama3.1:8b", api_base=ollama.base_url, retry=FAST_RETRY,
                            models=ModelRoles(reasoning=ReasoningRoles(default="medium")))
        session, rec = _session(workspace, settings)
        assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
        assert [body.get("think") for body in ollama.requests] == [True, None, None]
        said = [n.text for n in rec.of(Notice) if "does not think" in n.text]
        assert said == ["ollama_chat/llama3.1:8b does not think before answering (its server said so): the reasoning "
                        "setting is ignored for it"]
        assert not rec.of(ErrorOccurred) and not rec.of(RetryScheduled)
