"""A local OpenAI-compatible chat server that plays scripted replies, for tests and benchmarks.

litellm talks to it over real HTTP with real SSE streaming, so its own parser runs in the tests;
only what the model "says" is scripted. Every request body is recorded for assertions, and one the
real API would refuse (``openai_rules``: a tool message not answering the call before it, a call
left unanswered, null content) gets the API's 400 instead of a reply. ``OpenAIServer(provider=
"deepseek")`` refuses as DeepSeek does instead, and streams a reply's ``reasoning`` first as
``reasoning_content`` deltas, as DeepSeek's thinking mode does.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.openai_rules import Provider, check_chat_request

_CALL_IDS = itertools.count(1)


@dataclass
class Call:
    """A tool call the scripted model makes; ``arguments`` may be a dict or raw (even broken) JSON."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)

    @property
    def raw(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted model response."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    reasoning: str = ""
    """Streamed as ``reasoning_content`` deltas before the text (DeepSeek's thinking mode)."""
    usage: tuple[int, int] | None = (12, 7)
    chunk_size: int = 4
    """Characters per streamed fragment: text and tool arguments both arrive split."""
    delay_s: float = 0.0
    """Sleep between fragments (lets a test pause mid-stream)."""
    finish_reason: str | None = None
    """``tool_calls`` when there are calls, ``stop`` otherwise, unless set (``length``: the output
    limit was reached, and a call's arguments may be cut short: give them as raw text)."""
    end_after: int | None = None
    """End the stream after this many chunks, before the finish chunk and ``[DONE]`` (a server or
    proxy that gave up mid-reply; the body has no length, so the client sees a clean end)."""


@dataclass
class Fail:
    """An HTTP error reply."""

    status: int
    message: str = "scripted failure"
    retry_after: float | str | None = None
    """Sent as ``Retry-After``: seconds, or the text as given (an HTTP date)."""
    retry_after_ms: int | None = None
    """Sent as ``retry-after-ms`` (OpenAI's finer hint, which its SDK reads first)."""


Script = Reply | Fail | Callable[[dict[str, Any]], "Reply | Fail"]


class OpenAIServer:
    """Start with :meth:`start`; queue replies with :meth:`add`; read :attr:`requests`."""

    def __init__(self, context_limit: int | None = None, provider: Provider = "openai") -> None:
        self.context_limit = context_limit
        self.provider: Provider = provider
        """Whose rules a request is checked by (``openai_rules``)."""
        """When set, a request whose prompt plus ``max_tokens`` passes this many tokens is refused
        as OpenAI refuses it (400 ``context_length_exceeded``), and usage reports the prompt's
        size as this server counts it (``count_tokens``)."""
        self.rejected: list[dict[str, Any]] = []
        """Requests refused for their length."""
        self.refused: list[tuple[dict[str, Any], str]] = []
        """Requests refused for breaking the API's rules, with the message each got."""
        self.requests: list[dict[str, Any]] = []
        self.user_agents: list[str] = []
        """The ``User-Agent`` of each request, in order (which HTTP client litellm used)."""
        self.script: deque[Script] = deque()
        self.default: Script | None = None
        """Played when the script is empty (e.g. a model that loops forever)."""
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def add(self, *replies: Script) -> None:
        self.script.extend(replies)

    def start(self) -> OpenAIServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            # Each SSE chunk is its own small write; with Nagle's algorithm on, a write waits for
            # the client's (delayed) acknowledgement of the previous one, up to 40 ms a reply.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.user_agents.append(self.headers.get("User-Agent", ""))
                owner._handle(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval because stop() waits for the serving loop's next poll: the default
        # 0.5 s made each of the ~100 tests using this server up to half a second slower.
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> OpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, body: dict[str, Any]) -> Reply | Fail:
        with self._lock:
            self.requests.append(body)
            item = self.script.popleft() if self.script else self.default
        if item is None:
            return Fail(500, "the test script has no more replies")
        return item(body) if callable(item) else item

    def _handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        error = check_chat_request(body, self.provider)
        if error is not None:
            with self._lock:
                self.requests.append(body)
                self.refused.append((body, error.message))
            _send_json(handler, 400, error.body())
            return
        if self.context_limit is not None:
            prompt = count_tokens(body)
            asked = prompt + int(body.get("max_tokens") or 0)
            if asked > self.context_limit:
                with self._lock:
                    self.rejected.append(body)
                message = (f"This model's maximum context length is {self.context_limit} tokens. However, you "
                           f"requested {asked} tokens ({prompt} in the messages, {body.get('max_tokens') or 0} "
                           "in the completion). Please reduce the length of the messages or completion.")
                error = {"message": message, "type": "invalid_request_error", "param": "messages",
                         "code": "context_length_exceeded"}
                _send_json(handler, 400, {"error": error})
                return
        reply = self._next(body)
        if isinstance(reply, Reply) and self.context_limit is not None and reply.usage is not None:
            reply = replace(reply, usage=(count_tokens(body), reply.usage[1]))
        if isinstance(reply, Fail):
            payload = json.dumps({"error": {"message": reply.message, "type": "server_error"}}).encode()
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            if reply.retry_after is not None:
                handler.send_header("Retry-After", str(reply.retry_after))
            if reply.retry_after_ms is not None:
                handler.send_header("retry-after-ms", str(reply.retry_after_ms))
            handler.end_headers()
            handler.wfile.write(payload)
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        try:
            for sent, chunk in enumerate(_chunks(reply, body.get("model", "test-model"), include_usage)):
                if reply.end_after is not None and sent >= reply.end_after:
                    return
                handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                handler.wfile.flush()
                if reply.delay_s:
                    time.sleep(reply.delay_s)
            handler.wfile.write(b"data: [DONE]\n\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away mid-stream (a pause): nothing to do


def count_tokens(body: dict[str, Any]) -> int:
    """This server's token count of a request: a character count of its messages and tools, by
    four (what a provider would count, near enough, and the same every time)."""
    return len(json.dumps(body.get("messages", []))) // 4 + len(json.dumps(body.get("tools", []))) // 4


def _send_json(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _chunks(reply: Reply, model: str, include_usage: bool) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    size = max(1, reply.chunk_size)
    yield chunk({"role": "assistant", "content": ""})
    for start in range(0, len(reply.reasoning), size):
        yield chunk({"reasoning_content": reply.reasoning[start : start + size]})
    for start in range(0, len(reply.text), size):
        yield chunk({"content": reply.text[start : start + size]})
    for index, call in enumerate(reply.calls):
        raw = call.raw
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": f"call_{next(_CALL_IDS)}",
                        "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }
                ]
            }
        )
        for start in range(0, len(raw), size):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": raw[start : start + size]}}]})
    yield chunk({}, reply.finish_reason or ("tool_calls" if reply.calls else "stop"))
    if include_usage and reply.usage is not None:
        prompt, completion = reply.usage
        yield {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": model,
            "choices": [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }
