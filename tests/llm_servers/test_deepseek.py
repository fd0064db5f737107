"""DeepSeek's thinking mode through litellm's real ``deepseek/`` code path: a reply that called
tools goes back with its ``reasoning_content`` in every later request, across turns and a resume;
the test server refuses a request without it, as DeepSeek's API does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentcli.config import ModelRoles, ReasoningRoles, RetrySettings, Settings
from agentcli.events import AssistantMessage
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.session.factory import new_session, resume_session
from agentcli.session.log import list_sessions
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.sessions import Recorder

DEEPSEEK = "deepseek/deepseek-v4-pro"
FAST_RETRY = RetrySettings(attempts=2, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture(autouse=True)
def deepseek_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key")


def _assistants(body: dict[str, object]) -> list[dict[str, object]]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [m for m in messages if m["role"] == "assistant"]


async def test_reasoning_of_replies_that_called_tools_goes_back_across_turns_and_a_resume(
    workspace: Path, isolated_dirs: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    with OpenAIServer(provider="deepseek").start() as server:
        server.add(Reply(reasoning="I should read a.txt first.", calls=[Call("read_file", {"path": "a.txt"})]),
                   Reply(reasoning="It says alpha.", text="It says alpha.",
                         calls=[Call("complete", {"summary": "read it"})]))
        settings = Settings(model=DEEPSEEK, api_base=server.base_url, retry=FAST_RETRY)
        first = new_session(workspace, settings, model_client=LiteLLMClient(settings.retry))
        recorder = Recorder()
        first.subscribe(recorder)
        assert (await asyncio.wait_for(first.run_turn("read a.txt"), 30)).outcome == "completed"
        assert not server.refused
        # Within the turn: the call's reasoning went back with it.
        assert [m.get("reasoning_content") for m in _assistants(server.requests[1])] == ["I should read a.txt first."]
        assert [m.reasoning_returned for m in recorder.of(AssistantMessage)] == [True, True]
        first.close()  # the process ends: the next one rebuilds the conversation from the log

        server.add(Reply(reasoning="Nothing more to read.", calls=[Call("complete", {"summary": "still alpha"})]))
        entry = list_sessions(isolated_dirs / "data" / "agentcli", workspace)[0]
        second = resume_session(entry, settings, model_client=LiteLLMClient(settings.retry))
        assert (await asyncio.wait_for(second.run_turn("and again?"), 30)).outcome == "completed"
        second.close()
        assert not server.refused, server.refused
        # In a later turn too, after a resume: DeepSeek wants it in every later request.
        assert [m.get("reasoning_content") for m in _assistants(server.requests[2])] == [
            "I should read a.txt first.", "It says alpha."]


async def test_a_reply_without_kept_reasoning_goes_to_deepseek_with_a_placeholder(
    workspace: Path, isolated_dirs: Path
) -> None:
    """A session whose earlier calls were made by another model (nothing kept for them), resumed
    with DeepSeek: the request goes, rather than a 400 for every later call."""
    (workspace / "a.txt").write_text("alpha\n")
    with OpenAIServer().start() as openai, OpenAIServer(provider="deepseek").start() as deepseek:
        # The other model reasons too: what it said is no field of OpenAI's, and not kept.
        openai.add(Reply(reasoning="Read it.", calls=[Call("read_file", {"path": "a.txt"})]),
                   Reply(calls=[Call("pause", {"reason": "switching"})]))
        settings = Settings(model="openai/test-model", api_base=openai.base_url, retry=FAST_RETRY)
        first = new_session(workspace, settings, model_client=LiteLLMClient(settings.retry))
        assert (await asyncio.wait_for(first.run_turn("read a.txt"), 30)).outcome == "paused"
        first.close()
        assert not openai.refused, openai.refused
        deepseek.add(Reply(reasoning="Done.", calls=[Call("complete", {"summary": "alpha"})]))
        other = Settings(model=DEEPSEEK, api_base=deepseek.base_url, retry=FAST_RETRY)
        entry = list_sessions(isolated_dirs / "data" / "agentcli", workspace)[0]
        second = resume_session(entry, other, model_client=LiteLLMClient(other.retry))
        await second.resume("go on")
        assert (await asyncio.wait_for(second.wait_turn(), 30)).outcome == "completed"
        second.close()
        assert not deepseek.refused, deepseek.refused
        assert [m.get("reasoning_content") for m in _assistants(deepseek.requests[0])] == [" ", " "]


def test_the_server_refuses_a_follow_up_without_the_reasoning_as_deepseek_does() -> None:
    from tests.support.openai_rules import check_chat_request

    call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    body = {"model": "deepseek-v4-pro", "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "alpha"}]}
    refused = check_chat_request(body, "deepseek")
    assert refused is not None and "reasoning_content" in refused.message
    assert check_chat_request({**body, "thinking": {"type": "disabled"}}, "deepseek") is None
    assert check_chat_request({**body, "model": "deepseek-chat"}, "deepseek") is None
    body["messages"][1]["reasoning_content"] = "Read it."  # type: ignore[index]
    assert check_chat_request(body, "deepseek") is None
    assert check_chat_request(body) is not None  # OpenAI's schema has no such field


async def test_a_reasoning_setting_holds_after_the_first_tool_call(workspace: Path) -> None:
    """Anthropic's rule (a tool use made without signed thinking goes on without it) is not
    DeepSeek's: its replies carry no signed blocks, and the setting was dropped after one call."""
    (workspace / "a.txt").write_text("alpha\n")
    with OpenAIServer(provider="deepseek").start() as server:
        server.add(Reply(reasoning="Read it.", calls=[Call("read_file", {"path": "a.txt"})]),
                   Reply(reasoning="Done.", calls=[Call("complete", {"summary": "alpha"})]))
        settings = Settings(model=DEEPSEEK, api_base=server.base_url, retry=FAST_RETRY,
                            models=ModelRoles(reasoning=ReasoningRoles(default="high")))
        session = new_session(workspace, settings, model_client=LiteLLMClient(settings.retry))
        assert (await asyncio.wait_for(session.run_turn("read a.txt"), 30)).outcome == "completed"
        session.close()
        assert not server.refused, server.refused
        assert [body.get("thinking") for body in server.requests] == [{"type": "enabled"}] * 2
        assert _assistants(server.requests[1])[0]["reasoning_content"] == "Read it."
