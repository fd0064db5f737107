"""Checking a model string before anything is created for it: does litellm know its provider?"""

from __future__ import annotations

from agentcli.llm.warmup import import_litellm


def unknown_model(model: str, api_base: str | None) -> str | None:
    """Why litellm cannot call ``model``, in one line, or None when it names a known provider.

    Blocks until litellm is imported (a few seconds on first use): for command-line checks before
    a session is created, never on a UI thread.
    """
    provider, slash, name = model.partition("/")
    if not model.strip() or (slash and not name.strip()) or not provider.strip():
        return (f"{model!r} names no model; write it as provider/model, e.g. anthropic/claude-sonnet-4-5, "
                "openai/gpt-4o, ollama_chat/qwen3:8b")
    litellm = import_litellm()
    from agentcli.llm.litellm_client import resolve_model

    resolved = resolve_model(model, api_base)
    try:
        litellm.get_llm_provider(resolved)
    except Exception:  # noqa: BLE001 - litellm raises BadRequestError (and others) for an unknown provider
        provider = resolved.split("/", 1)[0] if "/" in resolved else resolved
        return (f"{model!r} names no provider litellm knows ({provider!r}); write it as provider/model, "
                "e.g. anthropic/claude-sonnet-4-5, openai/gpt-4o, ollama_chat/qwen3:8b, or a bare name with --api-base")
    return None
