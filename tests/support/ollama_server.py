"""A local server speaking Ollama's native API (``POST /api/chat``) with scripted replies.

litellm's ``ollama_chat/`` provider talks to it over real HTTP, so litellm's request builder and
NDJSON stream parser run in the tests; only what the model "says" is scripted. Every request is
recorded (:attr:`OllamaServer.requests` for chat bodies, :attr:`OllamaServer.log` for all paths).

The wire format follows Ollama's ``api/types.go`` and ``server/routes.go`` (checked against the
ollama/ollama repository, August 2026):

* A streamed chat reply is NDJSON, one object per line::

      {"model": "qwen3:8b", "created_at": "2026-…Z", "message": {"role": "assistant", "content": "Hel"}, "done": false}
      … thinking arrives as ``"message": {"role": "assistant", "content": "", "thinking": "…"}`` lines first …
      {"model": …, "message": {"role": "assistant", "content": "", "tool_calls": [{"id": "call_ab12cd34",
          "function": {"index": 0, "name": "read_file", "arguments": {"path": "a.py"}}}]}, "done": false}
      {"model": …, "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop",
          "total_duration": …, "load_duration": …, "prompt_eval_count": 26, "prompt_eval_duration": …,
          "eval_count": 12, "eval_duration": …}

  Tool calls arrive whole (``arguments`` is a JSON object, never a string fragment), by default one
  call per line as Ollama's tool parser emits them; ``Reply(calls_per_line=False)`` puts them all in
  one line. Ollama ≥ 0.4.7 numbers the calls of a reply in ``function.index`` and ≥ 0.12.10
  gives each an ``id`` (``call_`` + 8 characters); ``OllamaServer(legacy_tool_calls=True)`` sends
  the older shape without either. ``done_reason`` is ``stop`` even after tool calls (Ollama has no ``tool_calls`` reason);
  ``length`` when the reply hit ``num_predict``. Zero counts are omitted (Go ``omitempty``), as
  when the whole prompt was already in Ollama's KV cache.
* ``stream: false`` gets one JSON object: the final line with the whole message.
* Errors are ``{"error": "…"}``. An unknown model on ``/api/chat`` or ``/api/show`` is
  404 ``model 'x' not found`` (Ollama ≥ 0.3.11; older servers said
  ``model "x" not found, try pulling it first``, which ``not_found_message`` can restore); tools
  for a model without the ``tools`` capability are 400
  ``registry.ollama.ai/library/<name>:<tag> does not support tools``; ``think`` for a model
  without ``thinking`` is 400 ``"<model>" does not support thinking``; a missing model name is 400
  ``model is required``. An error after the stream started is an ``{"error": "…"}`` line.
* A body Go's decoder cannot bind to ``api.ChatRequest`` is 400 with the decoder's text, e.g.
  ``json: cannot unmarshal array into Go struct field Message.messages.content of type string``
  (OpenAI-style content parts) or ``… cannot unmarshal string into Go struct field
  ToolCallFunction.messages.tool_calls.function.arguments …`` (arguments as JSON text).
* ``GET /api/tags`` lists the configured models and ``POST /api/show`` describes one (capabilities,
  a template mentioning tools when the model has them, and ``model_info``: GGUF metadata keyed by
  ``general.*`` and ``<architecture>.*``, the trained window as ``<architecture>.context_length``,
  e.g. ``"qwen3.context_length": 40960``). ``show_status`` makes ``/api/show`` fail instead.

Measured with litellm 1.106.2 (each fact is asserted by ``tests/llm_servers/test_ollama.py``):

* ``api_base`` is the origin; litellm posts to ``/api/chat`` with ``{"model", "messages" (each with
  ``"images": []``), "options": {}, "stream": true}`` plus ``tools`` and ``think`` (``reasoning_effort``
  → ``think: true``). After a call its success logging posts ``/api/show`` ``{"name": model}`` to the
  same base (litellm caches the answer per model and base; the post runs on the event loop, so
  wait for it with :meth:`until`, not :meth:`wait_for`).
* Every streamed tool call comes out with ``index`` 0, whatever Ollama's ``function.index`` says:
  ``{"id": "<uuid4 made up by litellm>", "type": "function", "index": 0, "function": {"name": …,
  "arguments": "<JSON text>"}}``. Two calls on two lines therefore merge under an index-keyed
  assembler (``stream_chunk_builder`` yields one call with arguments ``{"path": "a.py"}{"path": "b.py"}``
  and the second id); key by the (unique) ``id`` instead. Calls sharing one line get 0 and 1.
* Thinking lines become ``{"reasoning_content": "…"}`` deltas (no ``thinking_blocks``). ``finish_reason``
  is ``tool_calls`` when any call was seen (Ollama says ``stop``), else Ollama's ``done_reason``.
* Usage only with ``include_usage``: ``prompt_tokens`` = ``prompt_eval_count``, ``completion_tokens`` =
  ``eval_count``, no ``prompt_tokens_details``. When a count is absent litellm estimates both itself.
* Sent back, tool calls become ``{"function": {"name", "arguments": <object>}}`` (no id, no index);
  tool results ``{"role": "tool", "content", "images": [], "tool_call_id"}``.
* Errors (``num_retries=0``): unknown model 404 → ``NotFoundError``; 400 → ``BadRequestError``;
  500 → ``InternalServerError``; 503 → ``ServiceUnavailableError``; the message is
  ``"litellm.<Class>: Ollama_chatException - <body JSON>"``. An ``{"error": …}`` line mid-stream →
  ``BadRequestError`` 400 ("KeyError: 'message', Got unexpected response from Ollama: …"), although it
  is a server failure. A cut stream → ``MidStreamFallbackError`` (status 500, ``generated_content``).
  A stream that ends cleanly without the ``done`` line raises nothing: litellm makes up "stop".
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.support.scripted_http import RecordedRequest, ResponseWriter, ScriptedHTTPServer

OLLAMA_VERSION = "0.33.0"


@dataclass(frozen=True)
class OllamaModel:
    """A model the server has "pulled"."""

    family: str = "qwen3"
    capabilities: tuple[str, ...] = ("completion", "tools", "thinking")
    context_length: int = 40960
    parameter_size: str = "8.2B"


@dataclass
class Call:
    """A tool call; Ollama sends ``arguments`` as a JSON object."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reply:
    """One scripted model response."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    thinking: str | None = None
    """Streamed as ``message.thinking`` lines before the content."""
    usage: tuple[int, int] | None = None
    """(prompt_eval_count, eval_count); estimated from the request and reply when ``None``."""
    done_reason: str = "stop"
    chunk_size: int = 4
    """Characters per streamed line of thinking and content."""
    calls_per_line: bool = True
    """One line per tool call (as Ollama's parser emits them), or all calls in one line."""
    delay_s: float = 0.0
    """Server-side pause between lines (lets a test act mid-stream)."""
    cut_after: int | None = None
    """Drop the connection after this many lines, before the ``done`` line (a network failure)."""
    end_after: int | None = None
    """End the stream cleanly after this many lines, without the ``done`` line."""
    error_after: tuple[int, str] | None = None
    """Send ``{"error": message}`` as a line after this many lines, then end the stream."""


@dataclass
class Fail:
    """An HTTP error answer: ``{"error": message}`` with ``status``."""

    status: int
    message: str = "scripted failure"


Script = Reply | Fail

_TOOL_CALL_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def _bind_error(body: dict[str, Any]) -> str | None:
    """What Go's JSON decoding of ``api.ChatRequest`` refuses (Ollama answers 400 with the decoder's
    text): a ``content`` that is not a string (an OpenAI-style list of parts), tool call arguments
    that are not an object (OpenAI's JSON text), images that are not base64 text."""
    messages = body.get("messages")
    if messages is None:
        return None
    if not isinstance(messages, list):
        return f"json: cannot unmarshal {_go_kind(messages)} into Go struct field ChatRequest.messages of type []api.Message"
    for message in messages:
        if not isinstance(message, dict):
            return f"json: cannot unmarshal {_go_kind(message)} into Go struct field ChatRequest.messages of type api.Message"
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            return (f"json: cannot unmarshal {_go_kind(content)} into Go struct field Message.messages.content "
                    "of type string")
        for image in message.get("images") or []:
            if not isinstance(image, str):
                return (f"json: cannot unmarshal {_go_kind(image)} into Go struct field Message.messages.images "
                        "of type api.ImageData")
        for call in message.get("tool_calls") or []:
            arguments = (call.get("function") or {}).get("arguments") if isinstance(call, dict) else None
            if arguments is not None and not isinstance(arguments, dict):
                return (f"json: cannot unmarshal {_go_kind(arguments)} into Go struct field "
                        "ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments")
    return None


def _go_kind(value: Any) -> str:
    """The JSON kind as Go's decoder names it in its errors."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object"


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _estimate_tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    return max(1, math.ceil(len(text) / 4))


def _full_name(model: str) -> str:
    """Ollama's canonical name: ``registry.ollama.ai/library/<name>:<tag>`` (tag ``latest`` by default)."""
    name, _, tag = model.partition(":")
    if "/" not in name:
        name = f"library/{name}"
    return f"registry.ollama.ai/{name}:{tag or 'latest'}"


class OllamaServer(ScriptedHTTPServer[Script]):
    """Start with :meth:`start`; queue replies with :meth:`add`; read :attr:`requests`.

    Args:
        models: The models the server has, by name as clients spell them (``qwen3:8b``); a name
            without a tag also matches ``:latest``.
        legacy_tool_calls: Send tool calls without ``id`` and ``function.index`` (Ollama < 0.4.7).
        not_found_message: The 404 text for unknown models; ``{model}`` is replaced.
        show_status: When set, ``/api/show`` answers ``{"error": …}`` with this status (a server
            or proxy that does not serve it), while chat works.
    """

    def __init__(
        self,
        models: Mapping[str, OllamaModel] | None = None,
        legacy_tool_calls: bool = False,
        not_found_message: str = "model '{model}' not found",
        show_status: int | None = None,
    ) -> None:
        super().__init__()
        self.show_status = show_status
        self.models = dict(models) if models is not None else {"qwen3:8b": OllamaModel()}
        self.legacy_tool_calls = legacy_tool_calls
        self.not_found_message = not_found_message
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """The ``api_base`` for litellm: the origin, because litellm appends ``/api/chat`` itself."""
        return self.origin

    def _model(self, name: str) -> OllamaModel | None:
        if name in self.models:
            return self.models[name]
        full = _full_name(name)
        return next((model for known, model in self.models.items() if _full_name(known) == full), None)

    def _tool_call_id(self) -> str:
        digest = hashlib.sha256(f"call{next(self._ids)}".encode()).digest()
        return "call_" + "".join(_TOOL_CALL_ALPHABET[byte % len(_TOOL_CALL_ALPHABET)] for byte in digest[:8])

    # -- request handling ------------------------------------------------------------------

    def _respond(self, request: RecordedRequest, out: ResponseWriter) -> None:
        route = (request.method, request.path)
        if route in (("GET", "/"), ("HEAD", "/")):
            out.text(200, "Ollama is running")
        elif route == ("GET", "/api/version"):
            out.json(200, {"version": OLLAMA_VERSION})
        elif route == ("GET", "/api/tags"):
            out.json(200, {"models": [self._tag(name, model) for name, model in self.models.items()]})
        elif route == ("POST", "/api/show"):
            self._show(request.body, out)
        elif route == ("POST", "/api/chat"):
            self._chat(request.body, out)
        else:
            out.text(404, "404 page not found")  # Gin's answer for an unknown route

    def _tag(self, name: str, model: OllamaModel) -> dict[str, Any]:
        return {
            "name": name,
            "model": name,
            "modified_at": "2026-01-01T00:00:00Z",
            "size": 5_200_000_000,
            "digest": hashlib.sha256(name.encode()).hexdigest(),
            "details": self._details(model),
        }

    @staticmethod
    def _details(model: OllamaModel) -> dict[str, Any]:
        return {
            "parent_model": "",
            "format": "gguf",
            "family": model.family,
            "families": [model.family],
            "parameter_size": model.parameter_size,
            "quantization_level": "Q4_K_M",
        }

    def _show(self, body: Any, out: ResponseWriter) -> None:
        body = body if isinstance(body, dict) else {}
        name = str(body.get("model") or body.get("name") or "")
        model = self._model(name)
        if self.show_status is not None:
            out.json(self.show_status, {"error": "scripted failure"})
            return
        if model is None:
            out.json(404, {"error": f"model '{name}' not found"})
            return
        template = "{{ .System }}{{ .Prompt }}" + ("{{ if .Tools }}{{ .Tools }}{{ end }}" if "tools" in model.capabilities else "")
        out.json(
            200,
            {
                "modelfile": f"FROM {name}",
                "parameters": "",
                "template": template,
                "details": self._details(model),
                "model_info": {
                    "general.architecture": model.family,
                    "general.parameter_count": 8_190_735_360,
                    "general.file_type": 15,
                    f"{model.family}.block_count": 36,
                    f"{model.family}.context_length": model.context_length,
                    f"{model.family}.embedding_length": 4096,
                    f"{model.family}.attention.head_count": 32,
                },
                "capabilities": list(model.capabilities),
                "modified_at": "2026-01-01T00:00:00Z",
            },
        )

    def _chat(self, body: Any, out: ResponseWriter) -> None:
        with self._changed:
            self.requests.append(body if isinstance(body, dict) else {"_raw": body})
        if not isinstance(body, dict):
            out.json(400, {"error": "missing request body"})
            return
        bind_error = _bind_error(body)
        if bind_error is not None:
            out.json(400, {"error": bind_error})
            return
        name = str(body.get("model") or "")
        if not name:
            out.json(400, {"error": "model is required"})
            return
        model = self._model(name)
        if model is None:
            out.json(404, {"error": self.not_found_message.format(model=name)})
            return
        if body.get("tools") and "tools" not in model.capabilities:
            out.json(400, {"error": f"{_full_name(name)} does not support tools"})
            return
        think = body.get("think")
        if think not in (None, False) and "thinking" not in model.capabilities:
            out.json(400, {"error": f'"{name}" does not support thinking'})
            return
        item = self._next_item(body)
        if item is None:
            out.json(500, {"error": "the test script has no more replies"})
        elif isinstance(item, Fail):
            out.json(item.status, {"error": item.message})
        elif body.get("stream", True) is False:
            out.json(200, self._whole(name, body, item), headers={"Content-Type": "application/json; charset=utf-8"})
        else:
            self._stream(out, name, body, item)

    # -- building replies ------------------------------------------------------------------

    def _tool_calls(self, calls: list[Call], first_index: int) -> list[dict[str, Any]]:
        if self.legacy_tool_calls:
            return [{"function": {"name": call.name, "arguments": call.arguments}} for call in calls]
        return [
            {"id": self._tool_call_id(), "function": {"index": first_index + offset, "name": call.name, "arguments": call.arguments}}
            for offset, call in enumerate(calls)
        ]

    def _final(self, name: str, body: dict[str, Any], reply: Reply, message: dict[str, Any]) -> dict[str, Any]:
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt = _estimate_tokens(body.get("messages") or [])
            spoken = (reply.thinking or "") + reply.text + "".join(json.dumps(call.arguments) for call in reply.calls)
            completion = _estimate_tokens(spoken)
        final: dict[str, Any] = {
            "model": name,
            "created_at": _now(),
            "message": message,
            "done": True,
            "done_reason": reply.done_reason,
            "total_duration": 912_345_678,
            "load_duration": 12_345_678,
        }
        # Go's omitempty: a zero count is left out, not sent as 0.
        counts = {
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 123_456_789 if prompt else 0,
            "eval_count": completion,
            "eval_duration": 765_432_100 if completion else 0,
        }
        final.update({key: value for key, value in counts.items() if value})
        return final

    def _whole(self, name: str, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.thinking:
            message["thinking"] = reply.thinking
        if reply.calls:
            message["tool_calls"] = self._tool_calls(reply.calls, 0)
        return self._final(name, body, reply, message)

    def _lines(self, name: str, body: dict[str, Any], reply: Reply) -> Iterator[dict[str, Any]]:
        size = max(1, reply.chunk_size)

        def line(message: dict[str, Any]) -> dict[str, Any]:
            return {"model": name, "created_at": _now(), "message": {"role": "assistant", "content": "", **message}, "done": False}

        thinking = reply.thinking or ""
        for start in range(0, len(thinking), size):
            yield line({"thinking": thinking[start : start + size]})
        for start in range(0, len(reply.text), size):
            yield line({"content": reply.text[start : start + size]})
        if reply.calls_per_line:
            for index, call in enumerate(reply.calls):
                yield line({"tool_calls": self._tool_calls([call], index)})
        elif reply.calls:
            yield line({"tool_calls": self._tool_calls(reply.calls, 0)})
        yield self._final(name, body, reply, {"role": "assistant", "content": ""})

    def _stream(self, out: ResponseWriter, name: str, body: dict[str, Any], reply: Reply) -> None:
        out.open_stream("application/x-ndjson")
        for sent, payload in enumerate(self._lines(name, body, reply)):
            if reply.cut_after is not None and sent >= reply.cut_after:
                out.cut()
                return
            if reply.end_after is not None and sent >= reply.end_after:
                break
            if reply.error_after is not None and sent >= reply.error_after[0]:
                out.chunk(json.dumps({"error": reply.error_after[1]}).encode() + b"\n")
                out.end_stream()
                return
            out.chunk(json.dumps(payload).encode() + b"\n")
            if reply.delay_s:
                time.sleep(reply.delay_s)
        out.end_stream()
