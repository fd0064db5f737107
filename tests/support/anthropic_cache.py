"""A deterministic model of Anthropic's prompt caching, for the scripted Anthropic server.

What the real API does (docs "Prompt caching"): the prompt is one prefix in the order
``tools`` → ``system`` → ``messages``; a ``cache_control`` breakpoint on a block marks "the prefix
up to and including this block". For each breakpoint the API looks for a cached prefix ending at
that block or at any of the ~20 blocks before it; the longest hit is read from the cache
(``cache_read_input_tokens``), and every breakpoint past the hit is written
(``cache_creation_input_tokens``). Tokens after the last breakpoint are plain ``input_tokens``.
The three add up to the whole prompt. Prefixes shorter than a model's minimum (1024 tokens for
Sonnet/Opus 4.x, 2048 for Haiku 3.x, 4096 for Opus 4.5/Haiku 4.5) are never cached.

The model here:

* A *unit* is one tool definition, one system block (a string system prompt is one block), or
  one content block of a message (a string content is one text block). Its identity is its
  canonical JSON with ``cache_control`` removed, plus the message role; its size is
  ``ceil(len(canonical JSON) / 4)`` tokens (at least 1), so the same content always costs the same.
* A prefix's cache key is a running SHA-256 over the model name and the units up to it, so any
  change anywhere earlier (a tool, the system prompt, an edited message) misses.
* Reads look back ``lookback`` units (20, as the API) from each breakpoint for a written prefix.
  Writes happen at breakpoints past the hit whose prefix reaches ``min_tokens`` (0 by default, so
  tests stay small; set 1024 to model Sonnet).
* Entries never expire while the server lives (the real 5-minute/1-hour TTLs are not modelled:
  call :meth:`PromptCache.clear` to simulate expiry). Changing the ``thinking`` parameter, which
  invalidates cached messages on the real API, is not modelled either.
* A ``cache_control`` with ``"ttl": "1h"`` attributes the tokens written up to that breakpoint to
  ``ephemeral_1h_input_tokens``; all others to ``ephemeral_5m_input_tokens``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from typing import Any


def canonical(value: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, so equal content gives equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(value: Any) -> int:
    """The server's token count for a value: a quarter of its canonical JSON length, at least 1."""
    text = value if isinstance(value, str) else canonical(value)
    return max(1, math.ceil(len(text) / 4))


@dataclass(frozen=True)
class Unit:
    """One cacheable block of the prompt prefix."""

    identity: str
    tokens: int
    cache_control: dict[str, Any] | None


@dataclass(frozen=True)
class CacheUsage:
    """How one request's prompt tokens split between the cache and plain input."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int

    def as_usage(self) -> dict[str, Any]:
        """The ``usage`` fields of ``message_start`` (output tokens are added by the caller)."""
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.ephemeral_5m_input_tokens,
                "ephemeral_1h_input_tokens": self.ephemeral_1h_input_tokens,
            },
        }


def _strip_cache_control(block: Any) -> tuple[Any, dict[str, Any] | None]:
    """The block without its ``cache_control`` (also inside a tool_result's content), and the marker."""
    if not isinstance(block, dict):
        return block, None
    marker = block.get("cache_control")
    clean = {key: value for key, value in block.items() if key != "cache_control"}
    inner = clean.get("content")
    if isinstance(inner, list):
        stripped = []
        for item in inner:
            item_clean, item_marker = _strip_cache_control(item)
            stripped.append(item_clean)
            marker = marker or item_marker
        clean["content"] = stripped
    return clean, marker if isinstance(marker, dict) else None


def prompt_units(body: dict[str, Any]) -> list[Unit]:
    """The request's prefix as units, in the API's cache order: tools, system, messages."""
    units: list[Unit] = []

    def add(kind: str, block: Any) -> None:
        clean, marker = _strip_cache_control(block)
        identity = canonical({"kind": kind, "block": clean})
        units.append(Unit(identity=identity, tokens=estimate_tokens(clean), cache_control=marker))

    for tool in body.get("tools") or []:
        add("tool", tool)
    system = body.get("system")
    if isinstance(system, str):
        add("system", {"type": "text", "text": system})
    elif isinstance(system, list):
        for block in system:
            add("system", block)
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            add(role, {"type": "text", "text": content})
        elif isinstance(content, list):
            for block in content:
                add(role, block)
    return units


class PromptCache:
    """The server's cache of written prefixes; thread-safe.

    Args:
        lookback: How many units before a breakpoint are checked for a hit (the API uses 20).
        min_tokens: The shortest prefix that is written (0 here; 1024 models Sonnet).
    """

    def __init__(self, lookback: int = 20, min_tokens: int = 0) -> None:
        self.lookback = lookback
        self.min_tokens = min_tokens
        self._keys: set[str] = set()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every prefix, as if all entries had expired."""
        with self._lock:
            self._keys.clear()

    def account(self, body: dict[str, Any]) -> CacheUsage:
        """Split this request's prompt tokens into read, written and plain input, and write."""
        units = prompt_units(body)
        keys: list[str] = []
        running = hashlib.sha256(str(body.get("model")).encode())
        prefix_tokens: list[int] = []
        total = 0
        for unit in units:
            running.update(unit.identity.encode() + b"\x00")
            keys.append(running.hexdigest())
            total += unit.tokens
            prefix_tokens.append(total)
        breakpoints = [index for index, unit in enumerate(units) if unit.cache_control is not None]

        with self._lock:
            hit = -1
            for point in breakpoints:
                for index in range(point, max(-1, point - self.lookback - 1), -1):
                    if keys[index] in self._keys:
                        hit = max(hit, index)
                        break
            read = prefix_tokens[hit] if hit >= 0 else 0
            written_to = hit
            by_ttl = {"5m": 0, "1h": 0}
            for point in breakpoints:
                if point <= written_to or prefix_tokens[point] < self.min_tokens:
                    continue
                start = prefix_tokens[written_to] if written_to >= 0 else 0
                marker = units[point].cache_control or {}
                by_ttl["1h" if marker.get("ttl") == "1h" else "5m"] += prefix_tokens[point] - start
                self._keys.add(keys[point])
                written_to = point
        created = by_ttl["5m"] + by_ttl["1h"]
        return CacheUsage(
            input_tokens=total - read - created,
            cache_creation_input_tokens=created,
            cache_read_input_tokens=read,
            ephemeral_5m_input_tokens=by_ttl["5m"],
            ephemeral_1h_input_tokens=by_ttl["1h"],
        )
