"""What a person should read about an event: the words every front end shows, in one place.

The TUI's stream and the headless printer both call :func:`describe`, so a retry, a stuck
warning or a turn's end reads the same in both. A :class:`Description` carries words and a
:data:`Role`, never styling: each front end maps a role to its own look (a TCSS class, a Rich
style). What a front end draws its own way (streamed text, the user's messages, usage figures)
is not described here.

Textual-free and Rich-free on purpose: this module imports ``agentcli.events`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agentcli.events import (
        Event,
        FileChange,
        Outcome,
        ToolCallFinished,
        ToolCallStarted,
    )

Role = Literal[
    "session",
    "tool-call",
    "tool-ok",
    "tool-error",
    "tool-interrupted",
    "subagent",
    "warning",
    "error",
    "stuck",
    "progress",
    "question",
    "permission",
    "decision",
    "snapshot",
    "restore",
    "context",
    "thought",
    "plan",
    "turn-completed",
    "turn-clarify",
    "turn-approval",
    "turn-paused",
    "turn-halted",
    "turn-error",
]
"""What kind of line it is, for the front end to style: ``turn-*`` ends a turn (one per outcome),
``tool-*`` is a call's result, ``question`` and ``permission`` wait for the user."""

PREVIEW_CHARS = 100
"""A call's preview is cut to this many characters (the raw arguments of old logs too)."""
RESULT_CHARS = 200
"""A result line is cut to this many characters."""
RESULT_LINES = 6
"""Lines of a tool's result in its description (the first, then the rest under it)."""

CALL_MARKS: dict[str, str] = {"running": "◌", "ok": "✓", "error": "✗", "interrupted": "⏸"}
"""The mark of a tool call by status."""

TURN_LABELS: dict[Outcome, str] = {
    "completed": "✓ completed",
    "clarify": "? waiting for your answer",
    "approval": "🔒 waiting for approval",
    "paused": "⏸ paused",
    "halted": "■ halted",
    "error": "✗ error",
}
"""How a turn's end is announced, by outcome."""

NOTE_LABELS: dict[str, str] = {
    "reminder": "the model stopped without complete/clarify/pause; reminded it once",
    "truncated": "the output limit cut the reply off; told the model to take smaller steps",
    "continue": "continuing where the session left off",
    "resumed": "resumed: told the model that time has passed and files may have changed",
    "recovery": "stuck pattern detected; sent the model a recovery hint",
    "restored": "told the model the workspace was restored",
    "shell": "the command's output goes to the model with its next request",
    "images": "the images a tool returned go to the model with its next request",
}
"""What a note the agent added for the model means, by kind (unknown kinds show as they are)."""
WARNING_NOTES = frozenset({"reminder", "recovery"})
"""The notes that say something went wrong (the model stopped short, got stuck): marked ``!``.
The rest say what the model was told (``≡``, as the instructions it reads): information."""

_VERDICTS = {"once": "allowed once", "session": "allowed for this session", "always": "always allowed"}


@dataclass(frozen=True)
class Description:
    """One event in words: a headline (``label text detail``) and maybe lines under it."""

    role: Role
    """What kind of line it is; the front end picks the look."""
    label: str
    """The lead of the headline, with its mark (``✗ tool error:``, ``▶ bash``)."""
    text: str = ""
    """The rest of the headline (the message, the preview, the reason)."""
    detail: str = ""
    """A quieter tail of the headline (a duration, the reason a call needs approval)."""
    more: tuple[str, ...] = ()
    """Lines under the headline, unindented (a question's options, the plan's steps, output)."""

    @property
    def headline(self) -> str:
        return " ".join(part for part in (self.label, self.text, self.detail) if part)

    @property
    def lines(self) -> tuple[str, ...]:
        return (self.headline, *self.more)

    def __str__(self) -> str:
        return "\n".join(self.lines)


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first non-blank line of ``text``, cut to ``limit`` characters with an ellipsis."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def call_preview(event: ToolCallStarted, limit: int = PREVIEW_CHARS) -> str:
    """The call's one-line preview as its tool declares it; for logs older than previews, the
    raw arguments, cut."""
    return one_line(event.preview or event.arguments, limit)


def clip_lines(text: str, limit: int) -> tuple[list[str], int]:
    """The first ``limit`` lines of ``text`` (trailing blanks dropped) and how many are left out."""
    lines = text.rstrip().splitlines()
    return lines[:limit], max(0, len(lines) - limit)


def more_lines(hidden: int) -> str:
    """The line that stands for ``hidden`` lines left out."""
    return f"… {hidden} more line{'s' if hidden != 1 else ''}"


def format_changes(files: Sequence[FileChange], *, first: bool = False) -> str:
    """``a.py +3 −1, b.py +10`` (the first few files), or ``no file changes``.

    A session's first snapshot has nothing before it to differ from: it is ``the workspace as
    found`` ("no file changes" under a folder full of files read as if nothing was recorded)."""
    if not files:
        return "the workspace as found" if first else "no file changes"
    shown = [f"{f.path} +{f.added} −{f.removed}" for f in files[:3]]
    more = f", … {len(files) - 3} more" if len(files) > 3 else ""
    return ", ".join(shown) + more


NO_PRICE = "no price"
"""A session's cost when litellm has no price for a model it used: never a made-up $0, and short
(the TUI's 80-column header keeps the session id beside it). Every front end says it so."""
NO_PRICE_WHY = "litellm has no price for a model this session used: its tokens are counted, its dollars are not"
"""What ``no price`` means, in the same words wherever it is explained."""


def format_cost(cost: float | None) -> str:
    """Dollars, or ``no price`` when a model's price is unknown."""
    return NO_PRICE if cost is None else f"${cost:.4f}"


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


def describe(event: Event) -> Description | None:
    """What to show for ``event``, or None when it is not a line of its own (streamed text, the
    user's words, state changes and usage are drawn by each front end its own way).

    A turn that waits on a question or an approval is described without its reason: the
    question or the request, shown just before, says it.
    """
    # Imported here, not with the module: the TUI's first frame imports this module but
    # draws no event, and the event classes cost ~20 ms to build (one dataclass each).
    from agentcli.events import (
        AssistantMessage,
        ClarificationRequested,
        ContextCompacted,
        ConversationRewound,
        ErrorOccurred,
        ModelChanged,
        ModelNote,
        Notice,
        PermissionDecided,
        PermissionRequested,
        PlanUpdated,
        ProgressReported,
        RetryScheduled,
        SessionStarted,
        SnapshotCaptured,
        SnapshotRestored,
        StuckDetected,
        SubagentEvent,
        ThoughtRecorded,
        ToolCallFinished,
        ToolCallStarted,
        TurnEnded,
    )

    if isinstance(event, ToolCallStarted):
        return Description("tool-call", f"▶ {event.name}", call_preview(event))
    if isinstance(event, ContextCompacted):
        why = {"threshold": "the window was filling up", "overflow": "the model said it overflowed",
               "manual": "asked for"}[event.reason]
        if event.output_limit is not None:  # outputs made before a smaller window was known
            why += f"; long tool outputs cut to {event.output_limit:,} characters"
        return Description("context", "⇣ context compacted:",
                           f"{_tokens(event.tokens_before)} → {_tokens(event.tokens_after)} tokens", f"({why})")
    if isinstance(event, ConversationRewound):
        first = event.text.strip().split("\n", 1)[0][:60]
        if event.code_only:
            return Description("context", "⟳ rewind undone:" if event.undo else "⟲ rewound:",
                               "the files are back" if event.undo else f"the files to before #{event.point} ({first})")
        if event.restored or event.undo:
            return Description("context", "⟳ rewind undone:", f"the conversation after #{event.point} is back")
        return Description("context", "⟲ rewound:", f"the conversation to before #{event.point} ({first})")
    if isinstance(event, ToolCallFinished):
        return _describe_result(event)
    if isinstance(event, SubagentEvent):
        inner = event.event
        if isinstance(inner, ToolCallStarted):
            return Description("subagent", f"↳ ▶ {inner.name}", call_preview(inner))
        return None
    if isinstance(event, TurnEnded):
        role: Role = f"turn-{event.outcome}"  # type: ignore[assignment]
        quiet = event.outcome in ("clarify", "approval") or not event.reason
        return Description(role, TURN_LABELS[event.outcome] + ("" if quiet else ":"), "" if quiet else event.reason)
    if isinstance(event, ClarificationRequested):
        return Description("question", "?", event.question,
                           more=tuple(f"{n}. {option}" for n, option in enumerate(event.options, start=1)))
    if isinstance(event, PermissionRequested):
        return Description("permission", "🔒 approval needed:", event.summary,
                           f"({event.reason})" if event.reason else "")
    if isinstance(event, PermissionDecided):
        verdict = _VERDICTS[event.scope] if event.allowed else "denied"
        rules = ", ".join(event.rules)
        return Description("decision", f"🔒 {verdict}" + (":" if rules else ""), rules)
    if isinstance(event, RetryScheduled):
        return Description("warning", f"⟳ retry {event.attempt}/{event.max_attempts - 1}",
                           f"in {event.delay_s:.1f}s: {event.error}")
    if isinstance(event, Notice):
        if _notice_warns(event.severity, event.kind):
            return Description("warning", "!", event.text)
        return Description("context", "≡", event.text)  # news, not a warning
    if isinstance(event, ModelChanged):
        return Description("context", "≡", f"model for {event.role}: {event.model} (this session, resumed too)")
    if isinstance(event, ModelNote):
        label = NOTE_LABELS.get(event.kind, event.kind)
        if event.kind in WARNING_NOTES:
            return Description("warning", "!", label)
        return Description("context", "≡", label)
    if isinstance(event, ErrorOccurred):
        if event.fatal:
            return None  # it ends the turn, and the turn's end says it (once, not twice)
        # The traceback and the provider's raw words are for the log; the type says enough here.
        return Description("error", f"✗ {event.kind} error:", event.message,
                           f"({event.exception})" if event.exception else "")
    if isinstance(event, StuckDetected):
        then = "sent a recovery hint" if event.severity == "recover" else "halting"
        return Description("stuck", f"⚠ stuck ({event.rule}):", f"{event.evidence} — {then}")
    if isinstance(event, ProgressReported):
        files = event.files_modified
        noun = "file" if len(files) == 1 else "files"
        modified = (f"{len(files)} {noun} modified ({', '.join(files[:5])}{', …' if len(files) > 5 else ''})"
                    if files else "no files modified")
        return Description("progress", "progress:", f"{event.actions} actions · {event.successes} ok · "
                           f"{event.failures} failed · {event.checks_passing} checks passing · {modified}")
    if isinstance(event, ThoughtRecorded):
        return Description("thought", f"💭 thought {event.number}/{event.total}:", event.thought)
    if isinstance(event, PlanUpdated):
        return Description("plan", "plan:", more=tuple(
            f"{'☑' if step.done else '☐'} {number}. {step.title}" for number, step in enumerate(event.steps, start=1)))
    if isinstance(event, SnapshotCaptured):
        skipped = ("not snapshotted: " + ", ".join(event.skipped[:5]),) if event.skipped else ()
        changes = format_changes(event.files, first=event.seq == 1)
        return Description("snapshot", f"◆ snapshot {event.seq}",
                           f"{event.snapshot_id[:10]} · {event.reason} · {changes}", more=skipped)
    if isinstance(event, SnapshotRestored):
        undo = f"(undo point {event.undo_snapshot_id[:10]})" if event.undo_snapshot_id else ""
        return Description("restore", f"↶ restored the workspace to snapshot #{event.target_seq}:",
                           f"{len(event.written)} written, {len(event.deleted)} deleted", undo)
    if isinstance(event, SessionStarted):
        return Description("session", "resumed session" if event.resumed else "session", event.session_id,
                           f"· {event.model} · {event.workspace}")
    if isinstance(event, AssistantMessage) and event.interrupted:
        return Description("warning", "… reply interrupted")
    return None


_NEWS_KINDS = frozenset({"instructions", "model"})
"""The kinds of notice that were news before notices carried a severity (which files, which model)."""


def _notice_warns(severity: str | None, kind: str) -> bool:
    """A notice is a warning when it says so; one logged without a severity, unless of a kind
    that was always news (what old logs showed, they show still)."""
    return severity == "warning" if severity is not None else kind not in _NEWS_KINDS


def _describe_result(event: ToolCallFinished) -> Description:
    status = "interrupted" if event.interrupted else ("ok" if event.ok else "error")
    lines, hidden = clip_lines(event.output, RESULT_LINES)
    first, rest = (lines[0], lines[1:]) if lines else ("", [])
    more = [line[:RESULT_CHARS] for line in rest] + ([more_lines(hidden)] if hidden else [])
    if event.error and event.error not in event.output:
        more.append(event.error[:RESULT_CHARS])
    return Description(f"tool-{status}", CALL_MARKS[status], first[:RESULT_CHARS],  # type: ignore[arg-type]
                       f"{event.duration_s:.2f}s", tuple(more))
