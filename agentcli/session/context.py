"""Keeping the conversation within the model's context without breaking tool-call pairs.

Messages are trimmed oldest first in whole groups — an assistant message together with the
results of its tool calls — so the model never receives a tool result without its call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentcli.llm.types import Message


def _size(message: Message) -> int:
    return len(json.dumps(message, ensure_ascii=False))


def _groups(messages: Sequence[Message]) -> list[list[Message]]:
    """Split into units that must be kept or dropped together."""
    groups: list[list[Message]] = []
    for message in messages:
        if message["role"] == "tool" and groups:
            groups[-1].append(message)
        else:
            groups.append([message])
    return groups


def trim(messages: Sequence[Message], max_chars: int) -> list[Message]:
    """Drop the oldest groups after the first user message until the rest fits in ``max_chars``.

    The system prompt and the first user message (the task) are always kept, and so is the most
    recent group, whatever its size: the model cannot continue without its latest results.
    """
    if sum(_size(m) for m in messages) <= max_chars:
        return list(messages)
    head_len = next((i + 1 for i, m in enumerate(messages) if m["role"] == "user"), 1)
    head, rest = list(messages[:head_len]), _groups(messages[head_len:])
    budget = max_chars - sum(_size(m) for m in head)
    kept: list[list[Message]] = []
    for group in reversed(rest):
        cost = sum(_size(m) for m in group)
        if kept and cost > budget:
            break
        kept.append(group)
        budget -= cost
    dropped = sum(len(g) for g in rest) - sum(len(g) for g in kept)
    note: Message = {
        "role": "user",
        "content": f"[{dropped} earlier messages were trimmed to fit the context window; "
        "re-read files if you need their current content.]",
    }
    body = [m for group in reversed(kept) for m in group]
    return [*head, note, *body] if dropped else [*head, *body]
