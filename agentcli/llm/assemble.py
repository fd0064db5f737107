"""Turning streamed chunks into one response: text, reasoning, thinking blocks, tool calls, usage.

Facts measured with litellm 1.106.2 (``tests/llm_servers``) that this module respects:

- Tool calls arrive as fragments keyed by ``index``: the first carries id and name, later ones
  pieces of the JSON arguments. ``ollama_chat/`` gives every streamed call index 0 (each with a
  fresh id), so a fragment that brings a new id to an index already holding another call starts
  a new call, or two parallel calls would merge into one with broken arguments.
- Anthropic thinking arrives as ``reasoning_content`` plus a ``thinking_blocks`` entry per
  piece (no signature); the signature arrives alone, as one more entry with empty text. The
  block sent back must hold the whole text and that signature, so pieces are merged per block
  (a signature closes the block). ``redacted_thinking`` arrives whole, with opaque ``data``.
- Usage comes in a last chunk (with ``stream_options.include_usage``): ``prompt_tokens`` counts
  every input token, cached or not; ``prompt_tokens_details.cached_tokens`` the cache reads;
  ``cache_creation_input_tokens`` the cache writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentcli.events import ThinkingBlock, ToolCallRequest
from agentcli.llm.types import Usage


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _PartialThinking:
    text: list[str] = field(default_factory=list)
    signature: str = ""


def _get(obj: Any, name: str) -> Any:
    """A field of a litellm object or of a plain dict (litellm passes both)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


class StreamAssembler:
    """Feed it every chunk of a litellm stream; read the whole response at the end."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_PartialCall] = []
        self._slot: dict[int, _PartialCall] = {}
        """The call each stream index is filling now."""
        self._thinking: list[_PartialThinking | ThinkingBlock] = []
        self._open_thinking: _PartialThinking | None = None
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.raw_usage: Any = None
        """litellm's usage object, for its cost tables (cache prices included)."""

    def add(self, chunk: Any) -> tuple[str, str]:
        """Take one chunk; return its text and its reasoning (either possibly empty)."""
        usage = _get(chunk, "usage")
        if usage is not None and (_get(usage, "prompt_tokens") or _get(usage, "completion_tokens")):
            self.raw_usage = usage
            self.usage = _usage(usage)
        choices = _get(chunk, "choices") or []
        if not choices:
            return "", ""
        choice = choices[0]
        if _get(choice, "finish_reason"):
            self.finish_reason = _get(choice, "finish_reason")
        delta = _get(choice, "delta")
        if delta is None:
            return "", ""
        for fragment in _get(delta, "tool_calls") or []:
            self._add_fragment(fragment)
        for block in _get(delta, "thinking_blocks") or []:
            self._add_thinking(block)
        reasoning = _get(delta, "reasoning_content") or ""
        if reasoning:
            self._reasoning.append(reasoning)
        text = _get(delta, "content") or ""
        if text:
            self._text.append(text)
        return text, reasoning

    def _add_fragment(self, fragment: Any) -> None:
        index = _get(fragment, "index")
        index = index if isinstance(index, int) else len(self._calls)
        call_id = _get(fragment, "id") or ""
        partial = self._slot.get(index)
        if partial is None or (call_id and partial.id and call_id != partial.id):
            partial = _PartialCall()
            self._calls.append(partial)
            self._slot[index] = partial
        if call_id:
            partial.id = call_id
        function = _get(fragment, "function")
        if function is not None:
            name = _get(function, "name")
            if name:
                partial.name = name
            arguments = _get(function, "arguments")
            if isinstance(arguments, dict):  # a provider that sends whole objects
                partial.arguments.append(json.dumps(arguments))
            elif arguments:
                partial.arguments.append(arguments)

    def _add_thinking(self, block: Any) -> None:
        if _get(block, "type") == "redacted_thinking":
            self._open_thinking = None
            self._thinking.append(ThinkingBlock(type="redacted_thinking", data=str(_get(block, "data") or "")))
            return
        if self._open_thinking is None:
            self._open_thinking = _PartialThinking()
            self._thinking.append(self._open_thinking)
        text = _get(block, "thinking")
        if text:
            self._open_thinking.text.append(str(text))
        signature = _get(block, "signature")
        if signature:
            self._open_thinking.signature = str(signature)
            self._open_thinking = None  # a signature closes the block

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    @property
    def thinking_blocks(self) -> list[ThinkingBlock]:
        """Whole blocks, in order; a block whose signature never came is left out (the API would
        refuse it, and the reply it belonged to was cut short anyway)."""
        blocks: list[ThinkingBlock] = []
        for item in self._thinking:
            if isinstance(item, ThinkingBlock):
                blocks.append(item)
            elif item.signature:
                blocks.append(ThinkingBlock(thinking="".join(item.text), signature=item.signature))
        return blocks

    @property
    def empty(self) -> bool:
        """Nothing came: no text, no reasoning, no call (a server that stopped before answering)."""
        return not (self._text or self._reasoning or self._calls or self._thinking)

    @property
    def cut_in_a_call(self) -> bool:
        """The stream stopped inside a tool call: its arguments are not whole JSON though the
        reply did not end for the output limit (litellm makes up ``stop`` for a stream that just ends)."""
        if self.finish_reason in ("tool_calls", "length"):
            return False
        return not all(_whole(partial) for partial in self._calls)

    def tool_calls(self, id_prefix: str) -> list[ToolCallRequest]:
        """Assembled calls in the order they began; calls the provider sent without an id get one.

        A call the output limit cut short (``length``, its arguments not whole JSON) is left out:
        the model did not finish making it, and running it as a call with broken JSON would tell the
        model "not valid JSON" rather than that its reply was too long, so it would write the same
        call again and be cut again. The reply ends ``length`` and the turn says so instead.
        """
        return [
            ToolCallRequest(id=partial.id or f"{id_prefix}_{position}", name=partial.name,
                            arguments="".join(partial.arguments))
            for position, partial in enumerate(self._calls)
            if self.finish_reason != "length" or _whole(partial)
        ]


def _whole(partial: _PartialCall) -> bool:
    """The call's arguments are complete JSON (or absent: a call without arguments)."""
    raw = "".join(partial.arguments).strip()
    if not raw:
        return True
    try:
        json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def _usage(usage: Any) -> Usage:
    details = _get(usage, "prompt_tokens_details")
    cached = _get(details, "cached_tokens") if details is not None else None
    cache_read = _get(usage, "cache_read_input_tokens") or cached or 0
    cache_write = _get(usage, "cache_creation_input_tokens") or 0
    return Usage(
        input_tokens=int(_get(usage, "prompt_tokens") or 0),
        output_tokens=int(_get(usage, "completion_tokens") or 0),
        cache_read_tokens=int(cache_read),
        cache_write_tokens=int(cache_write),
    )
