"""The real model client: ``litellm.acompletion(stream=True)`` with our own retry loop.

Our loop rather than litellm's ``num_retries`` because a retry has to be visible (an event the
user sees, with the delay) and a mid-stream failure has to void the text already shown.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator
from typing import Any

from agentcli.config import RetrySettings
from agentcli.llm.assemble import StreamAssembler
from agentcli.llm.types import ModelCallError, ModelRequest, ModelResponse, RetryNotice, StreamItem, TextChunk
from agentcli.llm.warmup import load_litellm

_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_request_ids = itertools.count(1)


def _status(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def _is_retryable(error: BaseException, litellm: Any) -> bool:
    status = _status(error)
    if status is not None:
        return status in _RETRYABLE_STATUS
    transient = (litellm.APIConnectionError, litellm.Timeout, litellm.InternalServerError,
                 litellm.ServiceUnavailableError, litellm.RateLimitError)
    return isinstance(error, transient)


def _retry_after(error: BaseException) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        return float(headers.get("retry-after", ""))
    except ValueError:
        return None


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:500]


def resolve_model(model: str, api_base: str | None) -> str:
    """A bare model name served from an api_base is spoken to as an OpenAI-compatible server."""
    if api_base and "/" not in model:
        return f"openai/{model}"
    return model


class LiteLLMClient:
    """Streams any litellm model; retries 429 and 5xx with exponential backoff."""

    def __init__(self, retry: RetrySettings | None = None) -> None:
        self.retry = retry or RetrySettings()

    def _delay(self, attempt: int, error: BaseException) -> float:
        hinted = _retry_after(error)
        backoff = self.retry.base_delay_s * (2 ** (attempt - 1))
        delay = hinted if hinted is not None else backoff
        return min(delay, self.retry.max_delay_s)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        litellm = await load_litellm()
        model = resolve_model(request.model, request.api_base)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": request.messages,
            "stream": True,
            # Without this, providers send no usage in streaming mode.
            "stream_options": {"include_usage": True},
            # Retries are ours (see module docstring); the OpenAI SDK's own would hide them.
            "max_retries": 0,
        }
        if request.tools:
            kwargs["tools"] = request.tools
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        if request.api_base:
            kwargs["api_base"] = request.api_base
        custom_server = request.api_base or os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL")
        if custom_server and model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            # Local OpenAI-compatible servers (vLLM, llama.cpp, LM Studio) need no key,
            # but the OpenAI SDK refuses to start without one.
            kwargs["api_key"] = "sk-no-key-required"
        attempts = self.retry.attempts
        request_id = f"req{next(_request_ids)}"
        for attempt in itertools.count(1):
            assembler = StreamAssembler()
            try:
                response = await litellm.acompletion(**kwargs)
                async for chunk in response:
                    text = assembler.add(chunk)
                    if text:
                        yield TextChunk(text)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # classified below, never swallowed (re-raised as ModelCallError)
                retryable = _is_retryable(error, litellm)
                if retryable and attempt < attempts:
                    delay = self._delay(attempt, error)
                    yield RetryNotice(attempt=attempt, max_attempts=attempts, delay_s=delay, error=_short(error))
                    await asyncio.sleep(delay)
                    continue
                what = f"after {attempt} attempts: " if retryable and attempt > 1 else ""
                raise ModelCallError(
                    f"model call to {model} failed {what}{_short(error)}", retryable=retryable, status=_status(error)
                ) from error
            yield ModelResponse(
                text=assembler.text,
                tool_calls=assembler.tool_calls(f"{request_id}_{attempt}"),
                finish_reason=assembler.finish_reason,
                usage=assembler.usage,
                cost=_cost(litellm, model, assembler),
                model=model,
            )
            return


def _cost(litellm: Any, model: str, assembler: StreamAssembler) -> float | None:
    """Price of the call from litellm's tables; None (not 0) when the model has no price."""
    if assembler.usage is None:
        return None
    try:
        prompt, completion = litellm.cost_per_token(
            model=model,
            prompt_tokens=assembler.usage.input_tokens,
            completion_tokens=assembler.usage.output_tokens,
        )
    except Exception:  # noqa: BLE001 - litellm raises a plain Exception for unknown models
        return None
    return float(prompt) + float(completion)
