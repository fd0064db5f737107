"""Requests the Anthropic server refuses, through litellm where litellm can send them and raw otherwise.

Some rules can only be reached raw because litellm repairs the request first (it always sends
``max_tokens``, caps ``budget_tokens`` below it, merges same-role messages, adds a dummy tool when
the history has tool blocks but ``tools`` is missing); those tests also pin that repair.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import litellm
import pytest

from tests.llm_servers._litellm import ANTHROPIC_MODEL, READ_FILE, THINKING, stream
from tests.llm_servers.conftest import API_KEY
from tests.support.anthropic_server import AnthropicServer, Reply

HEADERS = {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
HELLO: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]
TOOL_CALL: dict[str, Any] = {"id": "toolu_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}}


def post(server: AnthropicServer, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(server.messages_url, json=body, headers=HEADERS if headers is None else headers, timeout=10)


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()
    assert body["type"] == "error" and body["request_id"].startswith("req_")
    return response.status_code, body["error"]["type"], body["error"]["message"]


async def send(server: AnthropicServer, messages: list[dict[str, Any]], **kwargs: Any) -> list[Any]:
    return await stream(model=ANTHROPIC_MODEL, api_base=server.base_url, api_key=API_KEY, messages=messages, **kwargs)


async def test_an_orphan_tool_result_is_rejected(anthropic_server: AnthropicServer) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "no tools here"},
        {"role": "tool", "tool_call_id": "toolu_ghost", "content": "result"},
    ]
    with pytest.raises(litellm.BadRequestError) as caught:
        await send(anthropic_server, messages, tools=[READ_FILE])
    assert (
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_ghost. Each `tool_result` "
        "block must have a corresponding `tool_use` block in the previous message."
    ) in str(caught.value)


async def test_a_tool_use_without_its_result_is_rejected(anthropic_server: AnthropicServer) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "user", "content": "never mind"},
    ]
    with pytest.raises(litellm.BadRequestError) as caught:
        await send(anthropic_server, messages, tools=[READ_FILE])
    assert (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` "
        "block must have a corresponding `tool_result` block in the next message."
    ) in str(caught.value)


async def test_litellm_adds_a_dummy_tool_when_history_has_tool_blocks_but_no_tools(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="ok"))
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "result"},
    ]
    await send(anthropic_server, messages)
    assert [tool["name"] for tool in anthropic_server.requests[0]["tools"]] == ["dummy_tool"]
    raw = {**anthropic_server.requests[0], "stream": False}
    del raw["tools"]
    assert error_of(post(anthropic_server, raw)) == (
        400, "invalid_request_error", "Requests which include `tool_use` or `tool_result` blocks must define tools.",
    )


async def test_litellm_merges_same_role_messages_so_strict_alternation_passes() -> None:
    with AnthropicServer(api_key=API_KEY, strict_alternation=True) as server:
        server.add(Reply(text="ok"))
        await send(server, [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}])
        assert server.requests[0]["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
        ]
        two_users = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
        unmerged: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": two_users}
        assert error_of(post(server, unmerged))[2] == (
            'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row'
        )


def test_missing_max_tokens_is_rejected(anthropic_server: AnthropicServer) -> None:
    response = post(anthropic_server, {"model": "claude-sonnet-4-5", "messages": HELLO})
    assert error_of(response) == (400, "invalid_request_error", "max_tokens: Field required")


def test_max_tokens_over_the_models_output_limit_is_rejected(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="hi"))
    over = post(anthropic_server, {"model": "claude-sonnet-4-5-20250929", "messages": HELLO, "max_tokens": 64_001})
    assert error_of(over) == (400, "invalid_request_error", "max_tokens: 64001 > 64000, which is the maximum allowed "
                              "number of output tokens for claude-sonnet-4-5-20250929")
    at_limit = post(anthropic_server, {"model": "claude-sonnet-4-5-20250929", "messages": HELLO, "max_tokens": 64_000})
    assert at_limit.status_code == 200


def test_whitespace_only_text_is_rejected_unless_the_message_says_something_else(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="ok"))
    use = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}]}
    tools = [{"name": "read_file", "input_schema": {"type": "object"}}]
    blank = [*HELLO, {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}, use]}, answer]
    response = post(anthropic_server, {"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": tools, "messages": blank})
    assert error_of(response) == (400, "invalid_request_error", "messages: text content blocks must contain non-whitespace text")
    spoken = [*HELLO, {"role": "assistant", "content": [{"type": "text", "text": "\n"}, {"type": "text", "text": "Reading."}, use]},
              answer]
    response = post(anthropic_server, {"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": tools, "messages": spoken})
    assert response.status_code == 200


def test_a_prompt_over_the_window_or_without_room_for_max_tokens_is_rejected() -> None:
    with AnthropicServer(context_window=1000).start() as server:
        server.add(Reply(text="hi"))
        long = [{"role": "user", "content": "word " * 1000}]
        too_long = post(server, {"model": "claude-sonnet-4-5", "messages": long, "max_tokens": 10})
        status, kind, message = error_of(too_long)
        assert (status, kind) == (400, "invalid_request_error") and re.fullmatch(r"prompt is too long: \d+ tokens > 1000 maximum", message)
        no_room = post(server, {"model": "claude-sonnet-4-5", "messages": HELLO, "max_tokens": 995})
        status, kind, message = error_of(no_room)
        assert re.fullmatch(r"input length and `max_tokens` exceed context limit: \d+ \+ 995 > 1000, decrease input "
                            r"length or `max_tokens` and try again", message)
        assert post(server, {"model": "claude-sonnet-4-5", "messages": HELLO, "max_tokens": 100}).status_code == 200


async def test_a_budget_not_below_max_tokens_is_rejected_and_litellm_passes_it_through(anthropic_server: AnthropicServer) -> None:
    message = (
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
        "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
    )
    thinking = {"type": "enabled", "budget_tokens": 2048}
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 2048, "messages": HELLO, "thinking": thinking}
    assert error_of(post(anthropic_server, body)) == (400, "invalid_request_error", message)
    small: dict[str, Any] = {**body, "max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 512}}
    assert error_of(post(anthropic_server, small))[2] == "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    # litellm sends an explicit thinking dict unchanged: no cap, the 400 comes back as BadRequestError.
    with pytest.raises(litellm.BadRequestError, match=re.escape("must be greater than `thinking.budget_tokens`")):
        await send(anthropic_server, HELLO, thinking={"type": "enabled", "budget_tokens": 2048}, max_tokens=2048)
    assert anthropic_server.requests[-1]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    # Without max_tokens it sends budget + 4096; reasoning_effort="low" becomes a 1024 budget.
    anthropic_server.add(Reply(text="ok"), Reply(text="ok"))
    await send(anthropic_server, HELLO, thinking=THINKING)
    assert anthropic_server.requests[-1]["max_tokens"] == THINKING["budget_tokens"] + 4096
    await send(anthropic_server, HELLO, reasoning_effort="low")
    assert anthropic_server.requests[-1]["thinking"] == {"type": "enabled", "budget_tokens": 1024}


def test_key_and_version_headers_are_required(anthropic_server: AnthropicServer) -> None:
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": HELLO}
    assert error_of(post(anthropic_server, body, headers={"anthropic-version": "2023-06-01"})) == (
        401, "authentication_error", "x-api-key header is required",
    )
    assert error_of(post(anthropic_server, body, headers={"x-api-key": API_KEY})) == (
        400, "invalid_request_error", "anthropic-version: header is required",
    )


def test_thinking_in_a_final_assistant_message_needs_thinking_enabled(anthropic_server: AnthropicServer) -> None:
    signer = anthropic_server.signer
    thinking = {"type": "thinking", "thinking": "t", "signature": signer.sign("t")}
    prefill = {"role": "assistant", "content": [thinking, {"type": "text", "text": "Sure"}]}
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [*HELLO, prefill]}
    assert error_of(post(anthropic_server, body))[2] == (
        "messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain "
        "`thinking`. To use thinking blocks, enable `thinking` in your request."
    )


def test_unknown_model_and_path_are_not_found() -> None:
    with AnthropicServer(models={"claude-sonnet-4-5-20250929"}) as server:
        body: dict[str, Any] = {"model": "claude-nope", "max_tokens": 10, "messages": HELLO}
        assert error_of(post(server, body)) == (404, "not_found_error", "model: claude-nope")
        response = httpx.post(f"{server.origin}/v1/v1/messages", json=body, headers=HEADERS)
        assert error_of(response) == (404, "not_found_error", "Not Found")
