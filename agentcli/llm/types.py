"""What a model client takes and what its stream yields."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from agentcli.events import NoticeSeverity, ThinkingBlock, ToolCallRequest
from agentcli.llm.limits import ModelLimits

Message = dict[str, Any]
"""One chat message in the OpenAI format litellm takes (role, content, tool_calls, tool_call_id,
and on an assistant message of a thinking model, ``thinking_blocks``)."""

Effort = Literal["low", "medium", "high"]


@dataclass(frozen=True)
class Reasoning:
    """How much a thinking model may reason before it answers: an effort, or a token budget."""

    effort: Effort | None = None
    budget_tokens: int | None = None


@dataclass(frozen=True)
class ModelRequest:
    """One call: the model, the conversation, the tools the active phase offers, and its limits."""

    model: str
    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str | dict[str, Any] | None = None
    api_base: str | None = None
    max_tokens: int | None = None
    """The configured output limit (None: from litellm's model information). An output limit is
    always sent: a model that never stops would otherwise keep one call running for minutes."""
    context_window: int | None = None
    """The configured context window of the model (None: from litellm's model information)."""
    reasoning: Reasoning | None = None
    """Ask a thinking model to reason (None: the provider's default, usually off)."""


@dataclass(frozen=True)
class TextChunk:
    """A piece of streamed assistant text."""

    text: str


@dataclass(frozen=True)
class ReasoningChunk:
    """A piece of the model's streamed reasoning (shown apart from the reply)."""

    text: str


@dataclass(frozen=True)
class ClientNotice:
    """Something the user should know about how the model is called (shown once)."""

    text: str
    severity: NoticeSeverity = "info"
    """``warning`` when a setting of the user's could not apply as given (a lowered output limit
    or thinking budget, a reasoning setting ignored); ``info`` for what is merely assumed."""


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
    """Tokens of one call. ``input_tokens`` counts every input token, cached or not."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache (billed at a fraction)."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache (billed at a premium, once)."""
    estimated: bool = False
    """The server reported no usage: the figures are litellm's estimate, not a measure."""


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
    reasoning: str = ""
    """The model's reasoning, as streamed (for the reader; what goes back is ``thinking_blocks``)."""
    thinking_blocks: list[ThinkingBlock] = field(default_factory=list)
    """Anthropic-style thinking blocks, whole and signed, to send back exactly as received."""


StreamItem = TextChunk | ReasoningChunk | RetryNotice | ClientNotice | ModelResponse


class ModelClient(Protocol):
    """Anything that can stream a model response: litellm, the replay model, a test double."""

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Yield text and reasoning chunks and retry notices, then exactly one :class:`ModelResponse`.

        Raises:
            ModelCallError: the call failed for good (``kind`` says why, ``retryable`` whether
                retries ran out on a transient failure).
        """
        ...


ErrorKind = Literal[
    "auth", "bad_model", "network", "rate_limit", "overloaded", "server", "stalled", "cut_stream",
    "overflow", "refused", "bad_request",
]
"""Why a model call failed, classified once at the model edge (``llm/errors.py``):

- ``auth``: the key is missing or rejected; ``bad_model``: no such provider or model;
- ``network``: the server cannot be reached (DNS, refused connection, TLS);
- ``rate_limit``, ``overloaded``, ``server``: the provider said try later;
- ``stalled``: no bytes for too long; ``cut_stream``: the stream broke off or ended empty;
- ``overflow``: the conversation is longer than the model's context window;
- ``refused``: the provider declined to answer (content policy);
- ``bad_request``: the provider rejected the request for another reason.
"""

TRANSIENT: frozenset[ErrorKind] = frozenset({"network", "rate_limit", "overloaded", "server", "stalled", "cut_stream"})
"""Kinds worth retrying: the same request may succeed later."""


class ModelCallError(Exception):
    """A model call failed and will not be retried (any more)."""

    def __init__(
        self, message: str, *, kind: ErrorKind = "bad_request", status: int | None = None, detail: str | None = None,
        window: int | None = None, prompt_tokens: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.status = status
        self.detail = detail
        """The provider's raw error text, for the log only."""
        self.window = window
        """For an overflow: the context window the provider said it has, when it said."""
        self.prompt_tokens = prompt_tokens
        """For an overflow: how many tokens the provider counted in the request, when it said."""

    @property
    def retryable(self) -> bool:
        """The failure was transient (the retries ran out on it)."""
        return self.kind in TRANSIENT


@runtime_checkable
class KnowsLimits(Protocol):
    """A model client that can say a model's output limit and context window before calling it."""

    async def model_limits(
        self, model: str, api_base: str | None, *, max_tokens: int | None = None, context_window: int | None = None,
        reasoning: Reasoning | None = None,
    ) -> ModelLimits: ...
