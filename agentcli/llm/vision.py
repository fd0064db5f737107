"""Whether a model reads images, asked without blocking the event loop.

litellm's ``supports_vision`` looks the model up in its map; for an Ollama model the map lacks, it
asks the server's ``/api/show`` synchronously (its module-level HTTP client, at
``OLLAMA_API_BASE`` or localhost rather than the configured ``api_base``) and finds no answer
there anyway (it reads no capabilities). So an Ollama model is judged by the capabilities its own
server lists (``vision``), asked asynchronously with the window (``ollama_window``, once per server
and model); any other model by litellm's map, in a worker thread (the first lookup may also wait
for litellm's import). Answers are kept per model for the process.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentcli.llm.litellm_client import resolve_model
from agentcli.llm.ollama_window import is_ollama, served_capabilities
from agentcli.llm.warmup import load_litellm

_known: dict[str, bool] = {}
"""litellm model string → whether litellm's map says it reads images."""


async def takes_images(model: str, api_base: str | None) -> bool:
    """Whether ``model`` (as configured, with the ``api_base`` it is called at) reads images;
    False for a replay, and for a model nobody can say of (better a description than a refusal)."""
    if model.startswith("replay:"):
        return False
    model = resolve_model(model, api_base)
    if is_ollama(model):
        capabilities = await served_capabilities(model, api_base)
        return capabilities is not None and "vision" in capabilities
    if model not in _known:
        litellm = await load_litellm()
        _known[model] = await asyncio.to_thread(_supports_vision, litellm, model)
    return _known[model]


def _supports_vision(litellm: Any, model: str) -> bool:
    """litellm's answer (blocking: a provider's lookup may ask its server; off the loop)."""
    try:
        return bool(litellm.supports_vision(model=model))
    except Exception:  # noqa: BLE001 - litellm raises a plain Exception for a model it does not map
        return False
