"""What a model can take and give: its output limit, context window and prompt-cache support.

Read from litellm's model information (its bundled cost map), overridable per model string in
the config (``[models.limits."anthropic/claude-sonnet-4-5"]``). A model litellm does not know (a
local model, a new release) gets safe defaults, and the caller says so once.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

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


def model_limits(
    litellm: ModuleType, model: str, *, max_output_tokens: int | None = None, context_window: int | None = None
) -> ModelLimits:
    """The limits of ``model`` (a litellm model string), with configured values taking precedence."""
    try:
        info = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - litellm raises a plain Exception for a model it does not map
        info = None
    provider = (info or {}).get("litellm_provider") or (model.split("/", 1)[0] if "/" in model else "")
    known_output = (info or {}).get("max_output_tokens") or (info or {}).get("max_tokens")
    known_context = (info or {}).get("max_input_tokens")
    context = context_window or (int(known_context) if known_context else DEFAULT_CONTEXT_WINDOW)
    # Unless configured, an answer may take at most a quarter of the window: a small local model's
    # window must leave room for the conversation (an 8k window, 4k of output, would leave none).
    output = max_output_tokens or min(int(known_output) if known_output else DEFAULT_OUTPUT_TOKENS, OUTPUT_CAP,
                                      max(256, context // 4))
    claude = "claude" in model.lower()
    caches = bool((info or {}).get("supports_prompt_caching")) and (
        provider == "anthropic" or (claude and provider in _CACHE_CONTROL_PROVIDERS))
    return ModelLimits(
        max_output_tokens=output,
        context_window=context,
        known=bool(known_output or known_context),
        cache_control=caches or provider == "anthropic",
        reasoning=bool((info or {}).get("supports_reasoning")),
        output_ceiling=max_output_tokens or (int(known_output) if known_output else None),
    )


def takes_images(model: str) -> bool:
    """Whether ``model`` reads images (litellm's ``supports_vision``); False for a model litellm
    does not know, and for a replay, without importing litellm for it."""
    if model.startswith("replay:"):
        return False
    import litellm

    try:
        return bool(litellm.supports_vision(model=model))
    except Exception:  # noqa: BLE001 - litellm raises a plain Exception for a model it does not map
        return False
