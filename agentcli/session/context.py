"""The model's view of the conversation, and how many tokens it takes.

The view is the log's messages with the compactions applied: its older part can be replaced by a
summary the model wrote (``compacting.py``), always at a boundary that keeps a tool call with its
result. Its size in tokens is what the provider reported for the last request, plus an estimate
for what was added since: characters divided by a ratio calibrated on the provider's own counts,
so no tokenizer runs on the event loop and the estimate tracks each model's tokenizer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agentcli.llm.types import Message
from agentcli.tools.text import truncate_middle

SUMMARY_LEAD = ("[Summary of the earlier part of this session, written to save context. The work it describes "
                "is done; details not kept here can be re-read from the files.]")
"""How a compaction summary starts, in the model's view."""
CHARS_PER_TOKEN = 3.5
"""The starting guess (code and JSON run denser than prose); replaced by the measured ratio."""
KEEP_GROUPS = 4
"""Within one long turn, the latest call groups (a reply and its results) kept verbatim."""
OVERHEAD_CHARS = 12_000
"""The system prompt and the tool definitions, before the first request measures them."""


IMAGE_CHARS = 6000
"""What an attached image is counted as: providers bill an image as about 1,500 tokens whatever
its encoded size, so its base64 text would overstate it many times over."""


def message_size(message: Message) -> int:
    """Characters a message takes in the request (an attached image at a fixed size)."""
    content = message.get("content")
    if isinstance(content, list) and any(part.get("type") == "image_url" for part in content):
        images = [part for part in content if part.get("type") == "image_url"]
        rest = {**message, "content": [part for part in content if part.get("type") != "image_url"]}
        return len(json.dumps(rest, ensure_ascii=False)) + IMAGE_CHARS * len(images)
    return len(json.dumps(message, ensure_ascii=False))


CUT_SLACK = 1.1
"""How far past the limit an output held may run before it is cut: the limit moves a little with
each calibration of characters per token, and an output made just under it is not worth cutting."""


def cut_output(message: Message, limit: int) -> Message:
    """A tool output well past ``limit`` characters (``CUT_SLACK``) cut to its head and tail
    within it (else ``message`` itself). Outputs are kept to a share of the window when they are
    made, but one made before a smaller window was known (a provider stating its own) can fill
    that window alone."""
    content = message.get("content")
    if message["role"] != "tool" or not isinstance(content, str) or len(content) <= limit * CUT_SLACK:
        return message
    return {**message, "content": truncate_middle(content, limit)}


def summary_message(summary: str) -> Message:
    return {"role": "user", "content": f"{SUMMARY_LEAD}\n\n{summary}"}


class Conversation:
    """The messages of the model's view (without the system prompt), with their running size.

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

    def view(self) -> list[Message]:
        return list(self._messages)

    def rewind(self, kept: int, restored: Sequence[Message] = ()) -> list[Message]:
        """Keep the first ``kept`` messages, then ``restored``; returns the messages dropped."""
        dropped = self._messages[kept:]
        self.chars -= sum(self._sizes[kept:])
        del self._messages[kept:], self._sizes[kept:]
        for message in restored:
            self.append(message)
        return dropped

    def compact(self, replaced: int, summary: str) -> None:
        """Replace the first ``replaced`` messages with one message holding ``summary``."""
        kept, sizes = self._messages[replaced:], self._sizes[replaced:]
        self._messages, self._sizes, self.chars = [], [], 0
        self.append(summary_message(summary))
        self._messages.extend(kept)
        self._sizes.extend(sizes)
        self.chars += sum(sizes)

    def cut_outputs(self, limit: int) -> int:
        """Cut every tool output longer than ``limit`` characters (``cut_output``); returns how
        many were cut."""
        cut = 0
        for index, message in enumerate(self._messages):
            shorter = cut_output(message, limit)
            if shorter is not message:
                size = message_size(shorter)
                self.chars += size - self._sizes[index]
                self._messages[index], self._sizes[index] = shorter, size
                cut += 1
        return cut

    def boundaries(self) -> list[int]:
        """Indexes where the view may be cut: before a user message or an assistant message, so a
        tool result always stays with the call it answers."""
        return [i for i, message in enumerate(self._messages) if message["role"] in ("user", "assistant") and i > 0]

    def split(self, keep_turns: int, keep_chars: int) -> int:
        """How many messages from the start to summarize.

        The latest ``keep_turns`` user turns stay whole when they fit in ``keep_chars``; within a
        single long turn (the agent working through many steps), the latest few call groups stay,
        as many as fit. The last group always stays. 0 when nothing can be summarized.
        """
        boundaries = self.boundaries()
        if not boundaries:
            return 0
        starts = [i for i in boundaries if self._messages[i]["role"] == "user"]
        if len(starts) >= keep_turns and sum(self._sizes[starts[-keep_turns]:]) <= keep_chars:
            return starts[-keep_turns]
        cut, kept = boundaries[-1], 1
        for start in reversed(boundaries[:-1]):
            if kept >= KEEP_GROUPS or sum(self._sizes[start:]) > keep_chars:
                break
            cut, kept = start, kept + 1
        return cut

    def size_of(self, messages: Sequence[Message]) -> int:
        return sum(message_size(message) for message in messages)


@dataclass
class ContextMeter:
    """Tokens of the model's view: measured after each request, estimated in between."""

    chars_per_token: float = CHARS_PER_TOKEN
    overhead_chars: int = OVERHEAD_CHARS
    """Characters of the system prompt and the tools at the last request."""
    measured_tokens: int | None = None
    """The input tokens the provider reported for the last request."""
    measured_chars: int = 0
    """The characters of the view's messages at that request."""
    calibrated: bool = False
    """The ratio came from a provider's count (else it is the starting guess)."""
    peak_tokens: int = 0
    sending_chars: int = 0
    """The characters of the view's messages in the request on its way."""

    def sent(self, overhead_chars: int, message_chars: int) -> None:
        """A request is about to be sent with this many characters of each part."""
        self.overhead_chars = overhead_chars
        self.sending_chars = message_chars

    def measured(self, input_tokens: int, *, estimated: bool) -> None:
        """The provider counted the last request's input (or litellm estimated it)."""
        chars = self.overhead_chars + self.sending_chars
        if input_tokens > 0 and not estimated:
            self.chars_per_token = max(1.0, chars / input_tokens)
            self.calibrated = True
        self.measured_tokens = input_tokens
        self.measured_chars = self.sending_chars
        self.peak_tokens = max(self.peak_tokens, input_tokens)

    def estimate(self, message_chars: int) -> int:
        """The next request's input tokens if the view has ``message_chars`` characters now."""
        if self.measured_tokens is not None:
            return self.measured_tokens + round((message_chars - self.measured_chars) / self.chars_per_token)
        return round((self.overhead_chars + message_chars) / self.chars_per_token)

    def compacted(self, message_chars: int) -> None:
        """The view changed wholesale: estimate from characters until the next measure."""
        if self.measured_tokens is not None:
            self.measured_tokens = self.estimate(message_chars)
            self.measured_chars = message_chars
