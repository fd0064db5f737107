"""The conversation as each provider takes it: what litellm passes on as it is, and should not.

The session keeps one conversation, in OpenAI's shape with Anthropic's signed thinking blocks on
the replies that had them; litellm translates it per provider. These are the few changes it does
not make, each for a refusal or a corruption measured against the servers in ``tests/support``.
"""

from __future__ import annotations

from agentcli.llm.types import Message


def for_provider(model: str, messages: list[Message]) -> list[Message]:
    """``messages`` as a request to ``model`` should carry them (copies where changed)."""
    if anthropic(model):
        return _without_blank_text(messages)
    return [_openai_style(message) for message in messages]


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
