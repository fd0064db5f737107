"""Checking a model string before anything is created for it: does litellm know its provider?"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
from pathlib import Path

from agentcli.llm.warmup import import_litellm


def unknown_model(model: str, api_base: str | None) -> str | None:
    """Why litellm cannot call ``model``, in one line, or None when it names a known provider.

    A ``provider/model`` string whose provider litellm lists is known at once, read from litellm's
    files without importing it (:func:`listed_providers`); anything else is asked of litellm
    itself, which blocks until it is imported (a few seconds on first use): for command-line
    checks before a session is created, never on a UI thread.
    """
    provider, slash, name = model.partition("/")
    if not model.strip() or (slash and not name.strip()) or not provider.strip():
        return (f"{model!r} names no model; write it as provider/model, e.g. anthropic/claude-sonnet-4-5, "
                "openai/gpt-4o, ollama_chat/qwen3:8b")
    from agentcli.llm.litellm_client import resolve_model

    resolved = resolve_model(model, api_base)
    prefix, slash, _ = resolved.partition("/")
    if slash and prefix in listed_providers():
        return None  # what get_llm_provider answers for a listed prefix, without its import
    litellm = import_litellm()
    try:
        litellm.get_llm_provider(resolved)
    except Exception:  # noqa: BLE001 - litellm raises BadRequestError (and others) for an unknown provider
        provider = resolved.split("/", 1)[0] if "/" in resolved else resolved
        return (f"{model!r} names no provider litellm knows ({provider!r}); write it as provider/model, "
                "e.g. anthropic/claude-sonnet-4-5, openai/gpt-4o, ollama_chat/qwen3:8b, or a bare name with --api-base")
    return None


@functools.cache
def listed_providers() -> frozenset[str]:
    """The provider prefixes litellm's ``get_llm_provider`` accepts in ``provider/model``: its
    ``LlmProviders`` enum and its JSON-configured OpenAI-compatible providers.

    Read from the installed package's source and data (about 25 ms) rather than by importing it
    (seconds of CPU): ``agentcli race`` checks its models up front but never calls one itself.
    Empty when the files are not where this version expects them; the caller then asks litellm.
    """
    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    root = Path(next(iter(spec.submodule_search_locations)))
    found: set[str] = set()
    try:
        tree = ast.parse((root / "types" / "utils.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "LlmProviders":
                found.update(item.value.value for item in node.body if isinstance(item, ast.Assign)
                             and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str))
        found.update(json.loads((root / "llms" / "openai_like" / "providers.json").read_text(encoding="utf-8")))
    except (OSError, SyntaxError, ValueError, TypeError):
        return frozenset()  # another layout: every check goes to litellm, as before
    return frozenset(found)
