"""Calling litellm directly (not agentcli's client) and reading what it yields."""

from __future__ import annotations

from typing import Any

ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-5-20250929"
"""A model whose thinking is the ``enabled``/``budget_tokens`` kind in litellm's cost map (not adaptive)."""
OLLAMA_MODEL = "ollama_chat/qwen3:8b"

READ_FILE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}
THINKING: dict[str, Any] = {"type": "enabled", "budget_tokens": 1024}


async def stream(**kwargs: Any) -> list[Any]:
    """Every chunk of one streamed ``litellm.acompletion`` call, with retries off."""
    import litellm

    kwargs.setdefault("num_retries", 0)
    response = await litellm.acompletion(stream=True, **kwargs)
    return [chunk async for chunk in response]


def deltas(chunks: list[Any]) -> list[dict[str, Any]]:
    """Each chunk's first-choice delta as a plain dict, ``None`` fields dropped."""
    return [chunk.choices[0].delta.model_dump(exclude_none=True) for chunk in chunks if chunk.choices]


def built(chunks: list[Any], messages: list[dict[str, Any]] | None = None) -> Any:
    """litellm's own assembly of the chunks (``stream_chunk_builder``): a ``ModelResponse``."""
    import litellm

    return litellm.stream_chunk_builder(chunks, messages=messages)


def text_of(chunks: list[Any]) -> str:
    return "".join(delta.get("content") or "" for delta in deltas(chunks))
