"""Turning streamed chunks into one response: text, tool calls from fragments, usage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentcli.events import ToolCallRequest
from agentcli.llm.types import Usage


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Feed it every chunk of an OpenAI-style stream; read the whole response at the end.

    Tool calls arrive as fragments keyed by ``index``: the first carries id and name, later ones
    carry pieces of the JSON arguments. Some providers repeat the id on every fragment, some
    never send one; both are handled.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def add(self, chunk: Any) -> str:
        """Take one chunk; return its text (possibly empty)."""
        usage = getattr(chunk, "usage", None)
        if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
            self.usage = Usage(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return ""
        choice = choices[0]
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        delta = choice.delta
        if delta is None:
            return ""
        for fragment in getattr(delta, "tool_calls", None) or []:
            index = fragment.index if fragment.index is not None else len(self._calls)
            partial = self._calls.setdefault(index, _PartialCall())
            if fragment.id:
                partial.id = fragment.id
            function = fragment.function
            if function is not None:
                if function.name:
                    partial.name = function.name
                if function.arguments:
                    partial.arguments.append(function.arguments)
        text = getattr(delta, "content", None) or ""
        if text:
            self._text.append(text)
        return text

    @property
    def text(self) -> str:
        return "".join(self._text)

    def tool_calls(self, id_prefix: str) -> list[ToolCallRequest]:
        """Assembled calls in index order; calls the provider sent without an id get one."""
        calls = []
        for position, index in enumerate(sorted(self._calls)):
            partial = self._calls[index]
            calls.append(
                ToolCallRequest(
                    id=partial.id or f"{id_prefix}_{position}",
                    name=partial.name,
                    arguments="".join(partial.arguments),
                )
            )
        return calls
