"""The conversation, kept within the model's context without breaking tool-call pairs.

Messages are trimmed oldest first in whole groups — an assistant message together with the
results of its tool calls — so the model never receives a tool result without its call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from agentcli.llm.types import Message


def message_size(message: Message) -> int:
    """Characters a message takes in the request: the measure of the context budget."""
    return len(json.dumps(message, ensure_ascii=False))


class Conversation:
    """The messages of a session (without the system prompt), with their running size.

    Sizes are measured once, when a message is added, so a request costs no re-measuring of the
    whole history however long the session runs.
    """

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._sizes: list[int] = []
        self.chars = 0

    def append(self, message: Message) -> None:
        size = message_size(message)
        self._messages.append(message)
        self._sizes.append(size)
        self.chars += size

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]

    def for_request(self, max_chars: int) -> list[Message]:
        """The messages to send: all of them, or a trimmed copy when over ``max_chars``."""
        if self.chars <= max_chars:
            return list(self._messages)
        return trim(self._messages, max_chars, self._sizes)


def _groups(messages: Sequence[Message], sizes: Sequence[int]) -> list[tuple[list[Message], int]]:
    """Split into units that must be kept or dropped together, with their sizes."""
    groups: list[tuple[list[Message], int]] = []
    for message, size in zip(messages, sizes, strict=True):
        if message["role"] == "tool" and groups:
            members, total = groups[-1]
            members.append(message)
            groups[-1] = (members, total + size)
        else:
            groups.append(([message], size))
    return groups


def trim(messages: Sequence[Message], max_chars: int, sizes: Sequence[int] | None = None) -> list[Message]:
    """Drop the oldest groups after the first user message until the rest fits in ``max_chars``.

    The first user message (the task) is always kept, and so is the most recent group, whatever
    its size: the model cannot continue without its latest results.
    """
    sizes = list(sizes) if sizes is not None else [message_size(m) for m in messages]
    if sum(sizes) <= max_chars:
        return list(messages)
    head_len = next((i + 1 for i, m in enumerate(messages) if m["role"] == "user"), 1)
    head = list(messages[:head_len])
    rest = _groups(messages[head_len:], sizes[head_len:])
    budget = max_chars - sum(sizes[:head_len])
    kept: list[list[Message]] = []
    for members, cost in reversed(rest):
        if kept and cost > budget:
            break
        kept.append(members)
        budget -= cost
    dropped = sum(len(members) for members, _ in rest) - sum(len(members) for members in kept)
    body = [m for members in reversed(kept) for m in members]
    if not dropped:
        return [*head, *body]
    note: Message = {
        "role": "user",
        "content": f"[{dropped} earlier messages were trimmed to fit the context window; "
        "re-read files if you need their current content.]",
    }
    return [*head, note, *body]
