"""The HTTP plumbing shared by the scripted provider servers (Anthropic, Ollama).

A provider server is a real HTTP/1.1 server on 127.0.0.1 that litellm reaches through its own
httpx client, so litellm's provider code (request building, stream parsing, error mapping) runs
for real in the tests; only what the model "says" is scripted. This module owns the parts that do
not depend on the wire format: the thread, the script queue, the request log, and how a response
is written (a JSON body with a length, or a chunked stream that can be cut off mid-way).

Streams use chunked transfer encoding on purpose: the real APIs do, and only with it can a test
cut a stream the way a dropped connection does (the socket closes before the terminating chunk,
which httpx reports as ``RemoteProtocolError``). With HTTP/1.0-style close-delimited bodies, as
``openai_server.py`` uses, a cut stream is indistinguishable from a finished one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, TypeVar

ScriptItem = TypeVar("ScriptItem")
_S = TypeVar("_S", bound="ScriptedHTTPServer[Any]")


@dataclass
class RecordedRequest:
    """One HTTP request the server received, whatever it answered."""

    method: str
    path: str
    """The path without the query string (``/v1/messages``)."""
    query: str
    headers: dict[str, str]
    """Header names lower-cased; the last value wins for repeated headers."""
    body: Any
    """The parsed JSON body, ``None`` for an empty body, the raw text when it is not JSON."""
    status: int | None = None
    """The status the server answered with (set once the response has started)."""


class ResponseWriter:
    """Writes one response on a handler: a JSON body, or a chunked stream that may be cut.

    Args:
        handler: The request's ``BaseHTTPRequestHandler``.
        record: The log entry whose ``status`` is filled in when the response starts.
    """

    def __init__(self, handler: BaseHTTPRequestHandler, record: RecordedRequest) -> None:
        self._handler = handler
        self._record = record

    def json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        """Send a complete JSON response with a Content-Length."""
        data = json.dumps(payload).encode()
        self._start(status, "application/json", headers, length=len(data))
        self._handler.wfile.write(data)
        self._handler.wfile.flush()

    def text(self, status: int, body: str) -> None:
        """Send a complete plain-text response."""
        data = body.encode()
        self._start(status, "text/plain; charset=utf-8", None, length=len(data))
        self._handler.wfile.write(data)
        self._handler.wfile.flush()

    def open_stream(self, content_type: str, headers: dict[str, str] | None = None) -> None:
        """Start a 200 chunked response; follow with :meth:`chunk` and :meth:`end_stream`."""
        self._start(200, content_type, headers, length=None)

    def chunk(self, data: bytes) -> None:
        """Send one HTTP chunk (one SSE event or one NDJSON line) and flush it."""
        if not data:
            return
        self._handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self._handler.wfile.flush()

    def end_stream(self) -> None:
        """Send the terminating zero-length chunk: the stream ended cleanly."""
        self._handler.wfile.write(b"0\r\n\r\n")
        self._handler.wfile.flush()

    def cut(self) -> None:
        """Drop the connection mid-stream, as a network failure or a crashed upstream would."""
        self._handler.close_connection = True
        self._handler.wfile.flush()
        # shutdown (not just close) so the client sees EOF now, not when the thread ends.
        with contextlib.suppress(OSError):
            self._handler.connection.shutdown(socket.SHUT_RDWR)

    def _start(self, status: int, content_type: str, headers: dict[str, str] | None, length: int | None) -> None:
        self._record.status = status
        handler = self._handler
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        if length is None:
            handler.send_header("Transfer-Encoding", "chunked")
            handler.send_header("Cache-Control", "no-cache")
        else:
            handler.send_header("Content-Length", str(length))
        handler.end_headers()


class ScriptedHTTPServer(Generic[ScriptItem]):
    """Base class: a threaded HTTP server playing a queue of scripted items.

    Subclasses implement :meth:`_respond`, which gets every request (already logged) and a
    :class:`ResponseWriter`, and use :meth:`_next_item` to take the next scripted item.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        """Bodies of the model calls (the provider's chat endpoint), in arrival order."""
        self.log: list[RecordedRequest] = []
        """Every request on any path, with its headers and the status answered."""
        self.script: deque[ScriptItem | Callable[[dict[str, Any]], ScriptItem]] = deque()
        self.default: ScriptItem | Callable[[dict[str, Any]], ScriptItem] | None = None
        """Played when the script is empty (e.g. a model that loops forever)."""
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``, with no path."""
        assert self._server is not None, "start() the server first"
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def add(self, *items: ScriptItem | Callable[[dict[str, Any]], ScriptItem]) -> None:
        """Queue scripted items; a callable gets the request body and returns an item."""
        with self._lock:
            self.script.extend(items)

    def start(self: _S) -> _S:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.1 for chunked streams and keep-alive, like the real APIs.
            protocol_version = "HTTP/1.1"
            # An idle keep-alive connection (litellm pools them) ends its thread after this long
            # instead of living until the test process exits.
            timeout = 10

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                owner._dispatch(self, "GET")

            def do_POST(self) -> None:
                owner._dispatch(self, "POST")

            def do_HEAD(self) -> None:
                owner._dispatch(self, "HEAD")

            def do_DELETE(self) -> None:
                owner._dispatch(self, "DELETE")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval because stop() waits for the serving loop's next poll: the default
        # 0.5 s made every test that starts its own server half a second slower.
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- waiting on conditions (instead of sleeping in tests) -------------------------------

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        """Block until ``predicate()`` holds (checked after every request); raise on timeout.

        This blocks the calling thread: from async code use :meth:`until`, or litellm's own
        background work on the event loop (e.g. its success logging) can never run.
        """
        with self._changed:
            if not self._changed.wait_for(predicate, timeout=timeout):
                raise TimeoutError(f"condition not met within {timeout} s; log: {[(r.method, r.path) for r in self.log]}")

    async def until(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        """:meth:`wait_for` without blocking the event loop."""
        await asyncio.to_thread(self.wait_for, predicate, timeout)

    # -- for subclasses --------------------------------------------------------------------

    def _next_item(self, body: dict[str, Any]) -> ScriptItem | None:
        """Take the next scripted item (or the default), resolving callables with ``body``."""
        with self._lock:
            item = self.script.popleft() if self.script else self.default
        if item is None:
            return None
        return item(body) if callable(item) else item

    def _respond(self, request: RecordedRequest, out: ResponseWriter) -> None:
        raise NotImplementedError

    def _dispatch(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length", "0") or 0)
        raw = handler.rfile.read(length) if length else b""
        body: Any
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        # Not urlsplit: it reads a path like "//v1/messages" (a base URL ending in "/") as a host.
        path, _, query = handler.path.partition("?")
        record = RecordedRequest(
            method=method,
            path=path,
            query=query,
            headers={name.lower(): value for name, value in handler.headers.items()},
            body=body,
        )
        with self._changed:
            self.log.append(record)
        try:
            self._respond(record, ResponseWriter(handler, record))
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True  # the client went away mid-stream: nothing to do
        finally:
            with self._changed:
                self._changed.notify_all()

