"""Prompt-cache breakpoints for providers that take Anthropic's ``cache_control``.

A coding agent resends a growing conversation on every step; marking where the reusable prefix
ends lets the provider bill it at a fraction. Four breakpoints at most (the API refuses a fifth):

1. the last tool definition (tools come first in the cached prefix and change only between phases);
2. the system prompt;
3. and 4. the last two user or tool messages: a rolling pair, so each request reads the prefix the
   previous one wrote and writes one step further.

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
    marked = 0
    for index in range(len(messages) - 1, -1, -1):
        if marked == ROLLING:
            break
        if messages[index].get("role") in ("user", "tool") and messages[index].get("content"):
            # On the message: litellm moves it onto the text or tool_result block it builds.
            messages[index] = {**messages[index], "cache_control": dict(EPHEMERAL)}
            marked += 1
    return messages, tools


def _marked(message: Message) -> Message:
    """The system message as one text block with a breakpoint."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]}
    return message
