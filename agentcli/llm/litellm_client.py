"""The real model client: ``litellm.acompletion(stream=True)`` with our own retry loop.

Our loop rather than litellm's ``num_retries`` because a retry has to be visible (an event the
user sees, with the delay and one line of cause) and a mid-stream failure has to void the text
already shown. Every request carries an output limit (``max_tokens``) from the model's own data;
a stream that sends nothing for ``stall_timeout_s`` is cut and retried; failures are classified
once (``llm/errors.py``) so the chart can tell a bad key from a busy server.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from agentcli.config import RetrySettings
from agentcli.events import NoticeSeverity
from agentcli.llm.assemble import StreamAssembler
from agentcli.llm.cache import with_breakpoints
from agentcli.llm.errors import (
    MissingKey,
    StreamEndedEmpty,
    StreamEndedInACall,
    StreamStalled,
    classify,
    key_source,
    retry_after,
)
from agentcli.llm.limits import ModelLimits, limit_notes, model_limits
from agentcli.llm.ollama_window import is_ollama, served_window
from agentcli.llm.shape import anthropic, for_provider
from agentcli.llm.types import (
    ClientNotice,
    Message,
    ModelCallError,
    ModelRequest,
    ModelResponse,
    Reasoning,
    ReasoningChunk,
    RetryNotice,
    StreamItem,
    TextChunk,
    Usage,
)
from agentcli.llm.warmup import load_litellm

_request_ids = itertools.count(1)
_NO_KEY = "sk-no-key-required"
"""The stand-in key sent to a local OpenAI-compatible server when none is set (the SDK insists on one)."""
_EFFORT_BUDGETS = {"low": 1024, "medium": 2048, "high": 4096}
"""What litellm turns each effort into for Anthropic thinking (measured), for the output limit."""
_THINKING_HEADROOM = 4096
"""Output tokens left for the answer itself beyond a thinking budget (litellm's own default)."""


def resolve_model(model: str, api_base: str | None) -> str:
    """A bare model name served from an api_base is spoken to as an OpenAI-compatible server."""
    if api_base and "/" not in model:
        return f"openai/{model}"
    return model


def resolve_api_base(model: str, api_base: str | None) -> str | None:
    """litellm appends ``/v1/messages`` to an Anthropic base: one given as ``…/v1`` would be
    posted to ``…/v1/v1/messages``, so the ``/v1`` is dropped."""
    if api_base and model.startswith("anthropic/"):
        return re.sub(r"/v1/?$", "", api_base.rstrip("/")) or api_base
    return api_base


class LiteLLMClient:
    """Streams any litellm model; retries transient failures with exponential backoff."""

    def __init__(self, retry: RetrySettings | None = None) -> None:
        self.retry = retry or RetrySettings()
        self._limits: dict[tuple[str, int | None, int | None, int | None, int | None], ModelLimits] = {}
        self._noticed: set[str] = set()
        self._stated: dict[str, int] = {}
        """The smallest window each model's provider named in refusing a request as too long."""
        self._unthinking: set[str] = set()
        """Models whose server refused the reasoning setting: asked without it from then on."""

    def _delay(self, attempt: int, error: BaseException) -> float:
        hinted = retry_after(error)
        backoff = min(self.retry.base_delay_s * 2.0 ** (attempt - 1), self.retry.max_delay_s)
        # A server that says when to come back is believed, up to the longest delay we accept.
        return min(hinted, self.retry.max_delay_s) if hinted is not None else backoff

    async def limits(self, litellm: Any, model: str, request: ModelRequest) -> ModelLimits:
        return await self._limits_of(litellm, model, request.api_base, request.max_tokens, request.context_window)

    async def _limits_of(
        self, litellm: Any, model: str, api_base: str | None, max_tokens: int | None, context_window: int | None
    ) -> ModelLimits:
        served = await served_window(model, api_base) if is_ollama(model) else None
        stated = self._stated.get(model)
        key = (model, max_tokens, context_window, served, stated)
        if key not in self._limits:
            self._limits[key] = model_limits(litellm, model, max_output_tokens=max_tokens,
                                             context_window=context_window, served_window=served,
                                             stated_window=stated)
        return self._limits[key]

    async def model_limits(
        self, model: str, api_base: str | None, *, max_tokens: int | None = None, context_window: int | None = None,
        reasoning: Reasoning | None = None,
    ) -> ModelLimits:
        """The output limit and context window a request to ``model`` will be given; the output
        limit as sent, raised for a thinking budget (the prompt must leave room for all of it:
        Anthropic refuses input plus ``max_tokens`` over the window)."""
        litellm = await load_litellm()
        model = resolve_model(model, api_base)
        limits = await self._limits_of(litellm, model, api_base, max_tokens, context_window)
        if reasoning is None or model in self._unthinking:
            return limits
        sent: dict[str, Any] = {"max_tokens": limits.max_output_tokens}
        self._reasoning(sent, model, ModelRequest(model=model, messages=[], reasoning=reasoning), limits)
        return replace(limits, max_output_tokens=sent["max_tokens"])

    def _notice_once(self, key: str, text: str, severity: NoticeSeverity = "info") -> ClientNotice | None:
        if key in self._noticed:
            return None
        self._noticed.add(key)
        return ClientNotice(text, severity)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        litellm = await load_litellm()
        model = resolve_model(request.model, request.api_base)
        limits = await self.limits(litellm, model, request)
        for key, text, severity in limit_notes(model, limits, configured_output=request.max_tokens is not None):
            notice = self._notice_once(f"{key}:{model}", text, severity)
            if notice is not None:
                yield notice
        kwargs, notice_text = self._kwargs(litellm, model, request, limits)
        if notice_text:
            notice = self._notice_once(f"reasoning:{model}", notice_text, "warning")
            if notice is not None:
                yield notice
        missing = _missing_keys(litellm, model, kwargs)
        placeholder = kwargs.get("api_key") == _NO_KEY
        key_from = key_source(model, os.environ, placeholder=placeholder)
        attempts = self.retry.attempts
        request_id = f"req{next(_request_ids)}"
        for attempt in itertools.count(1):
            assembler = StreamAssembler()
            try:
                if missing:
                    raise MissingKey()
                async for text, reasoning in self._chunks(litellm, kwargs, assembler):
                    if reasoning:
                        yield ReasoningChunk(reasoning)
                    if text:
                        yield TextChunk(text)
                if assembler.empty and (assembler.usage is None or not assembler.usage.output_tokens):
                    raise StreamEndedEmpty()
                if assembler.cut_in_a_call:
                    raise StreamEndedInACall()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                failure = classify(error, litellm, model, missing_keys=missing, key_from=key_from,
                                   placeholder_key=placeholder)
                if failure.kind == "bad_request" and _refuses_thinking(failure, kwargs):
                    # A model that cannot think (Ollama: '"llama3.1" does not support thinking'):
                    # every call would fail the same way; go on without, and say so.
                    self._unthinking.add(model)
                    for key in _THINKING_KEYS:
                        kwargs.pop(key, None)
                    yield ClientNotice(f"{model} does not think before answering (its server said so): the "
                                       "reasoning setting is ignored for it", "warning")
                    continue
                if failure.kind == "overflow" and failure.window is not None:
                    # Believed over any figure configured or known: the next request's limits
                    # (and the compaction guard's, which asks them) are fitted to it.
                    self._stated[model] = min(self._stated.get(model, failure.window), failure.window)
                if failure.retryable and attempt < attempts:
                    delay = self._delay(attempt, error)
                    yield RetryNotice(attempt=attempt, max_attempts=attempts, delay_s=delay, error=str(failure))
                    await asyncio.sleep(delay)
                    continue
                if failure.retryable and attempt > 1:
                    failure = ModelCallError(f"{failure} (after {attempt} attempts)", kind=failure.kind,
                                             status=failure.status, detail=failure.detail)
                raise failure from error
            if assembler.finish_reason == "content_filter":
                raise ModelCallError(f"{model.split('/')[0]} declined to answer (content filter)", kind="refused",
                                     detail=assembler.text[:2000])
            usage = assembler.usage or _estimated_usage(litellm, model, request.messages, assembler)
            yield ModelResponse(
                text=assembler.text,
                tool_calls=assembler.tool_calls(f"{request_id}_{attempt}"),
                finish_reason=assembler.finish_reason,
                usage=usage,
                cost=_cost(litellm, model, assembler, usage),
                model=model,
                reasoning=assembler.reasoning,
                thinking_blocks=assembler.thinking_blocks,
            )
            return

    async def _chunks(
        self, litellm: Any, kwargs: dict[str, Any], assembler: StreamAssembler
    ) -> AsyncIterator[tuple[str, str]]:
        """The call's chunks as (text, reasoning) pairs; silence longer than the stall timeout raises."""
        stall = self.retry.stall_timeout_s
        try:
            response = await asyncio.wait_for(litellm.acompletion(**kwargs), stall)
        except TimeoutError:
            raise StreamStalled(f"{stall:g} s") from None
        iterator = response.__aiter__()
        try:
            while True:
                # A timer per chunk read rather than ``wait_for``, which runs every read in a task
                # of its own (hundreds per reply). Not across the yield: the consumer's time is not silence.
                try:
                    async with asyncio.timeout(stall):
                        chunk = await iterator.__anext__()
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    raise StreamStalled(f"{stall:g} s") from None
                yield assembler.add(chunk)
        finally:
            close = getattr(iterator, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception:  # noqa: BLE001 - closing a broken stream may fail too; nothing to do
                    pass

    def _kwargs(
        self, litellm: Any, model: str, request: ModelRequest, limits: ModelLimits
    ) -> tuple[dict[str, Any], str | None]:
        """The arguments of the call, and a notice when the reasoning setting cannot apply."""
        messages, tools = request.messages, request.tools
        # A model litellm knows not to reason needs no reasoning sent back; any other may be thinking.
        messages = for_provider(model, messages, thinking=limits.reasoning or not limits.known)
        if limits.cache_control:
            messages, tools = with_breakpoints(messages, tools)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            # Without this, providers send no usage in streaming mode.
            "stream_options": {"include_usage": True},
            # Retries are ours (see module docstring); the OpenAI SDK's own would hide them.
            "max_retries": 0,
            "max_tokens": limits.max_output_tokens,
            # litellm routes any call with tools through its proxy's MCP gateway first (tools of type
            # "mcp" served by a litellm proxy), importing that machinery on the first call: ~0.7 s of
            # CPU here. Our tools are plain functions (MCP servers are ours to call), so skip it; the
            # flag is litellm's own (its MCP handler sets it to avoid recursing) and never sent.
            "_skip_mcp_handler": True,
        }
        if tools:
            kwargs["tools"] = tools
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        if is_ollama(model):
            # Ollama runs a model with its own small default context (2,048 or 4,096 tokens) and
            # silently drops what does not fit, system prompt and tools included; ask for the
            # window the compaction guard budgets with, so what is sent is what the model reads.
            kwargs["num_ctx"] = limits.context_window
        api_base = resolve_api_base(model, request.api_base)
        if api_base:
            kwargs["api_base"] = api_base
        custom_server = api_base or os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL")
        if custom_server and model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            # Local OpenAI-compatible servers (vLLM, llama.cpp, LM Studio) need no key,
            # but the OpenAI SDK refuses to start without one.
            kwargs["api_key"] = _NO_KEY
        if model in self._unthinking:
            return kwargs, None
        return kwargs, self._reasoning(kwargs, model, request, limits)

    @staticmethod
    def _reasoning(kwargs: dict[str, Any], model: str, request: ModelRequest, limits: ModelLimits) -> str | None:
        reasoning = request.reasoning
        if reasoning is None:
            return None
        if limits.known and not limits.reasoning:
            return f"{model} does not reason before answering: the reasoning setting is ignored for it"
        claude = anthropic(model)
        if _forces_a_tool(request.tool_choice) or (claude and not _thinking_can_resume(request.messages)):
            # Anthropic refuses thinking with a forced tool, and a tool use in progress that was
            # made without thinking cannot be continued with it: this one call goes without.
            # (Its rule only: other providers' replies carry no signed blocks, and would lose
            # the reasoning setting after their first tool call.)
            return None
        notice = None
        if reasoning.budget_tokens is not None and claude:
            budget, notice = _fitted_budget(model, reasoning.budget_tokens, limits.output_ceiling)
            if budget is None:
                return notice
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif reasoning.budget_tokens is not None:
            budget = reasoning.budget_tokens
            kwargs["reasoning_effort"] = "low" if budget <= 2048 else "medium" if budget <= 8192 else "high"
        else:
            effort = reasoning.effort or "medium"
            budget = _EFFORT_BUDGETS[effort]
            kwargs["reasoning_effort"] = effort
        if claude:
            # The answer needs room beyond the thinking budget, or the API refuses the request;
            # but never past the model's own output limit, which it refuses too.
            wanted = max(kwargs["max_tokens"], budget + _THINKING_HEADROOM)
            ceiling = limits.output_ceiling
            kwargs["max_tokens"] = min(wanted, ceiling) if ceiling is not None else wanted
        return notice


_MIN_BUDGET = 1024
"""The smallest thinking budget Anthropic takes."""


def _fitted_budget(model: str, budget: int, ceiling: int | None) -> tuple[int | None, str | None]:
    """A thinking budget that leaves room for the answer under the model's output limit, and a
    notice when it had to be lowered (None: the model's limit leaves no room for thinking at all).

    The API wants ``budget_tokens < max_tokens <= the model's limit``; a budget configured for one
    model (``build = 64000``) would make every request to a model with a smaller limit fail.
    """
    if ceiling is None or budget + _THINKING_HEADROOM <= ceiling:
        return budget, None
    fitted = max(ceiling - _THINKING_HEADROOM, ceiling // 2)
    if fitted < _MIN_BUDGET:
        return None, (f"{model} writes at most {ceiling:,} tokens per reply, too few to think before answering: "
                      "the reasoning setting is ignored for it")
    if fitted >= budget:
        return budget, None
    return fitted, (f"thinking budget lowered from {budget:,} to {fitted:,} tokens: {model} writes at most "
                    f"{ceiling:,} tokens per reply, the answer included")


_THINKING_KEYS = ("thinking", "reasoning_effort")
_NO_THINKING = re.compile(r"does not support (thinking|reasoning)|(thinking|reasoning_effort)\W.{0,40}not supported|"
                          r"Unsupported parameter: .?reasoning_effort", re.IGNORECASE)


def _refuses_thinking(failure: ModelCallError, kwargs: dict[str, Any]) -> bool:
    """The request asked for reasoning and the server refused it for that."""
    return any(key in kwargs for key in _THINKING_KEYS) and bool(_NO_THINKING.search(failure.detail or str(failure)))


def _forces_a_tool(tool_choice: str | dict[str, Any] | None) -> bool:
    return tool_choice == "required" or isinstance(tool_choice, dict)


def _thinking_can_resume(messages: list[Message]) -> bool:
    """Thinking may be on unless the last assistant message used tools without thinking blocks
    (a session that switched reasoning on mid-task): the API refuses to continue such a turn."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return not message.get("tool_calls") or bool(message.get("thinking_blocks"))
    return True


def _missing_keys(litellm: Any, model: str, kwargs: dict[str, Any]) -> list[str]:
    """The key variables litellm looks for and does not find; none when a key or server is given."""
    if "api_key" in kwargs or ("api_base" in kwargs and not model.startswith(("anthropic/", "gemini/"))):
        return []
    try:
        found = litellm.validate_environment(model)
    except Exception:  # noqa: BLE001 - a provider litellm cannot check: let the call say
        return []
    missing = found.get("missing_keys") or []
    return [str(key) for key in missing] if not found.get("keys_in_environment") else []


def _estimated_usage(litellm: Any, model: str, messages: list[Message], assembler: StreamAssembler) -> Usage | None:
    """Token counts by litellm's own counter, marked as estimates, when the server sent none."""
    try:
        input_tokens = int(litellm.token_counter(model=model, messages=messages))
        output_tokens = int(litellm.token_counter(model=model, text=assembler.text + assembler.reasoning))
    except Exception:  # noqa: BLE001 - no estimate is better than a wrong one
        return None
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens, estimated=True)


def _cost(litellm: Any, model: str, assembler: StreamAssembler, usage: Usage | None) -> float | None:
    """Price of the call from litellm's tables, cache prices included; None (not 0) when unknown."""
    if usage is None or usage.estimated:
        return None
    try:
        prompt, completion = litellm.cost_per_token(
            model=model,
            prompt_tokens=usage.input_tokens,
            completion_tokens=usage.output_tokens,
            usage_object=assembler.raw_usage,
        )
    except Exception:  # noqa: BLE001 - litellm raises a plain Exception for unknown models
        return None
    return float(prompt) + float(completion)
