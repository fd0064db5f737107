"""What a model can take and give: its output limit, context window and prompt-cache support.

Read from litellm's model information (its bundled cost map), overridable per model string in
the config (``[models.limits."anthropic/claude-sonnet-4-5"]``). A model litellm does not know (a
local model, a new release) gets safe defaults, and the caller says so once. Two figures a server
states override both: the window an Ollama server gives a model (``/api/show``), and the window a
provider names when it refuses a request as too long.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from agentcli.events import NoticeSeverity
from agentcli.llm.ollama_window import is_ollama

DEFAULT_OUTPUT_TOKENS = 4096
"""Output limit of a model litellm does not know: enough for a step of a coding agent."""
DEFAULT_CONTEXT_WINDOW = 32_768
"""Context window assumed for a model litellm does not know (most local models take at least this)."""
OUTPUT_CAP = 32_000
"""A known model's output limit is capped here unless the config asks for more: a step of a coding
agent rarely needs more, and a larger limit only lengthens a call that runs away."""

_CACHE_CONTROL_PROVIDERS = frozenset({"anthropic", "bedrock", "bedrock_converse", "vertex_ai", "vertex_ai_beta",
                                      "openrouter", "databricks"})
"""Providers that take Anthropic's ``cache_control`` breakpoints (for their Claude models)."""


@dataclass(frozen=True)
class ModelLimits:
    max_output_tokens: int
    context_window: int
    known: bool
    """litellm knows the model's limits (False: the defaults above are guesses)."""
    cache_control: bool
    """The model takes ``cache_control`` breakpoints (Anthropic-family prompt caching)."""
    reasoning: bool
    """The model can reason before answering (thinking models)."""
    output_ceiling: int | None = None
    """The most output the model may be asked for (the configured limit, which is there for when
    litellm's figure is wrong; else litellm's figure, uncapped; None when neither is known): raising
    ``max_tokens`` for a thinking budget stops here, because the API refuses a request above it."""
    lowered_from: int | None = None
    """The configured output limit, when the window the provider stated leaves less room than it
    asks for: ``max_output_tokens`` is then a quarter of that window, as the compaction guard
    assumes, rather than a figure the next request would overflow with again."""
    served_window: int | None = None
    """The window the model's server states for it (Ollama's ``/api/show``), when it states one."""
    stated_window: int | None = None
    """The window the provider named in refusing a request as too long, when it did."""


def model_limits(
    litellm: ModuleType, model: str, *, max_output_tokens: int | None = None, context_window: int | None = None,
    served_window: int | None = None, stated_window: int | None = None,
) -> ModelLimits:
    """The limits of ``model`` (a litellm model string), with configured values taking precedence.

    Args:
        litellm: The litellm module (its model information).
        model: The litellm model string.
        max_output_tokens: The configured output limit.
        context_window: The configured context window.
        served_window: The window the model's server states for it (Ollama's ``/api/show``): the
            window is never larger, whatever is configured.
        stated_window: The window the provider named when it refused a request as too long: the
            window is never larger, and neither is the output limit than a quarter of it.
    """
    info = None if is_ollama(model) else _info(litellm, model)
    provider = (info or {}).get("litellm_provider") or (model.split("/", 1)[0] if "/" in model else "")
    known_output = (info or {}).get("max_output_tokens") or (info or {}).get("max_tokens")
    known_context = (info or {}).get("max_input_tokens")
    context = context_window or (int(known_context) if known_context else DEFAULT_CONTEXT_WINDOW)
    context = min([context, *(window for window in (served_window, stated_window) if window)])
    # Unless configured, an answer may take at most a quarter of the window: a small local model's
    # window must leave room for the conversation (an 8k window, 4k of output, would leave none).
    output = max_output_tokens or min(int(known_output) if known_output else DEFAULT_OUTPUT_TOKENS, OUTPUT_CAP,
                                      max(256, context // 4))
    ceiling = max_output_tokens or (int(known_output) if known_output else None)
    lowered_from = None
    if stated_window and max_output_tokens and max_output_tokens > max(256, stated_window // 4):
        # The provider refused a request for its size: the compaction guard then keeps a quarter of
        # the stated window for the reply, so that is what is asked for (the configured figure
        # would overflow the retry again, however much the history was compacted).
        lowered_from, output = max_output_tokens, max(256, stated_window // 4)
        ceiling = output
    claude = "claude" in model.lower()
    caches = bool((info or {}).get("supports_prompt_caching")) and (
        provider == "anthropic" or (claude and provider in _CACHE_CONTROL_PROVIDERS))
    return ModelLimits(
        max_output_tokens=output,
        context_window=context,
        known=bool(known_output or known_context),
        cache_control=caches or provider == "anthropic",
        reasoning=bool((info or {}).get("supports_reasoning")),
        output_ceiling=ceiling,
        lowered_from=lowered_from,
        served_window=served_window,
        stated_window=stated_window,
    )


def limit_notes(model: str, limits: ModelLimits, *, configured_output: bool) -> list[tuple[str, str, NoticeSeverity]]:
    """What the user should be told (once) of the limits a call goes with, as (key, text, severity):
    guessed for a model litellm does not know, or lowered to fit the window the provider stated."""
    notes: list[tuple[str, str, NoticeSeverity]] = []
    if not limits.known and not configured_output:
        served = (f"; its server runs it with up to {limits.served_window:,}"
                  if limits.served_window and limits.served_window > limits.context_window else "")
        text = (f"litellm knows no limits for {model}: using {limits.max_output_tokens} output tokens and a "
                f"{limits.context_window:,}-token context window{served} (set [models.limits.\"{model}\"] to "
                "change them)")
        notes.append(("limits", text, "info"))
    if limits.lowered_from is not None and limits.stated_window is not None:
        text = (f"{model}'s context window is {limits.stated_window:,} tokens (its provider said so): replies are "
                f"limited to {limits.max_output_tokens:,} tokens, not the {limits.lowered_from:,} configured, to "
                "leave room for the conversation")
        notes.append(("lowered", text, "warning"))
    return notes


def _info(litellm: ModuleType, model: str) -> dict[str, Any] | None:
    """litellm's information on ``model`` (None for a model it does not map). Never asked for an
    Ollama model: litellm would ask the server synchronously, at the wrong address (``ollama_window``)."""
    try:
        info: dict[str, Any] = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - litellm raises a plain Exception for a model it does not map
        return None
    return info

