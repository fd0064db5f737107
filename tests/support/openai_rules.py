"""What OpenAI's Chat Completions API rejects in a request, checked the way the real API checks it.

The wording of each message is the API's own, as quoted in public bug reports (GitHub issues of
agent frameworks that tripped over each rule); the error body is the real shape:
``{"error": {"message", "type": "invalid_request_error", "param", "code"}}``.

The rules are about the conversation's structure, the ones an agent breaks when it loses or
reorders history: every ``tool`` message answers a call of the assistant message right before
the run of tool messages it belongs to, every call is answered before anything else is said,
content is present where the role needs it, and tool names are names the API takes.

``provider="deepseek"`` checks as DeepSeek's OpenAI-format API does: an assistant message may
carry ``reasoning_content``, and in thinking mode (on unless ``thinking.type`` is ``disabled``;
``deepseek-chat`` never thinks) every assistant message that called tools must carry it, in every
later request (api-docs.deepseek.com/guides/thinking_mode, "Tool Calls"; the wording of the 400 is
the API's as quoted in agent frameworks' bug reports).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

Provider = Literal["openai", "deepseek"]

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_FIELDS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "refusal", "audio", "tool_calls", "function_call"},
    "tool": {"role", "content", "tool_call_id"},
    "function": {"role", "content", "name"},
}
"""The properties each role's message may have; the API's schema allows no others (wording of its
refusal as quoted in a 2023 report; another provider's field, e.g. Anthropic's signed
``thinking_blocks``, is one)."""
_DEEPSEEK_ASSISTANT = _FIELDS["assistant"] | {"reasoning_content", "prefix"}
"""DeepSeek's assistant message also takes the reasoning sent back, and ``prefix`` (its beta completion)."""
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True)
class OpenAIError:
    """A 400 answer: the message, the parameter it names and the error code."""

    message: str
    param: str | None = None
    code: str | None = None

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": "invalid_request_error", "param": self.param,
                          "code": self.code}}


def check_chat_request(body: Any, provider: Provider = "openai") -> OpenAIError | None:
    """The first rule ``body`` breaks, or ``None`` when the real API (``provider``'s) would accept it."""
    if not isinstance(body, dict):
        return OpenAIError("We could not parse the JSON body of your request.")
    messages = body.get("messages")
    if not isinstance(messages, list):
        return OpenAIError("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
    if not messages:
        return OpenAIError("[] is too short - 'messages'", "messages", None)
    rules = (_shapes, _tool_pairs, _tools) if provider == "openai" else (
        _deepseek_shapes, _tool_pairs, _tools, _deepseek_reasoning)
    for rule in rules:
        error = rule(body, messages)
        if error is not None:
            return error
    return None


def _deepseek_shapes(body: dict[str, Any], messages: list[Any]) -> OpenAIError | None:
    return _shapes(body, messages, assistant_fields=_DEEPSEEK_ASSISTANT)


def _deepseek_reasoning(body: dict[str, Any], messages: list[dict[str, Any]]) -> OpenAIError | None:
    """In thinking mode, a reply that called tools goes back with its reasoning, in every later request."""
    thinking = body.get("thinking")
    mode = thinking.get("type") if isinstance(thinking, dict) else None
    if mode == "disabled" or (mode is None and body.get("model") == "deepseek-chat"):
        return None
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls") and not isinstance(
                message.get("reasoning_content"), str):
            return OpenAIError("The `reasoning_content` in the thinking mode must be passed back to the API.",
                               None, "invalid_request_error")
    return None


def _shapes(_body: dict[str, Any], messages: list[Any],
            assistant_fields: set[str] = _FIELDS["assistant"]) -> OpenAIError | None:
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            role = message.get("role") if isinstance(message, dict) else None
            return OpenAIError(f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
                               "'function', 'tool', and 'developer'.", f"messages[{index}].role", "invalid_value")
        role = message["role"]
        unexpected = sorted(set(message) - (assistant_fields if role == "assistant" else _FIELDS[role]))
        if unexpected:
            return OpenAIError(f"Additional properties are not allowed ('{unexpected[0]}' was unexpected) - "
                               f"'messages.{index}'")
        if "content" not in message and not (role == "assistant" and message.get("tool_calls")):
            return OpenAIError(f"Missing required parameter: 'messages[{index}].content'.",
                               f"messages[{index}].content", "missing_required_parameter")
        content = message.get("content")
        if content is None and not (role == "assistant" and message.get("tool_calls")):
            return OpenAIError("Invalid value for 'content': expected a string, got null.",
                               f"messages.[{index}].content", None)
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            return OpenAIError(f"Missing required parameter: 'messages[{index}].tool_call_id'.",
                               f"messages[{index}].tool_call_id", "missing_required_parameter")
        for position, call in enumerate(message.get("tool_calls") or [] if role == "assistant" else []):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
                return OpenAIError(f"Invalid type for 'messages[{index}].tool_calls[{position}].function.arguments': "
                                   "expected a string, but got an object instead.",
                                   f"messages[{index}].tool_calls[{position}].function.arguments", "invalid_type")
    return None


def _tool_pairs(_body: dict[str, Any], messages: list[dict[str, Any]]) -> OpenAIError | None:
    """Tool messages follow the assistant message that called them, and answer every call."""
    index = 0
    while index < len(messages):
        message = messages[index]
        if message["role"] == "tool":
            return OpenAIError("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                               "message with 'tool_calls'.", f"messages.[{index}].role", None)
        calls = message.get("tool_calls") if message["role"] == "assistant" else None
        index += 1
        if not calls:
            continue
        asked = [call.get("id") for call in calls]
        answered: set[Any] = set()
        while index < len(messages) and messages[index]["role"] == "tool":
            call_id = messages[index].get("tool_call_id")
            if call_id not in asked:
                return OpenAIError(f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of "
                                   "previous message.", f"messages.[{index}].tool_call_id", None)
            answered.add(call_id)
            index += 1
        missing = [str(call_id) for call_id in asked if call_id not in answered]
        if missing:
            return OpenAIError("An assistant message with 'tool_calls' must be followed by tool messages responding "
                               "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                               + ", ".join(missing), f"messages.[{index - 1}].role", None)
    return None


def _tools(body: dict[str, Any], _messages: list[dict[str, Any]]) -> OpenAIError | None:
    for index, tool in enumerate(body.get("tools") or []):
        name = (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            return OpenAIError(f"Invalid 'tools[{index}].function.name': string does not match pattern. Expected a "
                               "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                               f"tools[{index}].function.name", "invalid_value")
    if body.get("tool_choice") is not None and not body.get("tools"):
        return OpenAIError("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
                           "specified.", "tool_choice", None)
    return None
