"""The OpenAI test server refuses what Chat Completions refuses, so a session that finishes against
it sent nothing the real API would have rejected (``tests/support/openai_rules.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.openai_server import OpenAIServer, Reply

SYSTEM = {"role": "system", "content": "be brief"}
USER = {"role": "user", "content": "read a"}
CALLS = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}},
    {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"b\"}"}},
]}
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


@pytest.fixture
def openai() -> Iterator[OpenAIServer]:
    with OpenAIServer().start() as server:
        yield server


def post(server: OpenAIServer, messages: list[dict[str, Any]], **fields: Any) -> tuple[int, str]:
    body = {"model": "gpt-4o", "messages": messages, "tools": TOOLS, **fields}
    response = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)
    if response.status_code != 200:
        error = response.json()["error"]
        assert error["type"] == "invalid_request_error"
        return response.status_code, error["message"]
    return 200, ""


def result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "contents"}


def test_a_conversation_with_every_call_answered_is_accepted(openai: OpenAIServer) -> None:
    openai.add(Reply(text="ok"))
    assert post(openai, [SYSTEM, USER, CALLS, result("call_2"), result("call_1"), USER]) == (200, "")
    assert not openai.refused


def test_a_tool_message_without_a_call_before_it_is_refused(openai: OpenAIServer) -> None:
    status, message = post(openai, [SYSTEM, USER, result("call_1")])
    assert status == 400
    assert message == ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                       "with 'tool_calls'.")


def test_a_tool_message_after_a_user_message_is_refused(openai: OpenAIServer) -> None:
    """A note slipped between a call and its result parts the result from its call."""
    status, message = post(openai, [USER, CALLS, result("call_1"), USER, result("call_2")])
    assert status == 400 and "did not have response messages: call_2" in message


def test_a_result_for_a_call_that_was_not_made_is_refused(openai: OpenAIServer) -> None:
    status, message = post(openai, [USER, CALLS, result("call_1"), result("call_9")])
    assert (status, message) == (400, "Invalid parameter: 'tool_call_id' of 'call_9' not found in 'tool_calls' of "
                                      "previous message.")


def test_an_unanswered_call_is_refused(openai: OpenAIServer) -> None:
    status, message = post(openai, [USER, CALLS, result("call_1")])
    assert (status, message) == (400, "An assistant message with 'tool_calls' must be followed by tool messages "
                                      "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                      "response messages: call_2")


def test_null_content_is_refused_except_on_an_assistant_message_that_calls_tools(openai: OpenAIServer) -> None:
    status, message = post(openai, [USER, {"role": "assistant", "content": None}, USER])
    assert (status, message) == (400, "Invalid value for 'content': expected a string, got null.")


def test_arguments_sent_back_as_an_object_are_refused(openai: OpenAIServer) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": {"path": "a"}}}
    status, message = post(openai, [USER, {"role": "assistant", "content": "", "tool_calls": [call]}, result("call_1")])
    assert status == 400 and "expected a string, but got an object" in message


def test_a_tool_name_the_api_does_not_take_is_refused(openai: OpenAIServer) -> None:
    tools = [{"type": "function", "function": {"name": "fs.read", "parameters": {"type": "object"}}}]
    status, message = post(openai, [USER], tools=tools)
    assert status == 400 and message.startswith("Invalid 'tools[0].function.name': string does not match pattern")


def test_a_property_of_another_providers_message_is_refused(openai: OpenAIServer) -> None:
    signed = {**CALLS, "thinking_blocks": [{"type": "thinking", "thinking": "hm", "signature": "c2ln"}]}
    status, message = post(openai, [USER, signed, result("call_1"), result("call_2")])
    assert (status, message) == (400, "Additional properties are not allowed ('thinking_blocks' was unexpected) - "
                                      "'messages.1'")
