"""The work of ``thinking`` (and ``reminded``): one model call, streamed, and its reply recorded.

The reply goes into the conversation and its tool calls wait to run; what the chart does next
(run them, ask for approval, remind the model, give up) is the chart's choice, made from the
:class:`~agentcli.session.outcomes.ModelOutcome` this returns.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from agentcli.config import ReasoningSetting
from agentcli.events import AssistantMessage, Notice, ReasoningDelta, RetryScheduled, TextDelta, UsageReported
from agentcli.llm.shape import returns_reasoning
from agentcli.llm.types import (
    ClientNotice,
    KnowsLimits,
    ModelCallError,
    ModelRequest,
    ModelResponse,
    Reasoning,
    ReasoningChunk,
    RetryNotice,
    TextChunk,
)
from agentcli.secrets import Redactor
from agentcli.session.coalesce import TextCoalescer
from agentcli.session.instructions import find_instructions, instructions_section
from agentcli.session.outcomes import ModelOutcome
from agentcli.session.prompt import system_prompt, workspace_summary
from agentcli.session.turn import Turn, assistant_message


def reasoning_for(setting: ReasoningSetting) -> Reasoning | None:
    """What the config's reasoning setting asks of the model (None: off)."""
    if setting == "off":
        return None
    if isinstance(setting, int):
        return Reasoning(budget_tokens=setting)
    return Reasoning(effort=setting)


class ModelProtocolError(Exception):
    """A model client broke its contract (its stream ended without a response)."""


class _Shown:
    """Streamed text on its way to the screen: coalesced, then redacted, an end that may be half
    a key held back until the next piece shows whether it is one (see ``StreamRedactor``)."""

    def __init__(self, redactor: Redactor, deliver: Callable[[str], None]) -> None:
        self._redacted = redactor.stream(deliver)
        # The coalescer's own timer flushes only itself: a held-back end waits for more text.
        self._coalescer = TextCoalescer(self._redacted.add)

    def add(self, text: str) -> None:
        self._coalescer.add(text)

    def flush(self) -> None:
        """The text has ended (or paused for another kind): show everything."""
        self._coalescer.flush()
        self._redacted.flush()


@dataclass
class _Stream:
    """The reply being streamed, for the exit callback to keep if the stream is cut off."""

    coalescer: _Shown
    thoughts: _Shown
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)


class Thinking:
    """Streams the model for ``thinking`` and ``reminded``."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self._stream: _Stream | None = None
        """The reply being streamed; None once it is recorded (or voided by an error)."""
        self._called = False
        """A request was sent since the state was entered."""
        self._summary: str | None = None

    def _project_instructions(self) -> str:
        """AGENTS.md and the like, read afresh per request; a change in which files apply is
        announced (the first request names them), so the user knows what the model was told."""
        turn = self.turn
        files = find_instructions(turn.workspace)
        names = [item.label(turn.workspace) for item in files]
        if names != turn.instruction_files:
            turn.instruction_files = names
            if names:
                refused = any(item.refused for item in files)
                turn.emit(Notice(kind="instructions", text="instructions: " + ", ".join(names),
                                 severity="warning" if refused else "info"))
            else:
                turn.emit(Notice(kind="instructions", text="instructions: none now", severity="info"))
        return instructions_section(files, turn.workspace)

    async def think(self) -> ModelOutcome:
        """Invoked on entering the state: one model call; its reply is recorded before returning."""
        turn = self.turn
        turn.start_work("calling the model")
        turn.flush_notes()
        turn.deliver_queued()
        await turn.tools.ready()  # MCP servers still starting: their tools belong in this request
        phase = turn.active_phase
        tool_names = turn.phase_tools(phase)
        if self._summary is None:
            self._summary = await asyncio.to_thread(workspace_summary, turn.workspace)
        project = await asyncio.to_thread(self._project_instructions)
        prompt = system_prompt(workspace=turn.workspace, phase=phase, tool_names=tool_names,
                               plan_text=turn.plan.text(), summary=self._summary, project=project)
        settings = turn.settings
        model = settings.model_for(phase.model)
        limits = settings.limits_for(model)
        window = turn.request_window(phase.model)
        tools = turn.tools.schemas(tool_names)
        request = ModelRequest(
            model=model,
            messages=[{"role": "system", "content": prompt}, *turn.messages.view()],
            tools=tools,
            tool_choice=phase.tool_choice_param(),
            api_base=settings.api_base,
            max_tokens=limits.max_output_tokens,
            context_window=window,
            reasoning=reasoning_for(settings.models.reasoning.for_role(phase.model)),
        )
        await self._learn_limits(request)
        turn.fit_tool_output()
        turn.meter.sent(len(prompt) + len(json.dumps(tools)), turn.messages.chars)
        # Redacted on the way to the screen; the whole reply again for the conversation.
        coalescer = _Shown(turn.redact, lambda text: turn.emit(TextDelta(text=text)))
        thoughts = _Shown(turn.redact, lambda text: turn.emit(ReasoningDelta(text=text)))
        stream = self._stream = _Stream(coalescer=coalescer, thoughts=thoughts)
        self._called = True
        response: ModelResponse | None = None
        try:
            async for item in turn.model_client.stream(request):
                if isinstance(item, TextChunk):
                    thoughts.flush()
                    stream.text.append(item.text)
                    coalescer.add(item.text)
                elif isinstance(item, ReasoningChunk):
                    stream.reasoning.append(item.text)
                    thoughts.add(item.text)
                elif isinstance(item, RetryNotice):
                    thoughts.flush()
                    coalescer.flush()
                    stream.text.clear()
                    stream.reasoning.clear()
                    turn.emit(RetryScheduled(attempt=item.attempt, max_attempts=item.max_attempts,
                                             delay_s=item.delay_s, error=item.error))
                elif isinstance(item, ClientNotice):
                    turn.emit(Notice(kind="model", text=item.text, severity=item.severity))
                else:
                    response = item
        except ModelCallError as error:
            self._stream = None  # text streamed before the failure is void, as after a retry
            turn.end_work()
            return ModelOutcome(error=error)
        finally:
            thoughts.flush()
            coalescer.flush()
        if response is None:
            raise ModelProtocolError("the model client ended its stream without a response")
        self._stream = None
        self._record(response)
        turn.compacted_since_call = turn.overflow_compacted = False
        turn.end_work()
        return ModelOutcome(response=response)

    async def _learn_limits(self, request: ModelRequest) -> None:
        """The model's window and output limit, for the compaction guard (none for a replay)."""
        turn = self.turn
        client = turn.model_client
        if not isinstance(client, KnowsLimits):
            turn.window = request.context_window
            return
        limits = await client.model_limits(request.model, request.api_base, max_tokens=request.max_tokens,
                                           context_window=request.context_window, reasoning=request.reasoning)
        turn.window, turn.max_output = limits.context_window, limits.max_output_tokens

    def _record(self, response: ModelResponse) -> None:
        turn = self.turn
        self._record_usage(response)
        calls = response.tool_calls
        text = turn.redact(response.text)
        reasoning = turn.redact(response.reasoning)
        # Redacted as shown and logged, so a resumed conversation is the same one.
        returned = bool(reasoning and calls) and returns_reasoning(response.model)
        turn.messages.append(assistant_message(text, calls, response.thinking_blocks,
                                               reasoning if returned else ""))
        turn.emit(AssistantMessage(text=text, tool_calls=calls, finish_reason=response.finish_reason,
                                   reasoning=reasoning, thinking_blocks=response.thinking_blocks,
                                   reasoning_returned=returned))
        turn.pending.extend(calls)

    def _record_usage(self, response: ModelResponse) -> None:
        usage = response.usage
        if usage is None:
            return
        self.turn.meter.measured(usage.input_tokens, estimated=usage.estimated)
        totals = self.turn.totals
        totals.input_tokens += usage.input_tokens
        totals.output_tokens += usage.output_tokens
        totals.cache_read_tokens += usage.cache_read_tokens
        if response.cost is None or totals.cost is None:
            totals.cost = None
        else:
            totals.cost += response.cost
        self.turn.emit(
            UsageReported(
                model=response.model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cost=response.cost,
                total_input_tokens=totals.input_tokens,
                total_output_tokens=totals.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                total_cache_read_tokens=totals.cache_read_tokens,
                estimated=usage.estimated,
                context_window=self.turn.window,
                total_cost=totals.cost,
            )
        )

    def count_model_call(self) -> None:
        """On leaving the state: a call that was made counts against the step limits, and a
        reply cut off mid-stream (a pause, an error) keeps what was said, marked interrupted."""
        turn = self.turn
        called, self._called = self._called, False
        stream, self._stream = self._stream, None
        if called:
            turn.totals.steps += 1
            turn.phase_steps += 1
        if stream is None:
            return
        stream.thoughts.flush()
        stream.coalescer.flush()
        text = turn.redact("".join(stream.text))
        if text:
            turn.messages.append(assistant_message(text, []))
        turn.emit(AssistantMessage(text=text, interrupted=True, reasoning=turn.redact("".join(stream.reasoning))))
