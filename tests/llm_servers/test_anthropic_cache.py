"""Prompt caching through litellm: where ``cache_control`` lands in the request, and the usage it yields."""

from __future__ import annotations

from typing import Any

import litellm
import pytest

from tests.llm_servers._litellm import ANTHROPIC_MODEL, READ_FILE, stream
from tests.llm_servers.conftest import API_KEY
from agentcli.llm.cache import with_breakpoints
from tests.support.anthropic_cache import prompt_units
from tests.support.anthropic_rules import count_cache_breakpoints
from tests.support.anthropic_server import AnthropicServer, Reply

EPHEMERAL: dict[str, Any] = {"type": "ephemeral"}
SYSTEM_TEXT = "You are a careful coder. " * 40
SYSTEM: list[dict[str, Any]] = [{"role": "system", "content": [{"type": "text", "text": SYSTEM_TEXT, "cache_control": EPHEMERAL}]}]
CACHED_TOOL: dict[str, Any] = {**READ_FILE, "cache_control": EPHEMERAL}
READ_A = {"name": "read_file", "arguments": '{"path": "a"}'}


async def usage_of(server: AnthropicServer, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    server.add(Reply(text="ok"))
    chunks = await stream(
        model=ANTHROPIC_MODEL, api_base=server.base_url, api_key=API_KEY, messages=messages,
        stream_options={"include_usage": True}, **kwargs,
    )
    return chunks[-1].usage


async def test_cache_control_reaches_system_tools_and_message_blocks(anthropic_server: AnthropicServer) -> None:
    messages: list[dict[str, Any]] = [
        *SYSTEM,
        {"role": "user", "content": "plain string, marked on the message", "cache_control": EPHEMERAL},
        {"role": "assistant", "content": "reply"},
        {"role": "user", "content": [{"type": "text", "text": "marked block", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]},
    ]
    await usage_of(anthropic_server, messages, tools=[CACHED_TOOL])
    body = anthropic_server.requests[0]
    assert body["system"] == [{"type": "text", "text": SYSTEM[0]["content"][0]["text"], "cache_control": EPHEMERAL}]
    assert body["tools"][0]["cache_control"] == EPHEMERAL  # the tool's top-level key moves onto the Anthropic tool
    # A message-level cache_control on string content lands on the text block litellm makes of it.
    assert body["messages"][0]["content"] == [{"type": "text", "text": "plain string, marked on the message", "cache_control": EPHEMERAL}]
    assert body["messages"][2]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "anthropic-beta" not in anthropic_server.log[0].headers  # prompt caching needs no beta header


async def test_tool_result_cache_control_lands_on_the_tool_result_block(anthropic_server: AnthropicServer) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "toolu_1", "type": "function", "function": READ_A}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "file text", "cache_control": EPHEMERAL},
    ]
    await usage_of(anthropic_server, messages, tools=[READ_FILE])
    result = anthropic_server.requests[0]["messages"][2]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "file text", "cache_control": EPHEMERAL}


async def test_a_repeated_prefix_is_read_from_the_cache(anthropic_server: AnthropicServer) -> None:
    messages: list[dict[str, Any]] = [*SYSTEM, {"role": "user", "content": "hello"}]
    first = await usage_of(anthropic_server, messages, tools=[CACHED_TOOL])
    second = await usage_of(anthropic_server, messages, tools=[CACHED_TOOL])
    units = prompt_units(anthropic_server.requests[0])  # tool, system, user message
    written = units[0].tokens + units[1].tokens
    assert first.cache_creation_input_tokens == written and first.cache_read_input_tokens == 0
    assert second.cache_creation_input_tokens == 0 and second.cache_read_input_tokens == written
    # litellm's prompt_tokens is the whole prompt: plain input + cache writes + cache reads.
    assert first.prompt_tokens == second.prompt_tokens == sum(unit.tokens for unit in units)
    assert second.prompt_tokens_details.cached_tokens == written
    assert first.prompt_tokens_details.cache_creation_tokens == written
    assert first.prompt_tokens_details.cache_creation_token_details.ephemeral_5m_input_tokens == written
    assert second.prompt_tokens_details.text_tokens == units[2].tokens  # the uncached tail


async def test_a_moving_breakpoint_reads_the_previous_prefix(anthropic_server: AnthropicServer) -> None:
    """An agent marks the newest message each step; the API finds the last step's prefix within
    20 blocks before the new breakpoint, reads it, and writes only the new tail."""
    step1: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "first question", "cache_control": EPHEMERAL}]}]
    step2: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "first question"}]},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": [{"type": "text", "text": "second question", "cache_control": EPHEMERAL}]},
    ]
    first = await usage_of(anthropic_server, step1)
    second = await usage_of(anthropic_server, step2)
    units = prompt_units(anthropic_server.requests[1])
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens == units[0].tokens
    assert second.cache_creation_input_tokens == units[1].tokens + units[2].tokens


async def test_an_edit_before_the_breakpoint_misses_the_cache(anthropic_server: AnthropicServer) -> None:
    await usage_of(anthropic_server, [*SYSTEM, {"role": "user", "content": "hello"}])
    other_system: dict[str, Any] = {"role": "system", "content": [{**SYSTEM[0]["content"][0], "text": "Another system prompt."}]}
    edited = [other_system, {"role": "user", "content": "hello"}]
    usage = await usage_of(anthropic_server, edited)
    assert usage.cache_read_input_tokens == 0 and usage.cache_creation_input_tokens > 0


async def test_more_than_four_breakpoints_are_rejected(anthropic_server: AnthropicServer) -> None:
    messages: list[dict[str, Any]] = [
        *SYSTEM,
        {"role": "user", "content": "one", "cache_control": EPHEMERAL},
        {"role": "assistant", "content": "two", "cache_control": EPHEMERAL},
        {"role": "user", "content": "three", "cache_control": EPHEMERAL},
    ]
    with pytest.raises(litellm.BadRequestError) as caught:
        await usage_of(anthropic_server, messages, tools=[CACHED_TOOL])
    assert "A maximum of 4 blocks with cache_control may be provided. Found 5." in str(caught.value)
    assert caught.value.status_code == 400
    # Four are fine.
    await usage_of(anthropic_server, messages[:-1], tools=[CACHED_TOOL])
    assert anthropic_server.responses()[-1].status == 200


async def test_a_note_with_a_picture_keeps_its_breakpoint(anthropic_server: AnthropicServer) -> None:
    """litellm drops a message-level mark on a list of parts; ``with_breakpoints`` puts it on the
    last part instead, where litellm keeps it (the image block it builds)."""
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    note = {"role": "user", "content": [{"type": "text", "text": "the screenshot"},
                                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{pixel}"}}]}
    messages, tools = with_breakpoints([*SYSTEM, note], [READ_FILE])
    await usage_of(anthropic_server, messages, tools=tools)
    body = anthropic_server.requests[0]
    assert count_cache_breakpoints(body) == 3  # the tool, the system prompt, the note
    assert body["messages"][0]["content"][-1]["type"] == "image"
    assert body["messages"][0]["content"][-1]["cache_control"] == EPHEMERAL
