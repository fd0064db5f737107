"""What an Ollama server says of a model (``POST /api/show``): the context window it was trained
for, and its capabilities (``vision`` among them).

We send ``num_ctx`` with every Ollama call (see ``litellm_client``); a figure above the model's
own window makes Ollama allocate a cache the model cannot use well, and the compaction guard
budget for text the model will not read. So the window sent is the smaller of the model's own
(``model_info["<architecture>.context_length"]``) and the configured or default one. Whether the
model reads images is its ``capabilities`` list (``llm/vision``).

Asked once per server and model per process, failure included: a server that cannot answer now
is not asked again before every call (the default window is used instead, silently: the call
itself reports a server that is down). litellm's own ``get_model_info`` does ask ``/api/show``,
but synchronously (it would block the event loop) and at ``OLLAMA_API_BASE`` or localhost, not at
the configured ``api_base``; so the limits never ask litellm about an Ollama model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

DEFAULT_BASE = "http://localhost:11434"
"""Where Ollama listens unless told otherwise (litellm's default too)."""
TIMEOUT_S = 5.0
"""A local server answers ``/api/show`` in milliseconds; a host that does not answer must not
hold up the first call for long."""
_ENDPOINTS = ("/api/chat", "/api/generate", "/api/show", "/api/tags", "/api/embed", "/api/embeddings")



@dataclass(frozen=True)
class Shown:
    """What ``/api/show`` said of a model (each None when it did not say, or could not be asked)."""

    window: int | None = None
    capabilities: frozenset[str] | None = None


_shown: dict[tuple[str, str], Shown] = {}
"""(server, model name) → what the server said of the model."""


def is_ollama(model: str) -> bool:
    """A litellm model string served by Ollama's native API."""
    return model.startswith(("ollama/", "ollama_chat/"))


def server_base(api_base: str | None) -> str:
    """The server's origin, as litellm finds it: the api base without an endpoint's path."""
    base = (api_base or os.environ.get("OLLAMA_API_BASE") or DEFAULT_BASE).rstrip("/")
    for endpoint in _ENDPOINTS:
        if base.endswith(endpoint):
            return base[: -len(endpoint)]
    return base


async def served_window(model: str, api_base: str | None) -> int | None:
    """The context window the Ollama server states for ``model`` (a litellm model string), or
    None when it cannot say (not running, an unknown model, an answer without the figure)."""
    return (await shown(model, api_base)).window


async def served_capabilities(model: str, api_base: str | None) -> frozenset[str] | None:
    """What the Ollama server says ``model`` can do (``completion``, ``tools``, ``vision``…), or
    None when it cannot say."""
    return (await shown(model, api_base)).capabilities


async def shown(model: str, api_base: str | None) -> Shown:
    """What the server said of ``model`` (asked on first use)."""
    name = model.split("/", 1)[1]
    key = (server_base(api_base), name)
    if key not in _shown:
        _shown[key] = await _ask(*key)
    return _shown[key]


async def _ask(base: str, name: str) -> Shown:
    import httpx  # litellm's own HTTP client, loaded with it: costs nothing more by then

    key = os.environ.get("OLLAMA_API_KEY")  # a hosted Ollama wants one, as litellm sends it
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
            response = await client.post(f"{base}/api/show", json={"model": name}, headers=headers)
            response.raise_for_status()
            answer = response.json()
    except (httpx.HTTPError, httpx.InvalidURL, ValueError):  # unreachable, refused, not JSON: the default applies
        return Shown()
    return Shown(context_length(answer), _capabilities(answer))


def _capabilities(answer: Any) -> frozenset[str] | None:
    listed = answer.get("capabilities") if isinstance(answer, dict) else None
    if not isinstance(listed, list):
        return None  # an Ollama before 0.6 lists none: unknown, not "nothing"
    return frozenset(item for item in listed if isinstance(item, str))


def context_length(shown: Any) -> int | None:
    """The window in an ``/api/show`` answer: ``model_info["<architecture>.context_length"]``,
    or the only ``….context_length`` there is when the architecture is not named."""
    info = shown.get("model_info") if isinstance(shown, dict) else None
    if not isinstance(info, dict):
        return None
    architecture = info.get("general.architecture")
    lengths = [value for key, value in info.items() if key.endswith(".context_length")]
    value = info.get(f"{architecture}.context_length") if architecture else None
    if value is None and len(lengths) == 1:
        value = lengths[0]
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
