"""The work of ``compacting``: the model summarizes the older part of its view, which the summary
then replaces.

The summary is written in a dedicated request that is itself bounded: when the part to summarize
does not fit the model's window, old tool outputs are first cut to one line each, then the part
is summarized in chunks, each chunk's request carrying the summary so far. The latest user turns
stay verbatim, a tool call is never parted from its result, and the plan and the project's
instructions are not summarized (they are part of every request's system prompt). Only the
model's view changes: the log keeps everything, and a ``ContextCompacted`` event records the
summary and what it replaced, so a resume rebuilds the same view without summarizing again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentcli.events import ContextCompacted, RetryScheduled
from agentcli.llm.types import Message, ModelCallError, ModelRequest, ModelResponse, RetryNotice
from agentcli.session.context import message_size, summary_message
from agentcli.session.outcomes import ModelOutcome
from agentcli.session.turn import Turn

Reason = Literal["threshold", "overflow", "manual"]

SUMMARY_OUTPUT_TOKENS = 4096
"""The longest summary asked for."""

_SYSTEM = """\
You are summarizing the earlier part of a coding session between a user and a coding agent, so the
agent can go on from the summary instead of the whole history. The agent will not see the earlier
messages again: keep every fact it needs, drop what it does not."""

_INSTRUCTIONS = """\
Write the summary now, in these sections (leave a section out when it has nothing):

1. Task and constraints: what the user asked for, in their words where it matters, and every
   constraint or preference they stated.
2. Decisions: what was decided and why, including approaches tried and abandoned.
3. Files changed: each path and what changed in it (with snapshot ids where they were given).
4. Commands and checks: what was run and the latest result of each (passing, failing, the error).
5. In progress: what was being done when this part ended.
6. Next: what remains to do, in order.

Be specific (paths, names, numbers, error messages); do not invent anything."""


@dataclass(frozen=True)
class CompactionOutcome:
    """How a compaction went: the view shrank, or it could not (and why)."""

    reason: Reason
    tokens_before: int
    tokens_after: int = 0
    replaced: int = 0
    cut: int = 0
    """Tool outputs cut to the share of the window a single output may take."""
    error: ModelCallError | None = None
    no_gain: bool = False
    """A summary was written but was no shorter than the part it would replace (so not used)."""
    fits: bool = False
    """The request now fits the budget: after an overflow, the window the provider stated may
    lower the output limit sent enough to make room without compacting anything."""
    origin: str | None = None
    """For a compaction the user asked for: the waiting state it was asked in."""

    @property
    def compacted(self) -> bool:
        return self.replaced > 0 or self.cut > 0


class Compacting:
    """Summarizes the older part of the model's view for ``compacting``."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    async def summarize_history(
        self, data: ModelOutcome | None = None, focus: str | None = None, origin: str | None = None
    ) -> CompactionOutcome:
        """Invoked on entering the state: by the threshold (no data), after an overflow (the
        failed model call as data), or by the user (``origin``, and maybe a ``focus``).

        Tool outputs longer than the window now allows are cut first; when the request then fits
        the budget (the cut, or the smaller output limit a stated window brings, made room) and the
        user did not ask for a summary, nothing is summarized.
        A summary no shorter than what it would replace is not used: the view only ever shrinks.
        """
        turn = self.turn
        turn.start_work("compacting the context")
        reason: Reason = "manual" if origin is not None else "overflow" if data is not None else "threshold"
        if data is not None and data.error is not None:
            self._learn_from_overflow(data.error)
        before = turn.context_tokens()
        if reason == "overflow":
            turn.overflow_compacted = True
        turn.compacted_since_call = True
        limit = turn.output_limit()
        cut = turn.messages.cut_outputs(limit)
        replaced, summary, error, no_gain = 0, "", None, False
        budget = turn.context_budget()
        if reason == "manual" or budget is None or turn.context_tokens() > budget:
            window = turn.window or 0
            keep_chars = round(window * 0.5 * turn.meter.chars_per_token) if window else 200_000
            split = turn.messages.split(turn.settings.context.keep_recent_turns, keep_chars)
            held = turn.messages.view()[:split]
            try:
                summary = await self._summarize([_without_thinking(m) for m in held], focus) if split else ""
            except ModelCallError as failed:
                error = failed
            if summary and message_size(summary_message(summary)) < turn.messages.size_of(held):
                turn.messages.compact(split, summary)
                replaced = split
            else:
                no_gain, summary = bool(summary), ""
        turn.meter.compacted(turn.messages.chars)
        after = turn.context_tokens()
        if replaced or cut:  # the view changed: recorded, so a resume rebuilds the same one
            turn.emit(ContextCompacted(summary=summary, replaced=replaced, tokens_before=before, tokens_after=after,
                                       reason=reason, window=turn.window, output_limit=limit if cut else None))
        turn.end_work()
        fits = budget is not None and after <= budget
        return CompactionOutcome(reason, before, after, replaced=replaced, cut=cut, error=error, no_gain=no_gain,
                                 fits=fits, origin=origin)

    def _learn_from_overflow(self, error: ModelCallError) -> None:
        """A provider that says its window and the request's size is believed over any guess: the
        next requests are compacted before they overflow, not after."""
        turn = self.turn
        if error.window is not None:
            turn.learned_window = error.window
            turn.window = min(turn.window or error.window, error.window)
            turn.max_output = min(turn.max_output or error.window // 4, error.window // 4)
        if error.prompt_tokens is not None:
            turn.meter.measured(error.prompt_tokens, estimated=False)

    async def _summarize(self, old: list[Message], focus: str | None) -> str:
        """One summary of ``old``, in as many requests as the window needs."""
        instructions = _INSTRUCTIONS + (f"\n\nPay particular attention to: {focus}" if focus else "")
        room = self._room()
        chunks = _chunks(old, room) if _chars(old) > room else [old]
        if len(chunks) > 1:
            old = [_stub(message) for message in old]  # first try: every old tool output on one line
            chunks = _chunks(old, room) if _chars(old) > room else [old]
        summary = ""
        for chunk in chunks:
            lead: list[Message] = (
                [{"role": "user", "content": f"Summary of what came before:\n\n{summary}"}] if summary else [])
            body = _alternating([*lead, *chunk])
            summary = await self._ask([*body, {"role": "user", "content": instructions}])
        return summary

    def _room(self) -> int:
        """Characters of history one summary request may carry."""
        turn = self.turn
        if not turn.window:
            return 10**9
        tokens = turn.window - SUMMARY_OUTPUT_TOKENS - 2000  # the instructions, and a margin
        return max(4000, round(tokens * 0.9 * turn.meter.chars_per_token))

    async def _ask(self, messages: list[Message]) -> str:
        turn = self.turn
        phase = turn.active_phase
        model = turn.settings.model_for(phase.model)
        request = ModelRequest(model=model, messages=[{"role": "system", "content": _SYSTEM}, *messages],
                               api_base=turn.settings.api_base, max_tokens=SUMMARY_OUTPUT_TOKENS,
                               context_window=turn.request_window(phase.model))
        response: ModelResponse | None = None
        async for item in turn.model_client.stream(request):
            if isinstance(item, RetryNotice):
                turn.emit(RetryScheduled(attempt=item.attempt, max_attempts=item.max_attempts, delay_s=item.delay_s,
                                         error=item.error))
            elif isinstance(item, ModelResponse):
                response = item
        text = response.text.strip() if response is not None else ""
        if not text:
            raise ModelCallError("the model wrote no summary", kind="cut_stream")
        return text


def _without_thinking(message: Message) -> Message:
    """Thinking blocks are for the turn they belong to; a summary request needs none. (DeepSeek's
    ``reasoning_content`` stays: its API refuses any later request, this one too, without it.)"""
    return {key: value for key, value in message.items() if key != "thinking_blocks"}


def _stub(message: Message) -> Message:
    """A tool output cut to its first line (the call that made it says what it was)."""
    if message.get("role") != "tool":
        return message
    content = str(message.get("content") or "")
    lines = content.splitlines()
    if len(lines) <= 1 and len(content) <= 300:
        return message
    first = (lines[0] if lines else "")[:200]
    return {**message, "content": f"{first} [… {len(lines)} lines of output left out of the summary request]"}


def _chars(messages: list[Message]) -> int:
    return sum(message_size(message) for message in messages)


def _chunks(messages: list[Message], room: int) -> list[list[Message]]:
    """Consecutive runs of whole call groups, each within ``room`` characters (a single group
    larger than that goes alone: its outputs are already stubs)."""
    groups: list[list[Message]] = []
    for message in messages:
        if message["role"] == "tool" and groups:
            groups[-1].append(message)
        else:
            groups.append([message])
    chunks: list[list[Message]] = [[]]
    size = 0
    for group in groups:
        group_size = _chars(group)
        if chunks[-1] and size + group_size > room:
            chunks.append([])
            size = 0
        chunks[-1].extend(group)
        size += group_size
    return chunks


def _alternating(messages: list[Message]) -> list[Message]:
    """A chunk that starts with an assistant's answers gets a user message first: every provider
    wants the conversation to open with the user."""
    if messages and messages[0]["role"] != "user":
        return [{"role": "user", "content": "(earlier messages continue)"}, *messages]
    return messages
