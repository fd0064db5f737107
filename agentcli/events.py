"""The events a Session emits: the record of everything an agent run does.

Front ends render them, the session log appends them, resume replays them. Every event is a
frozen dataclass with a literal ``type``; where events cross the process boundary (the session
log, JSON output) :func:`event_to_json` and :func:`event_from_dict` convert them through a
pydantic adapter, built on first use. Events are made by our own code, so they are not
validated one by one; and without pydantic at import, the TUI draws its first frame before
pydantic is loaded. This module imports nothing of agentcli's, so every layer may use it.

It is long because it is the log's schema: every event side by side, in one place a reader (or
a version bump) can check whole.

Over 400 lines because it is the whole vocabulary of the session log, one small class per event:
keeping them in one module keeps the log's format in one place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    from pydantic import TypeAdapter

SCHEMA_VERSION = 1
"""Bumped when an event changes shape in a way older readers cannot skip over."""

Outcome = Literal["completed", "clarify", "approval", "paused", "halted", "error"]
"""How a turn ended; the headless front end maps each to an exit code. ``approval``: a tool call
waits for the user's verdict."""


def _now() -> datetime:
    return datetime.now(UTC)


# Every event and its parts are declared @dataclass(frozen=True, slots=True, kw_only=True):
# immutable, compact, built by keyword. The decorator is written out on each class, not kept in an
# alias, so that type checkers see the dataclasses and check every event's construction.
@dataclass(frozen=True, slots=True, kw_only=True)
class BaseEvent:
    """Fields every event carries."""

    ts: datetime = field(default_factory=_now)
    """When the event happened (UTC)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStarted(BaseEvent):
    """A session began (or was resumed) in a workspace."""

    type: Literal["session_started"] = "session_started"
    session_id: str
    workspace: str
    model: str
    api_base: str | None = None
    workflow: str
    resumed: bool = False
    sandbox: bool = False
    """``bash`` runs under bubblewrap; a resume keeps it so unless told ``--no-sandbox``."""
    permission_mode: str | None = None
    """``ask``, ``edits`` or ``all`` as the session started; a resume is never less careful
    than ``ask`` unless told (None in logs from before it was recorded)."""


def with_attached(text: str, attached: str) -> str:
    """The user's words as the model reads them: followed by what their @-mentions attached."""
    return f"{text}\n\n{attached}" if attached else text


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage(BaseEvent):
    """The user said something: a task, guidance after a halt, or a follow-up."""

    type: Literal["user_message"] = "user_message"
    text: str
    """What the user typed (as the transcript shows it)."""
    attached: str = ""
    """Files and listings the message's @-mentions attached: the model reads ``text`` followed by
    this (see :func:`model_text`)."""
    files: list[str] = field(default_factory=list)
    """The attached paths, for the transcript."""
    queued: bool = False
    """Typed while the agent worked, delivered at a step boundary."""

    @property
    def model_text(self) -> str:
        """The message as the model reads it."""
        return with_attached(self.text, self.attached)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClarificationAnswered(BaseEvent):
    """The user answered the agent's question."""

    type: Literal["clarification_answered"] = "clarification_answered"
    call_id: str
    question: str
    answer: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChanged(BaseEvent):
    """The statechart took a transition."""

    type: Literal["state_changed"] = "state_changed"
    event: str
    """The event that fired the transition; empty for an eventless one (a choice the chart made
    on its own, e.g. halting when the progress tracker sees a loop)."""
    source: str
    target: str
    configuration: list[str]
    """Every active state after the transition, outermost first."""
    cond: str | None = None
    """The guard that chose this transition among the event's, when it had one (``has_tool_calls``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta(BaseEvent):
    """Streamed assistant text, coalesced so a front end is not woken per token."""

    type: Literal["text_delta"] = "text_delta"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta(BaseEvent):
    """The model's streamed reasoning (a thinking model), coalesced like text; shown apart."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingBlock:
    """One block of a thinking model's reasoning, exactly as the provider sent it.

    Anthropic requires the previous assistant turn's blocks, with their signatures, to be sent
    back unchanged when tools are used; ``redacted_thinking`` blocks carry only opaque ``data``.
    """

    type: Literal["thinking", "redacted_thinking"] = "thinking"
    thinking: str = ""
    signature: str = ""
    data: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallRequest:
    """A tool call as the model made it (arguments as the raw JSON text it sent)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage(BaseEvent):
    """A whole model response: what goes into the conversation history."""

    type: Literal["assistant_message"] = "assistant_message"
    text: str
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str | None = None
    interrupted: bool = False
    """True when the stream was cut off (a pause) before it finished."""
    reasoning: str = ""
    """The model's reasoning before this reply, as it streamed."""
    thinking_blocks: list[ThinkingBlock] = field(default_factory=list)
    """The signed thinking blocks to send back with this reply (a resume rebuilds them from here)."""
    reasoning_returned: bool = False
    """``reasoning`` goes back with this reply in every later request (DeepSeek's thinking mode
    requires it of a reply that called tools); a resume puts it back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted(BaseEvent):
    """A tool began running."""

    type: Literal["tool_call_started"] = "tool_call_started"
    call_id: str
    name: str
    arguments: str
    preview: str = ""
    """The call's arguments on one line, as its tool declares them (the path, the command…)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished(BaseEvent):
    """A tool finished, failed, or was interrupted."""

    type: Literal["tool_call_finished"] = "tool_call_finished"
    call_id: str
    name: str
    ok: bool
    output: str
    """The text the model sees as the tool result."""
    error: str | None = None
    duration_s: float
    files_changed: list[str] = field(default_factory=list)
    interrupted: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageReported(BaseEvent):
    """Tokens and cost of one model call, with the session's running totals."""

    type: Literal["usage"] = "usage"
    model: str
    input_tokens: int
    """Every input token of the call, read from the prompt cache or not."""
    output_tokens: int
    cost: float | None
    """US dollars, or None when litellm has no price for the model (never a made-up 0)."""
    total_input_tokens: int
    total_output_tokens: int
    total_cost: float | None
    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache."""
    total_cache_read_tokens: int = 0
    estimated: bool = False
    """The server reported no usage; the figures are an estimate."""
    context_window: int | None = None
    """The model's context window in tokens (``input_tokens`` of it is what this request used)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationRewound(BaseEvent):
    """The model's view went back to just before one of the user's messages (``/rewind``), or
    an undo of that put the dropped messages back.

    After it the view is its first ``kept`` messages followed by ``restored``; the log (the
    user's transcript) keeps everything, so the rewind is a branch that can itself be undone.
    """

    type: Literal["conversation_rewound"] = "conversation_rewound"
    point: int
    """Which user message (1 = the first of the branch) it went back to before."""
    text: str
    """That message's text."""
    kept: int
    restored: list[dict[str, Any]] = field(default_factory=list)
    """Messages put back (an undo); empty for a rewind."""
    code_only: bool = False
    """Only the files went back (``--what code``): the view is unchanged. Logged all the same, so
    that an undo in another process (``agentcli rewind ID --undo``) finds the rewind."""
    undo: bool = False
    """This takes back the rewind before it (with ``restored`` for the conversation's messages)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextCompacted(BaseEvent):
    """The older part of the model's view was replaced by a summary the model wrote.

    Only the model's view changes; the log (the user's transcript) keeps everything. ``replaced``
    counts the messages of the view, from its start, that the summary stands for, so a resume
    rebuilds the exact view without summarizing again; 0 (and no summary) when cutting old tool
    outputs to ``output_limit`` made room enough.
    """

    type: Literal["context_compacted"] = "context_compacted"
    summary: str
    replaced: int
    tokens_before: int
    """The request's size before, in tokens (measured or estimated)."""
    tokens_after: int
    """Its size after, estimated."""
    reason: Literal["threshold", "overflow", "manual"] = "threshold"
    window: int | None = None
    output_limit: int | None = None
    """Tool outputs the view kept were cut to this many characters (they were made before a
    smaller window was known); a resume cuts them the same way."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryScheduled(BaseEvent):
    """A model call failed with a retryable error and will be tried again."""

    type: Literal["retry"] = "retry"
    attempt: int
    max_attempts: int
    delay_s: float
    error: str


NoticeSeverity = Literal["info", "warning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice(BaseEvent):
    """Something the user should see that is not an error: a reminder sent, a guard tripped."""

    type: Literal["notice"] = "notice"
    kind: str
    text: str
    severity: NoticeSeverity | None = None
    """``info`` for news (servers ready, the instructions read), ``warning`` for what the user may
    have to act on (a server not available, a setting that could not apply). None in logs from
    before it was recorded: the kind decides then, as it did (see ``describe``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChanged(BaseEvent):
    """The user switched the model for a role (``/model``); the session keeps it, resumed too."""

    type: Literal["model_changed"] = "model_changed"
    role: str
    """``default``, ``plan``, ``build`` or ``explore``."""
    model: str


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """A message waiting in the queue, as :class:`UserMessage` will carry it (redacted)."""

    text: str
    attached: str = ""
    files: list[str] = field(default_factory=list)

    @property
    def model_text(self) -> str:
        """The message as the model reads it (as :attr:`UserMessage.model_text`)."""
        return with_attached(self.text, self.attached)


def joined_queue(messages: Sequence[QueuedMessage | UserMessage]) -> QueuedMessage:
    """Queued messages sent as one, when the turn ended before a step boundary took them: texts
    and attachments each joined by a blank line, the files in order. A resumed log recognises
    the delivery by it (``session.resume.rebuild``)."""
    return QueuedMessage(text="\n\n".join(m.text for m in messages),
                         attached="\n\n".join(m.attached for m in messages if m.attached),
                         files=[f for m in messages for f in m.files])


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueChanged(BaseEvent):
    """The user queued a message while the agent worked, or took queued ones back.

    ``messages`` is the whole queue after the change, oldest first, so a resumed session gets back
    what was still waiting. A delivery at a step boundary logs no ``QueueChanged``: each message
    delivered is a ``UserMessage`` with ``queued`` set, which takes the oldest off the queue. A
    turn that ended first sends the whole queue as one message (:func:`joined_queue`), then logs
    the queue emptied; a log cut between the two is read as delivered.
    """

    type: Literal["queue_changed"] = "queue_changed"
    messages: list[QueuedMessage]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelNote(BaseEvent):
    """Text the agent itself added to the conversation for the model, as a user message.

    Reminders to end with a control tool, recovery hints from the stuck detector, the note that a
    resumed session may find files changed: the log keeps their exact text, so a resumed
    conversation is the one the model saw.
    """

    type: Literal["model_note"] = "model_note"
    kind: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorOccurred(BaseEvent):
    """Something failed. ``fatal`` errors end the turn."""

    type: Literal["error"] = "error"
    kind: str
    message: str
    fatal: bool = False
    exception: str | None = None
    """The exception's type, for an unexpected failure (``OSError``, ``UnicodeEncodeError``)."""
    traceback: str | None = None
    """Where it was raised: for the log and bug reports, never shown on screen."""
    detail: str | None = None
    """The provider's or library's own words (a raw litellm message): for the log only."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClarificationRequested(BaseEvent):
    """The agent asked the user a question and waits for the answer."""

    type: Literal["clarification_requested"] = "clarification_requested"
    call_id: str
    question: str
    options: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnded(BaseEvent):
    """The agent stopped and waits for the user; ``outcome`` says why."""

    type: Literal["turn_ended"] = "turn_ended"
    outcome: Outcome
    reason: str = ""
    """The summary on completion, the question, the pause or halt reason, or the error."""
    steps: int = 0
    """Model calls made in this turn."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One file's change in a snapshot, against the session's previous snapshot."""

    path: str
    status: str = "modified"
    """added, deleted, modified, renamed or typechange."""
    added: int = 0
    removed: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotCaptured(BaseEvent):
    """A snapshot of the workspace was written: a new entry on the timeline."""

    type: Literal["snapshot"] = "snapshot"
    snapshot_id: str
    seq: int
    tree: str
    reason: str
    tool_call_id: str | None = None
    tool_name: str | None = None
    files: list[FileChange] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Paths left out by the size guards, with the reason."""
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotRestored(BaseEvent):
    """The workspace was restored to a snapshot; ``undo_snapshot_id`` restores what it replaced."""

    type: Literal["snapshot_restored"] = "snapshot_restored"
    target_id: str
    target_seq: int
    undo_snapshot_id: str | None
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class StuckDetected(BaseEvent):
    """The progress tracker saw a loop: a recovery hint first, a halt if it goes on."""

    type: Literal["stuck"] = "stuck"
    rule: str
    evidence: str
    severity: Literal["recover", "halt"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressReported(BaseEvent):
    """A summary of the work so far, every few tool calls."""

    type: Literal["progress"] = "progress"
    actions: int
    files_modified: list[str] = field(default_factory=list)
    successes: int = 0
    failures: int = 0
    checks_passing: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequested(BaseEvent):
    """A tool call waits for the user's approval."""

    type: Literal["permission_requested"] = "permission_requested"
    call_id: str
    tool: str
    arguments: str
    summary: str
    """What would happen, in words: the command, or the file and the kind of change."""
    rule: str
    """The allow rule that approving "always" would add, e.g. ``bash:pytest *``."""
    rules: list[str] = field(default_factory=list)
    """Every rule approving "for the session" or "always" adds (one per part of a compound command)."""
    reason: str = ""
    """Why the call needs approval."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDecided(BaseEvent):
    """The user (or a rule) allowed or denied a pending tool call."""

    type: Literal["permission_decided"] = "permission_decided"
    call_id: str
    allowed: bool
    scope: Literal["once", "session", "always"] = "once"
    rules: list[str] = field(default_factory=list)
    """The rules remembered (for ``session`` and ``always``), so a resumed session keeps them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ThoughtRecorded(BaseEvent):
    """A step of sequential thinking (the ``think`` tool)."""

    type: Literal["thought"] = "thought"
    call_id: str
    thought: str
    number: int
    total: int
    next_needed: bool
    revises: int | None = None
    branch: str | None = None
    branch_from: int | None = None
    """The thought the branch starts from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanStep:
    title: str
    acceptance: str = ""
    done: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanUpdated(BaseEvent):
    """The plan was created or a step was ticked off."""

    type: Literal["plan"] = "plan"
    steps: list[PlanStep]


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentEvent(BaseEvent):
    """An event of a child session (the explore subagent), nested under the parent's tool call."""

    type: Literal["subagent"] = "subagent"
    call_id: str
    """The parent's ``explore`` call the child runs for."""
    event: Event


Event = (
    SessionStarted
    | UserMessage
    | ClarificationAnswered
    | StateChanged
    | TextDelta
    | ReasoningDelta
    | AssistantMessage
    | ToolCallStarted
    | ToolCallFinished
    | UsageReported
    | ContextCompacted
    | ConversationRewound
    | RetryScheduled
    | Notice
    | ModelChanged
    | QueueChanged
    | ModelNote
    | ErrorOccurred
    | ClarificationRequested
    | TurnEnded
    | SnapshotCaptured
    | SnapshotRestored
    | StuckDetected
    | ProgressReported
    | PermissionRequested
    | PermissionDecided
    | ThoughtRecorded
    | PlanUpdated
    | SubagentEvent
)

EVENT_CLASSES: tuple[type[BaseEvent], ...] = get_args(Event)


def _type_of(cls: type[BaseEvent]) -> str:
    return next(f.default for f in dataclasses.fields(cls) if f.name == "type")  # type: ignore[return-value]


EVENT_TYPES: frozenset[str] = frozenset(_type_of(cls) for cls in EVENT_CLASSES)
"""Every ``type`` this version knows; a log line with another type came from a newer version."""


def field_names(cls: type[BaseEvent]) -> frozenset[str]:
    """The names of an event class's fields."""
    return frozenset(f.name for f in dataclasses.fields(cls))


@cache
def _adapter() -> TypeAdapter[Event]:
    # Built on first use: the schema of every event costs tens of milliseconds to build.
    from typing import Annotated

    from pydantic import Discriminator, TypeAdapter

    return TypeAdapter(Annotated[Event, Discriminator("type")])


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """The event a JSON object describes, validated, chosen by its ``type``.

    Raises:
        pydantic.ValidationError: a field is missing or has the wrong type.
    """
    return _adapter().validate_python(data)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The event as JSON-ready values (timestamps as ISO strings)."""
    data: dict[str, Any] = _adapter().dump_python(event, mode="json")  # a dataclass dumps to a dict
    return data


def event_to_json(event: Event) -> str:
    """The event as one line of JSON."""
    return _adapter().dump_json(event).decode()
