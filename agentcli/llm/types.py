"""What a model client takes and what its stream yields."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentcli.events import ToolCallRequest

Message = dict[str, Any]
"""One chat message in the OpenAI format litellm takes (role, content, tool_calls, tool_call_id)."""


@dataclass(frozen=True)
class ModelRequest:
    """One call: the model, the conversation, and the tools the active phase offers."""

    model: str
    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str | dict[str, Any] | None = None
    api_base: str | None = None


@dataclass(frozen=True)
class TextChunk:
    """A piece of streamed assistant text."""

    text: str


@dataclass(frozen=True)
class RetryNotice:
    """The call failed with a retryable error and is tried again after ``delay_s``.

    Text already streamed for this call is void: the retried call starts the answer over.
    """

    attempt: int
    max_attempts: int
    delay_s: float
    error: str


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ModelResponse:
    """The whole response, yielded last: text, tool calls assembled from fragments, usage."""

    text: str
    tool_calls: list[ToolCallRequest]
    finish_reason: str | None
    usage: Usage | None
    cost: float | None
    """US dollars; None when the price of the model is unknown."""
    model: str


StreamItem = TextChunk | RetryNotice | ModelResponse


class ModelClient(Protocol):
    """Anything that can stream a model response: litellm, the replay model, a test double."""

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Yield text chunks and retry notices, then exactly one :class:`ModelResponse`.

        Raises:
            ModelCallError: the call failed for good (``retryable`` tells whether retries ran out).
        """
        ...


class ModelCallError(Exception):
    """A model call failed and will not be retried."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        """True when the error was transient (429, 5xx) and the retries ran out."""
        self.status = status
