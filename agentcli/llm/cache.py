"""Prompt-cache breakpoints for providers that take Anthropic's ``cache_control``.

A coding agent resends a growing conversation on every step; marking where the reusable prefix
ends lets the provider bill it at a fraction. Four breakpoints at most (the API refuses a fifth):

1. the last tool definition (tools come first in the cached prefix and change only between phases);
2. the system prompt;
3. the last user or tool message: this request's prefix, written for the next one;
4. the last user or tool message before the latest reply: where the previous request ended, so
   this one reads the prefix that one wrote. Not simply the second-to-last message: the API looks
   for a hit only about 20 blocks back from a breakpoint, and a step of many parallel calls (a
   ``tool_use`` and a ``tool_result`` block each) puts the previous end further back than that,
   so the whole history would be written again at a quarter more than its full price.

litellm moves ``cache_control`` from an OpenAI-style message onto the Anthropic block it builds
(a string content becomes a text block, a ``tool`` message a ``tool_result`` block), measured in
``tests/llm_servers/test_anthropic_cache.py``. The input is never modified: copies are returned.
"""

from __future__ import annotations

from typing import Any

from agentcli.llm.types import Message

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
ROLLING = 2
"""Breakpoints on the latest messages."""


def with_breakpoints(
    messages: list[Message], tools: list[dict[str, Any]]
) -> tuple[list[Message], list[dict[str, Any]]]:
    """Copies of ``messages`` and ``tools`` with at most four ``cache_control`` breakpoints."""
    tools = [dict(tool) for tool in tools]
    if tools:
        tools[-1]["cache_control"] = dict(EPHEMERAL)
    messages = list(messages)
    for index, message in enumerate(messages):
        if message.get("role") == "system":
            messages[index] = _marked(message)
            break
    for index in _rolling_points(messages):
        messages[index] = _marked_last_block(messages[index])
    return messages, tools


def _marked_last_block(message: Message) -> Message:
    """The message with a breakpoint on its last block. On a string content the mark goes on the
    message, and litellm moves it onto the text or tool_result block it builds; on a list of parts
    (a note with a picture) litellm drops a message-level mark, so it goes on the last part."""
    content = message.get("content")
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return {**message, "content": [*content[:-1], {**content[-1], "cache_control": dict(EPHEMERAL)}]}
    return {**message, "cache_control": dict(EPHEMERAL)}


def _rolling_points(messages: list[Message]) -> list[int]:
    """The indexes of the (at most two) messages that get the rolling breakpoints."""
    points: list[int] = []
    index = len(messages) - 1
    while index >= 0 and len(points) < ROLLING:
        message = messages[index]
        if message.get("role") in ("user", "tool") and message.get("content"):
            points.append(index)
            # The next point is before the latest reply: skip back past it.
            while index >= 0 and messages[index].get("role") != "assistant":
                index -= 1
        index -= 1
    return points


def _marked(message: Message) -> Message:
    """The system message as one text block with a breakpoint."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]}
    return message
