"""How Anthropic failures surface from litellm: the exception class and status the agent classifies on.

Measured with litellm 1.106.2, retries off (``num_retries=0``).
"""

from __future__ import annotations

from typing import Any

import litellm
import pytest
from litellm.exceptions import MidStreamFallbackError  # not exported at the top level

from tests.llm_servers._litellm import ANTHROPIC_MODEL, READ_FILE, deltas, stream
from tests.llm_servers.conftest import API_KEY
from tests.support.anthropic_server import AnthropicServer, Call, Empty, Fail, Reply, StreamError

HELLO: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]


async def call(server: AnthropicServer, api_key: str = API_KEY, api_base: str | None = None) -> list[Any]:
    return await stream(model=ANTHROPIC_MODEL, api_base=api_base or server.base_url, api_key=api_key, messages=HELLO)


async def test_a_wrong_key_is_authentication_error_401(anthropic_server: AnthropicServer) -> None:
    with pytest.raises(litellm.AuthenticationError) as caught:
        await call(anthropic_server, api_key="wrong")
    assert caught.value.status_code == 401
    assert str(caught.value).startswith("litellm.AuthenticationError: AnthropicException - b'{")  # the body, as bytes repr
    assert '"type": "authentication_error", "message": "invalid x-api-key"' in str(caught.value)
    assert anthropic_server.log[0].headers["x-api-key"] == "wrong"


async def test_429_is_rate_limit_error_with_retry_after_in_the_headers(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Fail(429, retry_after=7))
    with pytest.raises(litellm.RateLimitError) as caught:
        await call(anthropic_server)
    assert caught.value.status_code == 429
    headers = caught.value.litellm_response_headers  # type: ignore[attr-defined]  # set by litellm at raise time
    assert headers["retry-after"] == "7"
    assert '"type": "rate_limit_error"' in caught.value.message


async def test_529_overloaded_becomes_internal_server_error_500(anthropic_server: AnthropicServer) -> None:
    """The 529 status is lost: litellm matches "Overloaded" in the body before it looks at the status."""
    anthropic_server.add(Fail(529))
    with pytest.raises(litellm.InternalServerError) as caught:
        await call(anthropic_server)
    assert caught.value.status_code == 500 and caught.value.response.status_code == 500
    assert caught.value.message.startswith("litellm.InternalServerError: AnthropicError - ")
    assert '"type": "overloaded_error", "message": "Overloaded"' in caught.value.message
    assert anthropic_server.responses()[0].status == 529


async def test_500_and_503_keep_their_status(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Fail(500), Fail(503, "Service unavailable", "api_error"))
    with pytest.raises(litellm.InternalServerError) as first:
        await call(anthropic_server)
    with pytest.raises(litellm.ServiceUnavailableError) as second:
        await call(anthropic_server)
    assert (first.value.status_code, second.value.status_code) == (500, 503)


async def test_a_prompt_too_long_400_is_context_window_exceeded(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Fail(400, "prompt is too long: 215000 tokens > 200000 maximum"))
    with pytest.raises(litellm.ContextWindowExceededError) as caught:
        await call(anthropic_server)
    assert caught.value.status_code == 400
    assert isinstance(caught.value, litellm.BadRequestError)  # a subclass: catch it first


async def test_a_stream_cut_mid_way_is_mid_stream_fallback_error(anthropic_server: AnthropicServer) -> None:
    # Events: message_start, ping, content_block_start, one "hello" delta, then the connection drops.
    anthropic_server.add(Reply(text="hello world", chunk_size=5, cut_after=4))
    with pytest.raises(MidStreamFallbackError) as caught:
        await call(anthropic_server)
    error = caught.value
    assert isinstance(error, litellm.ServiceUnavailableError) and error.status_code == 500
    assert error.generated_content == "hello" and error.is_pre_first_chunk is False
    assert isinstance(error.original_exception, litellm.APIConnectionError)
    assert "Response payload is not completed" in error.message


async def test_a_cut_before_any_content_says_so(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="hello", cut_after=1))
    with pytest.raises(MidStreamFallbackError) as caught:
        await call(anthropic_server)
    assert caught.value.is_pre_first_chunk is True and caught.value.generated_content == ""


async def test_an_error_event_inside_the_stream_is_mid_stream_fallback_error(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(text="hello world", chunk_size=5, stream_error=StreamError(after_events=4)))
    with pytest.raises(MidStreamFallbackError) as caught:
        await call(anthropic_server)
    assert isinstance(caught.value.original_exception, litellm.InternalServerError)
    assert caught.value.message == "litellm.MidStreamFallbackError: litellm.InternalServerError: AnthropicError - Overloaded"
    assert caught.value.generated_content == "hello"


async def test_a_stream_that_ends_empty_looks_like_an_empty_stop(anthropic_server: AnthropicServer) -> None:
    """No events at all, not even message_stop: litellm raises nothing and makes up one chunk with
    finish_reason "stop" and an empty delta, so the agent must itself notice a reply with no content."""
    anthropic_server.add(Empty())
    chunks = await call(anthropic_server)
    assert len(chunks) == 1
    assert chunks[0].choices[0].finish_reason == "stop"
    assert chunks[0].choices[0].delta.model_dump(exclude_none=True) == {}


async def test_a_stream_ended_cleanly_before_message_stop_looks_like_a_stop(anthropic_server: AnthropicServer) -> None:
    """The HTTP body ends normally mid-message (no message_delta, no message_stop): no exception,
    and litellm makes up finish_reason "stop", even in the middle of a tool call's arguments."""
    # message_start, ping, content_block_start, "" and two argument fragments, then the body ends.
    anthropic_server.add(Reply(calls=[Call("read_file", {"path": "abcdef"})], chunk_size=5, end_after=6))
    chunks = await stream(model=ANTHROPIC_MODEL, api_base=anthropic_server.base_url, api_key=API_KEY, messages=HELLO,
                          tools=[READ_FILE], stream_options={"include_usage": True})
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["stop"]
    arguments = "".join(tc["function"]["arguments"] for d in deltas(chunks) for tc in d.get("tool_calls", []))
    assert arguments == '{"pat' + 'h": "'  # truncated JSON, yet "stop"
    assert chunks[-1].usage.prompt_tokens > 0  # usage from message_start; output tokens are litellm's guess


@pytest.mark.parametrize(
    ("suffix", "path", "status"),
    [
        ("", "/v1/messages", 200),
        ("/v1/messages", "/v1/messages", 200),
        ("/v1", "/v1/v1/messages", 404),
        ("/v1/", "/v1//v1/messages", 404),
    ],
)
async def test_api_base_is_the_origin_litellm_appends_v1_messages(suffix: str, path: str, status: int) -> None:
    with AnthropicServer() as server:
        server.add(Reply(text="ok"))
        if status == 200:
            await call(server, api_base=server.origin + suffix)
        else:
            with pytest.raises(litellm.NotFoundError):
                await call(server, api_base=server.origin + suffix)
        assert [(entry.path, entry.status) for entry in server.log] == [(path, status)]
