"""The conversation as each provider takes it: what litellm passes on as it is, and should not.

The session keeps one conversation, in OpenAI's shape with Anthropic's signed thinking blocks on
the replies that had them; litellm translates it per provider. These are the few changes it does
not make, each for a refusal or a corruption measured against the servers in ``tests/support``.
"""

from __future__ import annotations

import re

from agentcli.llm.types import Message

_REASONING_PLACEHOLDER = " "
"""What a reply that called tools without reasoning we kept (made by another model, or logged
before replies kept theirs) carries to DeepSeek in thinking mode, which refuses the request
without any; litellm's own fill, which it documents as the least the API takes."""


def for_provider(model: str, messages: list[Message], *, thinking: bool = True) -> list[Message]:
    """``messages`` as a request to ``model`` should carry them (copies where changed).

    ``thinking``: the model may be thinking (it reasons, or no one knows whether it does): a
    DeepSeek model then needs reasoning on every reply that called tools.
    """
    if anthropic(model):
        messages = _without_blank_text(messages)
    else:
        messages = [_openai_style(message) for message in messages]
    if developer_role(model):
        messages = [{**m, "role": "developer"} if m.get("role") == "system" else m for m in messages]
    if returns_reasoning(model):
        return [_with_reasoning(message, thinking) for message in messages]
    return [_without_reasoning(message) for message in messages]


def returns_reasoning(model: str) -> bool:
    """A DeepSeek model (at DeepSeek, or at an OpenAI-compatible server): in thinking mode its API
    requires a reply that called tools to come back with its ``reasoning_content`` in every later
    request, and answers 400 without it (api-docs.deepseek.com/guides/thinking_mode, "Tool
    Calls"; its reasoning before a reply without calls is ignored, so not kept)."""
    provider, _, name = model.rpartition("/")
    return provider in ("deepseek", "openai") and "deepseek" in name.lower()


def developer_role(model: str) -> bool:
    """An OpenAI o-series reasoning model (o1, o3, o3-mini, o4-mini…, at OpenAI or Azure).

    OpenAI takes their instructions as a ``developer`` message; given a ``system`` one, litellm
    (1.106.2, ``OpenAIOSeriesConfig._transform_messages``) turns it into a *user* message for each
    model its map does not mark ``supports_system_messages`` (o3, o3-mini, o4-mini…), so the
    system prompt would read as words of the user. A ``developer`` message it passes as is. Not
    o1-mini and o1-preview, which take neither (litellm sends them a system message either way).
    """
    provider, _, name = model.rpartition("/")
    return provider in ("", "openai", "azure") and bool(_O_SERIES.match(name)) and not name.startswith(
        ("o1-mini", "o1-preview"))


_O_SERIES = re.compile(r"o[1-9]\d*(-|$)")


def _with_reasoning(message: Message, thinking: bool) -> Message:
    """A reply that called tools keeps its reasoning (given a placeholder when it has none and the
    model may think); other messages carry none."""
    if message.get("role") != "assistant":
        return message
    if not message.get("tool_calls"):
        return _without_reasoning(message)
    if thinking and not isinstance(message.get("reasoning_content"), str):
        return {**message, "reasoning_content": _REASONING_PLACEHOLDER}
    return message


def _without_reasoning(message: Message) -> Message:
    """Reasoning kept for DeepSeek is no other provider's field (OpenAI's schema refuses it)."""
    if "reasoning_content" not in message:
        return message
    return {key: value for key, value in message.items() if key != "reasoning_content"}


def anthropic(model: str) -> bool:
    """An Anthropic-protocol model (directly, or a Claude model through a cloud provider)."""
    return model.startswith("anthropic/") or "claude" in model.lower()


def _openai_style(message: Message) -> Message:
    """A message for a provider other than Anthropic.

    An assistant message that only calls tools gets ``content: ""``: litellm drops a ``None``
    content, and strict chat templates of local servers (llama.cpp, vLLM) fail on a message
    without the key. (Not for Anthropic: there an empty string becomes a text block of its own.)
    Thinking blocks are left out: they are Claude's, signed for Anthropic only (a session resumed
    with another model still has them), and litellm passes the unknown field on to an
    OpenAI-compatible server, whose schema refuses it.
    """
    if message.get("role") != "assistant":
        return message
    if message.get("content") is None or "thinking_blocks" in message:
        message = {key: value for key, value in message.items() if key != "thinking_blocks"}
        if message.get("content") is None:
            message["content"] = ""
    return message


def _without_blank_text(messages: list[Message]) -> list[Message]:
    """Replies whose text is only whitespace (Claude's ``"\\n\\n"`` before a tool call, a reply cut
    off after a line break) without that text. Anthropic refuses a whitespace-only text block, and
    litellm, rather than fail, puts "[System: Empty message content sanitised to satisfy protocol]"
    in its place: words the model never wrote, read back as its own. A reply with nothing else
    (no call, no thinking) is left out; the messages around it are of one role and litellm joins them."""
    kept: list[Message] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, str) or content.strip():
            kept.append(message)
        elif message.get("tool_calls") or message.get("thinking_blocks"):
            kept.append({**message, "content": None})
    return kept
