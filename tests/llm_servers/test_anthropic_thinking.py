"""Sending thinking back through litellm across tool steps, and what the server refuses.

With thinking on, the API needs the final assistant message (the one that opened the current tool
loop) to start with its signed thinking block. These tests pin the assistant message shape litellm
turns into exactly that, and the shapes that go wrong.
"""

from __future__ import annotations

from typing import Any

import litellm
import pytest

from tests.llm_servers._litellm import ANTHROPIC_MODEL, READ_FILE, THINKING, built, deltas, stream
from tests.llm_servers.conftest import API_KEY
from tests.support.anthropic_server import AnthropicServer, Call, Reply

EXPECTED_THINKING = (
    "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` "
    "is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of "
    "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid "
    "this requirement, disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)


async def step(server: AnthropicServer, messages: list[dict[str, Any]]) -> list[Any]:
    return await stream(
        model=ANTHROPIC_MODEL, api_base=server.base_url, api_key=API_KEY, messages=messages,
        tools=[READ_FILE], thinking=THINKING,
    )


def assistant_turn(chunks: list[Any], *, with_thinking: bool = True) -> list[dict[str, Any]]:
    """The agent's history entries for a tool step: the assistant message, then one tool result per call.

    ``content`` is ``None`` on purpose: litellm turns ``""`` into a placeholder text block (see below).
    """
    message = built(chunks).choices[0].message
    entry: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": tc.id, "type": "function", "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
            for tc in message.tool_calls
        ],
    }
    if with_thinking:
        entry["thinking_blocks"] = message.thinking_blocks
    results = [{"role": "tool", "tool_call_id": tc.id, "content": f"contents of {tc.function.name}"} for tc in message.tool_calls]
    return [entry, *results]


async def test_thinking_blocks_sent_back_are_accepted_across_two_tool_steps(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(
        Reply(thinking="Read a first.", calls=[Call("read_file", {"path": "a.py"})]),
        Reply(thinking="Now b.", calls=[Call("read_file", {"path": "b.py"})]),
        Reply(thinking="Both read.", text="All done."),
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read a then b"}]
    messages += assistant_turn(await step(anthropic_server, messages))
    messages += assistant_turn(await step(anthropic_server, messages))
    final = built(await step(anthropic_server, messages)).choices[0].message
    assert final.content == "All done."
    assert [entry.status for entry in anthropic_server.responses()] == [200, 200, 200]
    # The shape litellm sent: each assistant message starts with the signed thinking block, then the tool_use.
    sent = anthropic_server.requests[2]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    signer = anthropic_server.signer
    assert sent[1]["content"][0] == {"type": "thinking", "thinking": "Read a first.", "signature": signer.sign("Read a first.")}
    assert sent[3]["content"][0] == {"type": "thinking", "thinking": "Now b.", "signature": signer.sign("Now b.")}
    assert [block["type"] for block in sent[3]["content"]] == ["thinking", "tool_use"]
    assert sent[4]["content"][0]["type"] == "tool_result" and sent[4]["content"][0]["content"] == "contents of read_file"


async def test_the_same_step_without_thinking_blocks_is_rejected_with_the_api_wording(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(thinking="Read a first.", calls=[Call("read_file", {"path": "a.py"})]))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read a"}]
    messages += assistant_turn(await step(anthropic_server, messages), with_thinking=False)
    with pytest.raises(litellm.BadRequestError) as caught:
        await step(anthropic_server, messages)
    assert caught.value.status_code == 400
    assert EXPECTED_THINKING in str(caught.value)
    # litellm kept thinking on (it drops it only with litellm.modify_params) and sent the bare tool_use.
    sent = anthropic_server.requests[1]
    assert sent["thinking"] == THINKING
    assert [block["type"] for block in sent["messages"][1]["content"]] == ["tool_use"]


async def test_edited_thinking_text_fails_the_signature_check(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(thinking="Read a first.", calls=[Call("read_file", {"path": "a.py"})]))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read a"}]
    turn = assistant_turn(await step(anthropic_server, messages))
    turn[0]["thinking_blocks"] = [{**turn[0]["thinking_blocks"][0], "thinking": "Read b first."}]
    with pytest.raises(litellm.BadRequestError, match=r"messages\.1\.content\.0: Invalid `signature` in `thinking` block"):
        await step(anthropic_server, messages + turn)


async def test_per_chunk_thinking_blocks_must_be_merged_before_sending_back(anthropic_server: AnthropicServer) -> None:
    """Sending the streamed pieces as they came fails: litellm drops the unsigned text pieces and
    keeps only the signature piece, whose empty thinking does not match its signature."""
    anthropic_server.add(Reply(thinking="Read a first.", calls=[Call("read_file", {"path": "a.py"})]))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read a"}]
    chunks = await step(anthropic_server, messages)
    turn = assistant_turn(chunks)
    turn[0]["thinking_blocks"] = [block for delta in deltas(chunks) for block in delta.get("thinking_blocks", [])]
    with pytest.raises(litellm.BadRequestError, match="Invalid `signature` in `thinking` block"):
        await step(anthropic_server, messages + turn)
    sent = anthropic_server.requests[1]["messages"][1]["content"]
    assert sent[0] == {"type": "thinking", "thinking": "", "signature": anthropic_server.signer.sign("Read a first.")}


async def test_thinking_inline_in_content_is_an_accepted_alternative(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(thinking="Read a first.", calls=[Call("read_file", {"path": "a.py"})]), Reply(text="ok"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read a"}]
    turn = assistant_turn(await step(anthropic_server, messages))
    turn[0]["content"] = turn[0].pop("thinking_blocks")  # content: [{"type": "thinking", ...}]
    await step(anthropic_server, messages + turn)
    sent = anthropic_server.requests[1]["messages"][1]["content"]
    assert [block["type"] for block in sent] == ["thinking", "tool_use"]


async def test_empty_string_content_becomes_a_placeholder_text_block(anthropic_server: AnthropicServer) -> None:
    """``content: ""`` on a tool-only assistant message is rewritten by litellm into a visible text
    block between the thinking and the tool_use; ``content: None`` sends nothing extra."""
    anthropic_server.add(Reply(thinking="Read a first.", calls=[Call("read_file", {"path": "a.py"})]), Reply(text="ok"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read a"}]
    turn = assistant_turn(await step(anthropic_server, messages))
    turn[0]["content"] = ""
    await step(anthropic_server, messages + turn)
    sent = anthropic_server.requests[1]["messages"][1]["content"]
    assert [block["type"] for block in sent] == ["thinking", "text", "tool_use"]
    assert sent[1]["text"] == "[System: Empty message content sanitised to satisfy protocol]"


async def test_redacted_thinking_round_trips(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add(Reply(redacted_thinking=True, calls=[Call("read_file", {"path": "a.py"})]), Reply(text="ok"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read a"}]
    messages += assistant_turn(await step(anthropic_server, messages))
    await step(anthropic_server, messages)
    sent = anthropic_server.requests[1]["messages"][1]["content"]
    assert [block["type"] for block in sent] == ["redacted_thinking", "tool_use"]
    assert anthropic_server.responses()[1].status == 200


async def test_earlier_turns_may_drop_their_thinking(anthropic_server: AnthropicServer) -> None:
    """Only the final assistant message must start with thinking; a finished earlier turn may omit it.

    A tool result followed by a new user message is still the same turn (litellm merges them into
    one user message), so that is rejected; an assistant text answer ends the turn.
    """
    anthropic_server.add(
        Reply(thinking="a", calls=[Call("read_file", {"path": "a.py"})]),
        Reply(thinking="b", calls=[Call("read_file", {"path": "b.py"})]),
        Reply(text="done"),
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read a"}]
    messages += assistant_turn(await step(anthropic_server, messages), with_thinking=False)
    with pytest.raises(litellm.BadRequestError, match="Expected `thinking` or `redacted_thinking`"):
        await step(anthropic_server, [*messages, {"role": "user", "content": "and b"}])
    messages += [{"role": "assistant", "content": "a read"}, {"role": "user", "content": "now b"}]
    messages += assistant_turn(await step(anthropic_server, messages))
    await step(anthropic_server, messages)
    assert [entry.status for entry in anthropic_server.responses()] == [200, 400, 200, 200]
    assert [block["type"] for block in anthropic_server.requests[3]["messages"][1]["content"]] == ["tool_use"]
