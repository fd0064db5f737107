"""What litellm's ``ollama_chat/`` provider sends to Ollama's ``/api/chat`` and yields back.

Measured against litellm 1.106.2. The headline: every streamed Ollama tool call comes out of
litellm with ``index`` 0, so an assembler keyed by index merges two calls into one.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import litellm
import pytest
from litellm.exceptions import MidStreamFallbackError

from tests.llm_servers._litellm import OLLAMA_MODEL, READ_FILE, built, deltas, stream, text_of
from tests.support.ollama_server import Call, Fail, OllamaModel, OllamaServer, Reply

HELLO: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]
TWO_CALLS = [Call("read_file", {"path": "a.py"}), Call("read_file", {"path": "b.py"})]


async def call(server: OllamaServer, model: str = OLLAMA_MODEL, **kwargs: Any) -> list[Any]:
    kwargs.setdefault("messages", HELLO)
    return await stream(model=model, api_base=server.base_url, **kwargs)


async def test_text_streams_line_by_line_with_usage_from_the_done_line(ollama_server: OllamaServer) -> None:
    ollama_server.add(Reply(text="Hello there.", chunk_size=6, usage=(26, 12)))
    chunks = await call(ollama_server, stream_options={"include_usage": True})
    assert text_of(chunks) == "Hello there."
    assert deltas(chunks)[0] == {"content": "Hello ", "role": "assistant"}
    assert chunks[-2].choices[0].finish_reason == "stop"
    usage = chunks[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (26, 12, 38)
    assert usage.prompt_tokens_details is None  # Ollama reports no cache figures
    # What litellm sent: the native body, options empty, stream on, images [] on every message.
    assert ollama_server.requests[0] == {
        "model": "qwen3:8b", "messages": [{"role": "user", "content": "hello", "images": []}], "options": {}, "stream": True,
    }


async def test_without_include_usage_there_is_no_usage_chunk(ollama_server: OllamaServer) -> None:
    ollama_server.add(Reply(text="hi"))
    chunks = await call(ollama_server)
    assert [c for c in chunks if getattr(c, "usage", None)] == []


async def test_a_missing_prompt_eval_count_makes_litellm_estimate_usage(ollama_server: OllamaServer) -> None:
    """Ollama omits a zero count (prompt fully in its KV cache); litellm then counts tokens itself."""
    ollama_server.add(Reply(text="hello", usage=(0, 3)))
    chunks = await call(ollama_server, stream_options={"include_usage": True})
    usage = chunks[-1].usage
    assert usage.completion_tokens != 3 and usage.prompt_tokens > 0  # litellm's own estimate, not the server's


async def test_two_tool_calls_streamed_one_per_line_both_get_index_0(ollama_server: OllamaServer) -> None:
    ollama_server.add(Reply(text="Reading.", calls=TWO_CALLS))
    chunks = await call(ollama_server, tools=[READ_FILE])
    calls = [tc for d in deltas(chunks) for tc in d.get("tool_calls", [])]
    assert [tc["index"] for tc in calls] == [0, 0]
    # Each arrives whole, arguments already a JSON string, with an id litellm made up (a UUID, not Ollama's call_ id).
    assert [json.loads(tc["function"]["arguments"]) for tc in calls] == [{"path": "a.py"}, {"path": "b.py"}]
    assert all(tc["function"]["name"] == "read_file" and len(tc["id"]) == 36 for tc in calls)
    assert calls[0]["id"] != calls[1]["id"]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"  # Ollama said done_reason "stop"
    # Keyed by index, the two calls collapse into one with both argument objects glued together.
    merged = built(chunks).choices[0].message.tool_calls
    assert len(merged) == 1
    assert merged[0].function.arguments == '{"path": "a.py"}{"path": "b.py"}'
    assert merged[0].id == calls[1]["id"]


async def test_the_legacy_tool_call_shape_gives_the_same_index_0() -> None:
    with OllamaServer(legacy_tool_calls=True) as server:
        server.add(Reply(calls=TWO_CALLS))
        chunks = await call(server, tools=[READ_FILE])
        assert [tc["index"] for d in deltas(chunks) for tc in d.get("tool_calls", [])] == [0, 0]


async def test_two_tool_calls_in_one_line_get_indexes_0_and_1(ollama_server: OllamaServer) -> None:
    ollama_server.add(Reply(calls=TWO_CALLS, calls_per_line=False))
    chunks = await call(ollama_server, tools=[READ_FILE])
    calls = [tc for d in deltas(chunks) for tc in d.get("tool_calls", [])]
    assert [tc["index"] for tc in calls] == [0, 1]
    assert [json.loads(tc.function.arguments) for tc in built(chunks).choices[0].message.tool_calls] == [{"path": "a.py"}, {"path": "b.py"}]


async def test_tool_calls_and_results_go_back_in_ollama_shape(ollama_server: OllamaServer) -> None:
    ollama_server.add(Reply(calls=TWO_CALLS, calls_per_line=False), Reply(text="done"))
    first = built(await call(ollama_server, tools=[READ_FILE])).choices[0].message
    history = [
        *HELLO,
        {"role": "assistant", "content": None, "tool_calls": [tc.model_dump() for tc in first.tool_calls]},
        *({"role": "tool", "tool_call_id": tc.id, "content": f"text of {tc.id}"} for tc in first.tool_calls),
    ]
    await call(ollama_server, tools=[READ_FILE], messages=history)
    sent = ollama_server.requests[1]["messages"]
    # Arguments go back as objects; no id and no index (Ollama pairs results by order).
    assert sent[1]["tool_calls"] == [
        {"function": {"name": "read_file", "arguments": {"path": "a.py"}}},
        {"function": {"name": "read_file", "arguments": {"path": "b.py"}}},
    ]
    assert sent[2] == {"role": "tool", "content": f"text of {first.tool_calls[0].id}", "images": [], "tool_call_id": first.tool_calls[0].id}


async def test_thinking_lines_become_reasoning_content(ollama_server: OllamaServer) -> None:
    ollama_server.add(Reply(thinking="Think first.", text="Answer.", chunk_size=6))
    chunks = await call(ollama_server, reasoning_effort="low")
    assert deltas(chunks)[0] == {"reasoning_content": "Think ", "role": "assistant"}
    assert "".join(d.get("reasoning_content", "") for d in deltas(chunks)) == "Think first."
    assert text_of(chunks) == "Answer."
    assert ollama_server.requests[0]["think"] is True  # reasoning_effort maps to think: true
    assert "thinking_blocks" not in json.dumps(deltas(chunks))


async def test_litellm_asks_api_show_after_a_call(ollama_server: OllamaServer) -> None:
    """litellm's success logging looks the model up (cost info) with POST /api/show at the same api_base."""
    ollama_server.add(Reply(text="hi"))
    await call(ollama_server)
    await ollama_server.until(lambda: any(entry.path == "/api/show" for entry in ollama_server.log))
    show = next(entry for entry in ollama_server.log if entry.path == "/api/show")
    assert show.body == {"name": "qwen3:8b"} and show.status == 200


async def test_an_unknown_model_is_not_found_error_404(ollama_server: OllamaServer) -> None:
    with pytest.raises(litellm.NotFoundError) as caught:
        await call(ollama_server, model="ollama_chat/llama9")
    assert caught.value.status_code == 404
    assert str(caught.value) == "litellm.NotFoundError: Ollama_chatException - {\"error\": \"model 'llama9' not found\"}"


async def test_the_older_not_found_wording_maps_the_same() -> None:
    with OllamaServer(not_found_message='model "{model}" not found, try pulling it first') as server, pytest.raises(
        litellm.NotFoundError, match=re.escape('{"error": "model \\"llama9\\" not found, try pulling it first"}')
    ):
        await call(server, model="ollama_chat/llama9")


async def test_tools_for_a_model_without_tools_is_bad_request_400() -> None:
    with OllamaServer(models={"gemma:2b": OllamaModel(family="gemma", capabilities=("completion",))}) as server:
        with pytest.raises(litellm.BadRequestError, match=re.escape("registry.ollama.ai/library/gemma:2b does not support tools")):
            await call(server, model="ollama_chat/gemma:2b", tools=[READ_FILE])
        with pytest.raises(litellm.BadRequestError, match=re.escape('{"error": "\\"gemma:2b\\" does not support thinking"}')):
            await call(server, model="ollama_chat/gemma:2b", reasoning_effort="high")


async def test_http_failures_keep_their_status(ollama_server: OllamaServer) -> None:
    ollama_server.add(Fail(500, "out of memory"), Fail(503, "server busy, please try again.  maximum pending requests exceeded"))
    with pytest.raises(litellm.InternalServerError) as first:
        await call(ollama_server)
    with pytest.raises(litellm.ServiceUnavailableError) as second:
        await call(ollama_server)
    assert (first.value.status_code, second.value.status_code) == (500, 503)


async def test_an_error_line_mid_stream_is_bad_request_400(ollama_server: OllamaServer) -> None:
    """A server-side failure after the stream started (``{"error": ...}`` line) is misfiled by
    litellm as a 400 BadRequestError: its parser raises KeyError on the missing ``message``."""
    ollama_server.add(Reply(text="hello world", error_after=(1, "an error was encountered while running the model")))
    with pytest.raises(litellm.BadRequestError) as caught:
        await call(ollama_server)
    assert caught.value.status_code == 400
    assert "KeyError: 'message', Got unexpected response from Ollama: {'error': 'an error was encountered" in str(caught.value)


async def test_a_stream_cut_mid_way_is_mid_stream_fallback_error(ollama_server: OllamaServer) -> None:
    ollama_server.add(Reply(text="hello world", chunk_size=5, cut_after=1))
    with pytest.raises(MidStreamFallbackError) as caught:
        await call(ollama_server)
    assert caught.value.status_code == 500 and caught.value.generated_content == "hello"
    assert isinstance(caught.value.original_exception, litellm.APIConnectionError)


async def test_a_stream_ended_without_the_done_line_looks_like_a_stop(ollama_server: OllamaServer) -> None:
    """No ``done: true`` line and no transport error: litellm raises nothing and makes up "stop",
    with usage from its own token counter."""
    ollama_server.add(Reply(text="hello world", chunk_size=5, end_after=1))
    chunks = await call(ollama_server, stream_options={"include_usage": True})
    assert text_of(chunks) == "hello"
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]


def test_non_streaming_answers_one_object_and_the_side_endpoints_work(ollama_server: OllamaServer) -> None:
    ollama_server.add(Reply(text="whole", calls=[Call("read_file", {"path": "a"})], usage=(5, 2)))
    base = ollama_server.base_url
    body = httpx.post(f"{base}/api/chat", json={"model": "qwen3:8b", "messages": HELLO, "stream": False}).json()
    assert body["done"] is True and body["done_reason"] == "stop" and body["message"]["content"] == "whole"
    assert body["message"]["tool_calls"][0]["function"] == {"index": 0, "name": "read_file", "arguments": {"path": "a"}}
    assert (body["prompt_eval_count"], body["eval_count"]) == (5, 2)
    tags = httpx.get(f"{base}/api/tags").json()
    assert [model["name"] for model in tags["models"]] == ["qwen3:8b"]
    show = httpx.post(f"{base}/api/show", json={"model": "qwen3"}).json()  # a bare name would need :latest
    assert show == {"error": "model 'qwen3' not found"}
    show = httpx.post(f"{base}/api/show", json={"model": "qwen3:8b"}).json()
    assert show["capabilities"] == ["completion", "tools", "thinking"] and show["model_info"]["qwen3.context_length"] == 40960
    assert httpx.get(f"{base}/").text == "Ollama is running"


def test_what_gos_decoder_cannot_bind_is_bad_request_400(ollama_server: OllamaServer) -> None:
    """OpenAI-shaped messages sent as they are: content parts and arguments as JSON text."""
    url = f"{ollama_server.base_url}/api/chat"
    parts = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    response = httpx.post(url, json={"model": "qwen3:8b", "messages": [parts]})
    assert response.status_code == 400
    assert response.json() == {"error": "json: cannot unmarshal array into Go struct field Message.messages.content of type string"}
    call = {"function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}}
    text_arguments = [*HELLO, {"role": "assistant", "content": "", "tool_calls": [call]}]
    response = httpx.post(url, json={"model": "qwen3:8b", "messages": text_arguments})
    assert response.status_code == 400 and "cannot unmarshal string into Go struct field ToolCallFunction" in response.json()["error"]


async def test_an_image_attached_as_content_parts_goes_as_ollama_images(ollama_server: OllamaServer) -> None:
    """What the agent keeps for a note with a picture (OpenAI content parts) is sent as ``images``."""
    ollama_server.add(Reply(text="a dot"))
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    note = {"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{pixel}"}}]}
    assert text_of(await call(ollama_server, messages=[note])) == "a dot"
    sent = ollama_server.requests[0]["messages"][0]
    assert sent["content"] == "what is this?" and sent["images"] == [pixel]
