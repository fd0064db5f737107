"""What litellm's ``anthropic/`` provider yields for a streamed Messages API reply.

Each test pins a chunk shape the agent's stream assembler relies on, measured against litellm 1.106.2.
"""

from __future__ import annotations

import json
from typing import Any

from tests.llm_servers._litellm import ANTHROPIC_MODEL, READ_FILE, THINKING, built, deltas, stream, text_of
from tests.llm_servers.conftest import API_KEY
from tests.support.anthropic_server import AnthropicServer, Call, Reply

HELLO: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]


async def call(server: AnthropicServer, **kwargs: Any) -> list[Any]:
    kwargs.setdefault("messages", HELLO)
    return await stream(model=ANTHROPIC_MODEL, api_base=server.base_url, api_key=API_KEY, **kwargs)


async def test_text_streams_in_fragments_and_ends_with_stop(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="Hello there, friend.", chunk_size=5))
    chunks = await call(anthropic_server)
    assert text_of(chunks) == "Hello there, friend."
    ds = deltas(chunks)
    assert ds[0] == {"content": "Hello", "role": "assistant"}  # role rides on the first text delta
    assert [c.choices[0].finish_reason for c in chunks][-1] == "stop"  # end_turn -> "stop"
    # What litellm sent: system-less Messages body, a default max_tokens, streaming, the key and version headers.
    body = anthropic_server.requests[0]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    assert body["stream"] is True and isinstance(body["max_tokens"], int)
    headers = anthropic_server.log[0].headers
    assert headers["x-api-key"] == API_KEY and headers["anthropic-version"] == "2023-06-01"
    assert anthropic_server.log[0].path == "/v1/messages"


async def test_usage_arrives_only_when_include_usage_is_asked(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="one"), Reply(text="two"))
    without = await call(anthropic_server)
    assert [c for c in without if getattr(c, "usage", None)] == []
    with_usage = await call(anthropic_server, stream_options={"include_usage": True})
    # The finish chunk and a separate last chunk with an empty delta and the usage.
    assert with_usage[-2].choices[0].finish_reason == "stop"
    last = with_usage[-1]
    assert last.choices[0].delta.model_dump(exclude_none=True) == {}
    usage = last.usage
    first = anthropic_server.requests[1]
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details.cached_tokens == 0 and usage.cache_read_input_tokens == 0
    assert first["messages"][0]["content"][0]["text"] == "hello"


async def test_two_tool_calls_in_one_reply_have_distinct_indexes(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="Reading both.", calls=[Call("read_file", {"path": "a.py"}), Call("read_file", {"path": "b.py"})]))
    chunks = await call(anthropic_server, tools=[READ_FILE])
    calls = [tc for d in deltas(chunks) for tc in d.get("tool_calls", [])]
    # Each call opens with its id and name and empty arguments, then argument fragments with only the index.
    opening = [tc for tc in calls if tc.get("id")]
    assert [(tc["index"], tc["function"]["name"], tc["function"]["arguments"]) for tc in opening] == [
        (0, "read_file", ""),
        (1, "read_file", ""),
    ]
    assert all(tc["id"].startswith("toolu_") for tc in opening)
    fragments = [tc for tc in calls if not tc.get("id")]
    assert all(set(tc) == {"function", "type", "index"} and set(tc["function"]) == {"arguments"} for tc in fragments)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"  # tool_use -> "tool_calls"
    message = built(chunks).choices[0].message
    assert [json.loads(tc.function.arguments) for tc in message.tool_calls] == [{"path": "a.py"}, {"path": "b.py"}]
    # Tools went out in Anthropic's shape: name, input_schema, type "custom".
    tool = anthropic_server.requests[0]["tools"][0]
    assert tool["name"] == "read_file" and tool["input_schema"]["required"] == ["path"] and tool["type"] == "custom"


async def test_thinking_text_and_signature_arrive_in_separate_chunks(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(thinking="Check the file.", text="Done.", chunk_size=8))
    chunks = await call(anthropic_server, thinking=THINKING, stream_options={"include_usage": True})
    assert chunks[-1].usage.completion_tokens_details.reasoning_tokens > 0
    ds = deltas(chunks)
    thinking = [d for d in ds if "thinking_blocks" in d]
    # Text pieces: reasoning_content plus a one-block thinking_blocks without a signature, mirrored in provider_specific_fields.
    assert thinking[0] == {
        "content": "",
        "role": "assistant",
        "reasoning_content": "Check th",
        "thinking_blocks": [{"type": "thinking", "thinking": "Check th"}],
        "provider_specific_fields": {"thinking_blocks": [{"type": "thinking", "thinking": "Check th"}]},
    }
    assert thinking[1]["thinking_blocks"] == [{"type": "thinking", "thinking": "e file."}]
    # The signature comes alone: empty thinking and reasoning_content "".
    signature = anthropic_server.signer.sign("Check the file.")
    assert thinking[2] == {
        "content": "",
        "reasoning_content": "",
        "thinking_blocks": [{"type": "thinking", "thinking": "", "signature": signature}],
        "provider_specific_fields": {"thinking_blocks": [{"type": "thinking", "thinking": "", "signature": signature}]},
    }
    assert "".join(d.get("reasoning_content", "") for d in ds) == "Check the file."
    # stream_chunk_builder merges the pieces into one signed block.
    message = built(chunks).choices[0].message
    assert message.thinking_blocks == [{"type": "thinking", "thinking": "Check the file.", "signature": signature}]
    assert message.reasoning_content == "Check the file." and message.content == "Done."
    assert anthropic_server.requests[0]["thinking"] == THINKING


async def test_redacted_thinking_comes_whole_in_one_chunk(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(redacted_thinking=True, text="ok"))
    chunks = await call(anthropic_server, thinking=THINKING)
    redacted = [d for d in deltas(chunks) if "thinking_blocks" in d]
    assert len(redacted) == 1
    block = redacted[0]["thinking_blocks"][0]
    assert set(block) == {"type", "data"} and block["type"] == "redacted_thinking"
    assert redacted[0]["provider_specific_fields"] == {"thinking_blocks": [block]}
    assert "reasoning_content" not in redacted[0]
    assert built(chunks).choices[0].message.thinking_blocks == [block]


async def test_max_tokens_stop_reason_becomes_length(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="cut sh", stop_reason="max_tokens"))
    chunks = await call(anthropic_server)
    assert chunks[-1].choices[0].finish_reason == "length"


async def test_non_streaming_call_gets_the_whole_message(anthropic_server: AnthropicServer) -> None:
    import litellm

    anthropic_server.add(Reply(thinking="hm", text="Whole.", calls=[Call("read_file", {"path": "x"})]))
    response = await litellm.acompletion(
        model=ANTHROPIC_MODEL, api_base=anthropic_server.base_url, api_key=API_KEY, messages=HELLO,
        tools=[READ_FILE], thinking=THINKING, num_retries=0,
    )
    message = response.choices[0].message
    assert message.content == "Whole." and message.reasoning_content == "hm"
    assert message.thinking_blocks[0]["signature"] == anthropic_server.signer.sign("hm")
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "x"}
    assert response.choices[0].finish_reason == "tool_calls"
    assert "stream" not in anthropic_server.requests[0]
