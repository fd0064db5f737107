"""A local server speaking the Anthropic Messages API (``POST /v1/messages``) with scripted replies.

litellm's ``anthropic/`` provider talks to it over real HTTP, so litellm's own request builder and
SSE parser run in the tests; only what the model "says" is scripted. Every request is recorded
(:attr:`AnthropicServer.requests` for bodies, :attr:`AnthropicServer.log` for headers and status).
Requests the real API would refuse are refused with its status and wording (see
``anthropic_rules.py``), and usage carries cache reads and writes from a deterministic model of
prompt caching (see ``anthropic_cache.py``).

Usage::

    server = AnthropicServer(api_key="test").start()
    server.add(Reply(thinking="Look first.", calls=[Call("read_file", {"path": "a.py"})]))
    stream = await litellm.acompletion(model="anthropic/claude-sonnet-4-5-20250929",
                                       api_base=server.base_url, api_key="test", stream=True, ...)

The stream for a reply is what the API sends: ``message_start`` (usage with the input and cache
counts, ``output_tokens`` 1), ``ping``, then per content block ``content_block_start`` /
``content_block_delta``... / ``content_block_stop`` (``thinking_delta`` fragments then one
``signature_delta``; ``redacted_thinking`` whole in its start event; ``text_delta``; for
``tool_use`` an empty ``input_json_delta`` then ``partial_json`` fragments), ``message_delta`` with
``stop_reason`` and ``usage.output_tokens``, and ``message_stop``. Non-streaming requests get the
whole ``message`` object.

This file runs past 400 lines because this docstring also carries the litellm facts the agent
depends on; the wire format and the server's rules live in one place next to them.

Measured with litellm 1.106.2 (each fact is asserted by a test in ``tests/llm_servers/``):

* ``api_base`` is the origin (``http://host:port``): litellm appends ``/v1/messages`` unless the
  base already ends with it. A base ending in ``/v1`` posts to ``/v1/v1/messages`` (404 →
  ``litellm.NotFoundError``), ``/v1/`` to ``/v1//v1/messages``. It sends ``x-api-key`` and
  ``anthropic-version: 2023-06-01``, no beta header for caching; only ``/v1/messages`` is called.
* Chunks (``ModelResponseStream``, first choice's delta, ``None`` fields dropped): the first delta
  carries ``role: "assistant"``. A thinking fragment is ``{"content": "", "reasoning_content": "Check th",
  "thinking_blocks": [{"type": "thinking", "thinking": "Check th"}], "provider_specific_fields":
  {"thinking_blocks": [same]}}``; the signature comes in its own chunk with ``"reasoning_content": ""``
  and ``"thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "…"}]``. A redacted block
  is one chunk with ``thinking_blocks: [{"type": "redacted_thinking", "data": "…"}]`` and no
  ``reasoning_content``. Text is ``{"content": "…"}``. A tool call opens with
  ``{"id": "toolu_…", "type": "function", "index": i, "function": {"name": …, "arguments": ""}}`` and
  continues with ``{"type": "function", "index": i, "function": {"arguments": "<fragment>"}}``
  (one of them the API's empty first fragment); ``index`` counts tool calls from 0 per reply.
  ``finish_reason``: ``end_turn`` → ``stop``, ``tool_use`` → ``tool_calls``, ``max_tokens`` → ``length``.
* Usage appears only with ``stream_options={"include_usage": True}``, in an extra last chunk with an
  empty delta after the finish chunk. ``prompt_tokens`` = input + cache writes + cache reads;
  ``prompt_tokens_details.cached_tokens`` = ``cache_read_input_tokens`` (also top-level on the usage);
  ``prompt_tokens_details.cache_creation_tokens`` = ``cache_creation_input_tokens`` (also top-level),
  split in ``cache_creation_token_details.ephemeral_5m_input_tokens``/``…_1h…``;
  ``prompt_tokens_details.text_tokens`` = the uncached input; ``completion_tokens_details.reasoning_tokens``.
* Sending thinking back: the assistant message ``{"role": "assistant", "content": None, "tool_calls":
  [...], "thinking_blocks": [{"type": "thinking", "thinking": "<whole text>", "signature": "…"}]}``
  becomes ``content: [thinking, tool_use…]`` and is accepted step after step. The blocks must be merged
  (text concatenated, signature added), as ``litellm.stream_chunk_builder`` does: sending the per-chunk
  pieces makes litellm drop the unsigned ones and send ``thinking: ""`` with the signature (400).
  ``content: ""`` is turned into a text block "[System: Empty message content sanitised to satisfy
  protocol]" between thinking and tool_use; use ``None``. Thinking blocks inline in a list ``content``
  are accepted too. Without the blocks litellm keeps ``thinking`` on (it drops it only with
  ``litellm.modify_params``) and the API's 400 comes back as ``litellm.BadRequestError``.
* ``cache_control`` passes through: on a system content block, on a tool (top-level key of the
  OpenAI tool → key of the Anthropic tool), on a message content block, on a string-content message
  (moved onto the text block litellm makes), on a ``tool`` message (onto the ``tool_result`` block).
* Errors (``num_retries=0``): 401 → ``AuthenticationError`` 401; 429 → ``RateLimitError`` 429 with
  ``litellm_response_headers["retry-after"]``; 529 → ``InternalServerError`` with status 500 (matched on
  "Overloaded" in the body); 500 → ``InternalServerError``; 503 → ``ServiceUnavailableError``; a 400
  "prompt is too long…" → ``ContextWindowExceededError`` (a ``BadRequestError``); other 400 →
  ``BadRequestError``. The message is ``"litellm.<Class>: AnthropicException - b'<body JSON>'"``. A stream
  cut mid-way, or an ``event: error`` inside it, → ``litellm.exceptions.MidStreamFallbackError`` (a
  ``ServiceUnavailableError``, status 500) with ``generated_content`` (text so far),
  ``is_pre_first_chunk`` and ``original_exception`` (``APIConnectionError`` / ``InternalServerError``).
  A 200 stream with no events raises nothing: one chunk, empty delta, ``finish_reason`` "stop". A
  stream whose body ends cleanly before ``message_stop`` also raises nothing and gets a made-up
  ``finish_reason`` "stop", even mid-way through a tool call's arguments (truncated JSON).
* Request repairs: no ``max_tokens`` → ``budget_tokens + 4096`` with thinking (5120 for 1024); an
  explicit ``thinking`` dict is sent unchanged (no cap below ``max_tokens``); ``reasoning_effort="low"``
  → ``budget_tokens`` 1024; consecutive same-role messages are merged; tool blocks in the history
  without ``tools`` get a ``dummy_tool``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.support.anthropic_cache import PromptCache, estimate_tokens, prompt_units
from tests.support.anthropic_rules import ApiError, ThinkingSigner, check_request
from tests.support.scripted_http import RecordedRequest, ResponseWriter, ScriptedHTTPServer

_ERROR_DEFAULTS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "scripted failure"),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "Not Found"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: (
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit "
        "(https://docs.claude.com/en/api/rate-limits); see the response headers for current usage. "
        "Please reduce the prompt length or the maximum tokens requested, or try again later.",
    ),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}


@dataclass
class Call:
    """A ``tool_use`` block; ``arguments`` may be a dict or raw (even broken) JSON text."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    """The ``toolu_…`` id; the server makes one up when ``None``."""

    @property
    def raw(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Thinking:
    """A ``thinking`` block; the server signs ``text`` unless ``signature`` is given."""

    text: str
    signature: str | None = None


@dataclass
class RedactedThinking:
    """A ``redacted_thinking`` block; the server makes up a verifiable ``data`` unless given."""

    data: str | None = None


@dataclass
class Text:
    """A ``text`` block."""

    text: str


Block = Thinking | RedactedThinking | Text | Call


@dataclass
class StreamError:
    """An ``event: error`` sent inside a 200 stream after ``after_events`` events, then the stream ends."""

    after_events: int = 1
    error_type: str = "overloaded_error"
    message: str = "Overloaded"


@dataclass
class Reply:
    """One scripted model response.

    Without ``blocks`` the content is, in order: a thinking block (``thinking``), a redacted
    thinking block (``redacted_thinking``), a text block (``text``), then one ``tool_use`` per call.
    """

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    thinking: str | None = None
    redacted_thinking: bool = False
    blocks: list[Block] | None = None
    """Explicit content blocks, in order; overrides the four fields above."""
    stop_reason: str | None = None
    """``tool_use`` when there are calls, ``end_turn`` otherwise, unless set (e.g. ``max_tokens``)."""
    output_tokens: int | None = None
    """Reported output tokens; by default estimated from the content like input tokens."""
    chunk_size: int = 4
    """Characters per streamed fragment of thinking, text and tool arguments."""
    delay_s: float = 0.0
    """Server-side pause between events (lets a test act mid-stream)."""
    cut_after: int | None = None
    """Drop the connection after this many events, before ``message_stop`` (a network failure)."""
    end_after: int | None = None
    """End the stream cleanly after this many events, before ``message_stop`` (a proxy or server
    that finished the HTTP body early: no transport error, just a message that never completes)."""
    stream_error: StreamError | None = None
    pings: int = 1

    def content(self) -> list[Block]:
        if self.blocks is not None:
            return list(self.blocks)
        blocks: list[Block] = []
        if self.thinking is not None:
            blocks.append(Thinking(self.thinking))
        if self.redacted_thinking:
            blocks.append(RedactedThinking())
        if self.text:
            blocks.append(Text(self.text))
        blocks.extend(self.calls)
        return blocks


@dataclass
class Fail:
    """An HTTP error answer in the API's error shape; type and message default by status."""

    status: int
    message: str | None = None
    error_type: str | None = None
    retry_after: float | None = None
    """Sent as the ``retry-after`` header (seconds), as the API does on 429."""

    def as_error(self) -> ApiError:
        default_type, default_message = _ERROR_DEFAULTS.get(self.status, ("api_error", "scripted failure"))
        headers = {} if self.retry_after is None else {"retry-after": f"{self.retry_after:g}"}
        return ApiError(self.status, self.error_type or default_type, self.message or default_message, headers)


@dataclass
class Empty:
    """A 200 event stream that ends cleanly without a single event."""


Script = Reply | Fail | Empty


class AnthropicServer(ScriptedHTTPServer[Script]):
    """Start with :meth:`start`; queue replies with :meth:`add`; read :attr:`requests`.

    Args:
        api_key: When set, requests must carry it in ``x-api-key`` (else 401 ``authentication_error``).
        models: When set, other model names get 404 ``not_found_error`` (``model: <name>``).
        strict_alternation: Reject same-role neighbours as the API used to (see ``anthropic_rules``).
        min_cacheable_tokens: Shortest prefix the cache writes (0; 1024 models Sonnet).
        secret: Key for thinking signatures; servers sharing it accept each other's blocks.
        context_window: When set, a prompt over it is refused ("prompt is too long"), and so is a
            prompt that leaves less than ``max_tokens`` of it, as the API refuses both (tokens as
            the prompt cache counts them).
    """

    def __init__(
        self,
        api_key: str | None = None,
        models: Collection[str] | None = None,
        strict_alternation: bool = False,
        min_cacheable_tokens: int = 0,
        secret: bytes = b"agentcli-anthropic-test-server",
        context_window: int | None = None,
    ) -> None:
        super().__init__()
        self.context_window = context_window
        self.api_key = api_key
        self.models = set(models) if models is not None else None
        self.strict_alternation = strict_alternation
        self.cache = PromptCache(min_tokens=min_cacheable_tokens)
        self.signer = ThinkingSigner(secret)
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """The ``api_base`` for litellm: the origin, because litellm appends ``/v1/messages`` itself."""
        return self.origin

    @property
    def messages_url(self) -> str:
        return f"{self.origin}/v1/messages"

    def responses(self) -> list[RecordedRequest]:
        """The logged ``/v1/messages`` requests, with the status each got."""
        return [entry for entry in self.log if entry.path == "/v1/messages"]

    # -- request handling ------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        digest = hashlib.sha256(f"{prefix}{next(self._ids)}".encode()).hexdigest()
        return f"{prefix}_01{digest[:22]}"

    def _error(self, out: ResponseWriter, error: ApiError) -> None:
        out.json(error.status, error.body(self._new_id("req")), headers=error.headers)

    def _respond(self, request: RecordedRequest, out: ResponseWriter) -> None:
        if request.method != "POST" or request.path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._error(out, ApiError(404, "not_found_error", "Not Found"))
            return
        if request.path == "/v1/messages":
            with self._changed:
                self.requests.append(request.body if isinstance(request.body, dict) else {"_raw": request.body})
        key = request.headers.get("x-api-key")
        if self.api_key is not None and key != self.api_key:
            message = "x-api-key header is required" if key is None else "invalid x-api-key"
            self._error(out, ApiError(401, "authentication_error", message))
            return
        if "anthropic-version" not in request.headers:
            self._error(out, ApiError(400, "invalid_request_error", "anthropic-version: header is required"))
            return
        body = request.body
        if request.path == "/v1/messages/count_tokens":
            units = prompt_units(body) if isinstance(body, dict) else []
            out.json(200, {"input_tokens": sum(unit.tokens for unit in units)})
            return
        error = check_request(body, self.signer, self.strict_alternation)
        if error is not None:
            self._error(out, error)
            return
        assert isinstance(body, dict)
        if self.context_window is not None:
            error = self._too_long(body, self.context_window)
            if error is not None:
                self._error(out, error)
                return
        if self.models is not None and body["model"] not in self.models:
            self._error(out, ApiError(404, "not_found_error", f"model: {body['model']}"))
            return
        item = self._next_item(body)
        if item is None:
            self._error(out, ApiError(500, "api_error", "the test script has no more replies"))
        elif isinstance(item, Fail):
            self._error(out, item.as_error())
        elif isinstance(item, Empty):
            out.open_stream("text/event-stream; charset=utf-8", {"request-id": self._new_id("req")})
            out.end_stream()
        elif body.get("stream"):
            self._stream(out, body, item)
        else:
            out.json(200, self._message(body, item), headers={"request-id": self._new_id("req")})

    @staticmethod
    def _too_long(body: dict[str, Any], window: int) -> ApiError | None:
        prompt = sum(unit.tokens for unit in prompt_units(body))
        if prompt > window:
            return ApiError(400, "invalid_request_error", f"prompt is too long: {prompt} tokens > {window} maximum")
        if prompt + body["max_tokens"] > window:
            return ApiError(400, "invalid_request_error",
                            f"input length and `max_tokens` exceed context limit: {prompt} + {body['max_tokens']} > "
                            f"{window}, decrease input length or `max_tokens` and try again")
        return None

    # -- building replies ------------------------------------------------------------------

    def _resolved(self, reply: Reply) -> list[dict[str, Any]]:
        """The reply's content blocks as API objects, with ids, signatures and data filled in."""
        blocks: list[dict[str, Any]] = []
        for block in reply.content():
            if isinstance(block, Thinking):
                signature = block.signature if block.signature is not None else self.signer.sign(block.text)
                blocks.append({"type": "thinking", "thinking": block.text, "signature": signature})
            elif isinstance(block, RedactedThinking):
                blocks.append({"type": "redacted_thinking", "data": block.data or self.signer.redacted_data()})
            elif isinstance(block, Text):
                blocks.append({"type": "text", "text": block.text})
            else:
                blocks.append({"type": "tool_use", "id": block.id or self._new_id("toolu"), "name": block.name, "raw": block.raw})
        return blocks

    def _usage(self, body: dict[str, Any], reply: Reply, blocks: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
        usage = self.cache.account(body).as_usage()
        usage["service_tier"] = "standard"
        if reply.output_tokens is not None:
            return usage, reply.output_tokens
        spoken = [block.get("thinking") or block.get("text") or block.get("raw") or block.get("data") or "" for block in blocks]
        return usage, sum(estimate_tokens(text) for text in spoken if text) or 1

    def _stop_reason(self, reply: Reply, blocks: list[dict[str, Any]]) -> str:
        if reply.stop_reason is not None:
            return reply.stop_reason
        return "tool_use" if any(block["type"] == "tool_use" for block in blocks) else "end_turn"

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        blocks = self._resolved(reply)
        usage, output_tokens = self._usage(body, reply, blocks)
        content = []
        for block in blocks:
            if block["type"] == "tool_use":
                raw = block.pop("raw")
                block["input"] = json.loads(raw) if raw.strip() else {}
            content.append(block)
        return {
            "id": self._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": self._stop_reason(reply, blocks),
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": output_tokens},
        }

    def _events(self, body: dict[str, Any], reply: Reply) -> Iterator[dict[str, Any]]:
        blocks = self._resolved(reply)
        usage, output_tokens = self._usage(body, reply, blocks)
        yield {
            "type": "message_start",
            "message": {
                "id": self._new_id("msg"),
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {**usage, "output_tokens": 1},
            },
        }
        for _ in range(reply.pings):
            yield {"type": "ping"}
        size = max(1, reply.chunk_size)

        def pieces(text: str) -> Iterator[str]:
            for start in range(0, len(text), size):
                yield text[start : start + size]

        for index, block in enumerate(blocks):
            kind = block["type"]
            if kind == "thinking":
                opened = {"type": "thinking", "thinking": "", "signature": ""}
                yield {"type": "content_block_start", "index": index, "content_block": opened}
                for piece in pieces(block["thinking"]):
                    yield {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}
                yield {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": block["signature"]}}
            elif kind == "redacted_thinking":
                yield {"type": "content_block_start", "index": index, "content_block": block}
            elif kind == "text":
                yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
                for piece in pieces(block["text"]):
                    yield {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                yield {"type": "content_block_start", "index": index, "content_block": start}
                yield {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}}
                for piece in pieces(block["raw"]):
                    yield {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}
            yield {"type": "content_block_stop", "index": index}
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": self._stop_reason(reply, blocks), "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
        yield {"type": "message_stop"}

    def _stream(self, out: ResponseWriter, body: dict[str, Any], reply: Reply) -> None:
        out.open_stream("text/event-stream; charset=utf-8", {"request-id": self._new_id("req")})
        for sent, event in enumerate(self._events(body, reply)):
            if reply.cut_after is not None and sent >= reply.cut_after:
                out.cut()
                return
            if reply.end_after is not None and sent >= reply.end_after:
                break
            if reply.stream_error is not None and sent >= reply.stream_error.after_events:
                error = {"type": "error", "error": {"type": reply.stream_error.error_type, "message": reply.stream_error.message}}
                out.chunk(_sse(error))
                out.end_stream()
                return
            out.chunk(_sse(event))
            if reply.delay_s:
                time.sleep(reply.delay_s)
        out.end_stream()


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()

