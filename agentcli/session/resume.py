"""Rebuilding a session from its log: the conversation, the chart configuration, the totals.

Nothing is re-run and the model is not called: the events say what was said and what every tool
returned. A log cut short by a crash is repaired on the way — a tool call that never finished gets
an "interrupted" result, a reply cut mid-stream keeps the text that had streamed — so the model
never sees a call without its result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from agentcli.events import (
    AssistantMessage,
    ClarificationAnswered,
    ClarificationRequested,
    ContextCompacted,
    ConversationRewound,
    Event,
    ModelNote,
    PermissionDecided,
    PermissionRequested,
    PlanStep,
    PlanUpdated,
    QueueChanged,
    QueuedMessage,
    SessionStarted,
    SnapshotRestored,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallRequest,
    ToolCallStarted,
    TurnEnded,
    UsageReported,
    UserMessage,
    joined_queue,
)
from agentcli.llm.types import Message
from agentcli.session.chart import CONTROL_STATES, WAITING_STATES
from agentcli.session.context import cut_output, summary_message
from agentcli.session.prompt import answer_message
from agentcli.session.rewind import RewindTracker
from agentcli.session.turn import INTERRUPTED, NOT_RUN, assistant_message, tool_message


@dataclass
class Rebuilt:
    """Everything a Session needs to continue where its log ends."""

    messages: list[Message] = field(default_factory=list)
    configuration: list[str] = field(default_factory=list)
    """Active state ids to start the chart in."""
    interrupted: str | None = None
    """What was cut off by the crash or kill ("a reply", "a tool call"), if anything."""
    pending_question: ClarificationRequested | None = None
    model_calls: int = 0
    """Replies the model gave (complete or cut off): where a replay model resumes."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cost: float | None = 0.0
    plan: list[PlanStep] = field(default_factory=list)
    pending_permission: PermissionRequested | None = None
    pending_calls: list[ToolCallRequest] = field(default_factory=list)
    """Calls still to run when the session waits for an approval (the first is the one asked about)."""
    session_allow: list[str] = field(default_factory=list)
    session_deny: list[str] = field(default_factory=list)
    last_event_at: datetime | None = None
    started: SessionStarted | None = None
    rewind: RewindTracker = field(default_factory=RewindTracker)
    """The user's messages to rewind to, as the log left them."""
    rewind_undo: tuple[ConversationRewound, list[Message], str | None] | None = None
    """The last rewind while nothing was said after it: the messages it dropped and the snapshot
    its code restore replaced (for ``agentcli rewind --undo``)."""
    last_turn: TurnEnded | None = None
    """How the last turn ended, unless the user went on after it (a crash cut the next one)."""
    queued: list[QueuedMessage] = field(default_factory=list)
    """Messages typed while the agent worked that no step boundary had taken yet."""


def _text_and_attached(queued: list[QueuedMessage]) -> tuple[str, str]:
    joined = joined_queue(queued)
    return joined.text, joined.attached


def rebuild(events: Iterable[Event]) -> Rebuilt:
    state = Rebuilt()
    open_calls: dict[str, ToolCallRequest] = {}  # calls with no result yet, in order
    started_calls: set[str] = set()
    streamed: list[str] = []
    for event in events:
        state.last_event_at = event.ts
        state.rewind.see(event, len(state.messages))
        if isinstance(event, SessionStarted):
            state.started = state.started or event
        elif isinstance(event, UserMessage):
            state.messages.append({"role": "user", "content": event.model_text})
            if event.queued and state.queued:
                state.queued.pop(0)  # delivered at a step boundary, oldest first
            elif state.queued and (event.text, event.attached) == _text_and_attached(state.queued):
                state.queued = []  # sent whole after the turn ended; the log ends before the queue's change
            state.rewind_undo = None
            state.last_turn = None
        elif isinstance(event, ClarificationAnswered):
            state.messages.append({"role": "user", "content": answer_message(event.question, event.answer)})
            if state.queued and event.answer == joined_queue(state.queued).model_text:
                state.queued = []  # the queue sent whole as the answer (as for a UserMessage above)
            state.pending_question = None
            state.last_turn = None
        elif isinstance(event, ModelNote):
            state.messages.append({"role": "user", "content": event.text})
        elif isinstance(event, TextDelta):
            streamed.append(event.text)
        elif isinstance(event, AssistantMessage):
            streamed.clear()
            state.model_calls += 1
            if event.interrupted and not event.text:
                continue
            state.messages.append(assistant_message(event.text, event.tool_calls, event.thinking_blocks,
                                                    event.reasoning if event.reasoning_returned else ""))
            open_calls.update({call.id: call for call in event.tool_calls})
        elif isinstance(event, ToolCallStarted):
            started_calls.add(event.call_id)
        elif isinstance(event, ToolCallFinished):
            if open_calls.pop(event.call_id, None) is not None:
                state.messages.append(tool_message(event.call_id, event.output))
        elif isinstance(event, ClarificationRequested):
            state.pending_question = event
        elif isinstance(event, UsageReported):
            state.input_tokens = event.total_input_tokens
            state.output_tokens = event.total_output_tokens
            state.cache_read_tokens = event.total_cache_read_tokens
            state.cost = event.total_cost
        elif isinstance(event, StateChanged):
            state.configuration = list(event.configuration)
        elif isinstance(event, ContextCompacted):
            if event.replaced:
                state.messages = [summary_message(event.summary), *state.messages[event.replaced:]]
            if event.output_limit is not None:
                state.messages = [cut_output(message, event.output_limit) for message in state.messages]
        elif isinstance(event, ConversationRewound):
            dropped = state.messages[event.kept:]
            if not (event.code_only and not event.undo):  # a rewind of the code alone leaves the view
                state.messages = [*state.messages[:event.kept], *event.restored]
            state.rewind_undo = None if event.restored or event.undo else (event, dropped, None)
        elif isinstance(event, SnapshotRestored):
            if state.rewind_undo is not None and state.rewind_undo[2] is None:
                state.rewind_undo = (state.rewind_undo[0], state.rewind_undo[1], event.undo_snapshot_id)
        elif isinstance(event, TurnEnded):
            streamed.clear()
            state.last_turn = event
        elif isinstance(event, QueueChanged):
            state.queued = list(event.messages)
        elif isinstance(event, PlanUpdated):
            state.plan = list(event.steps)
        elif isinstance(event, PermissionRequested):
            state.pending_permission = event
        elif isinstance(event, PermissionDecided):
            state.pending_permission = None
            state.last_turn = None
            if event.scope != "once":
                (state.session_allow if event.allowed else state.session_deny).extend(event.rules)
    if streamed:
        # The process died mid-stream: keep what the model had said, as the user saw it.
        state.messages.append(assistant_message("".join(streamed), []))
        state.model_calls += 1
        state.interrupted = "a reply"
    control = next((s for s in state.configuration if s in CONTROL_STATES), "idle")
    if control == "awaitingPermission" and state.pending_permission is not None and not streamed:
        # Still waiting for the user: the calls stay pending, to run (or not) on their answer.
        state.pending_calls = list(open_calls.values())
        return state
    state.pending_permission = None
    for call_id in open_calls:
        ran = call_id in started_calls
        state.messages.append(tool_message(call_id, f"Error: {INTERRUPTED if ran else NOT_RUN}"))
        state.interrupted = "a tool call"
    if control not in WAITING_STATES or control == "awaitingPermission":
        # Killed mid-turn: continue from a pause, which the resume command then lifts.
        state.configuration = [s if s != control else "paused" for s in state.configuration]
        state.interrupted = state.interrupted or "the turn"
    if control != "awaitingClarification":
        state.pending_question = None
    return state
