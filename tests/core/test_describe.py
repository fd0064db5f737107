"""One describer of events: the words the TUI's stream and the headless printer both show."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys

import pytest
from rich.console import Console

from agentcli.describe import Description, describe
from agentcli.events import (
    EVENT_CLASSES,
    AssistantMessage,
    ClarificationAnswered,
    ClarificationRequested,
    ContextCompacted,
    ConversationRewound,
    ErrorOccurred,
    Event,
    FileChange,
    ModelChanged,
    ModelNote,
    Notice,
    PermissionDecided,
    PermissionRequested,
    PlanStep,
    PlanUpdated,
    ProgressReported,
    QueueChanged,
    ReasoningDelta,
    RetryScheduled,
    SessionStarted,
    SnapshotCaptured,
    SnapshotRestored,
    StateChanged,
    StuckDetected,
    SubagentEvent,
    TextDelta,
    ThoughtRecorded,
    ToolCallFinished,
    ToolCallStarted,
    TurnEnded,
    UsageReported,
    UserMessage,
    event_from_dict,
    event_to_dict,
)
from agentcli.headless import TextPrinter

SECRET_FRAME = 'File "/home/me/agentcli/session/runtime.py", line 312, in run_thinking'

SHOWN: list[Event] = [
    SessionStarted(session_id="5e55a1d0c0de", workspace="/w", model="openai/x", workflow="single", resumed=True),
    ToolCallStarted(call_id="1", name="bash", arguments='{"command": "pytest -q"}', preview="pytest -q"),
    ToolCallFinished(call_id="1", name="bash", ok=False, output="1 failed\n" + "x\n" * 9, duration_s=1.25),
    SubagentEvent(call_id="e", event=ToolCallStarted(call_id="2", name="grep", arguments="{}", preview="TODO")),
    RetryScheduled(attempt=1, max_attempts=3, delay_s=0.5, error="429 rate limited"),
    Notice(kind="snapshot_skipped", text="not snapshotted: big.bin"),
    ModelNote(kind="reminder", text="End with complete, clarify or pause."),
    ErrorOccurred(kind="internal", message="cannot write the log", exception="OSError",
                  traceback=f"Traceback (most recent call last):\n  {SECRET_FRAME}\nOSError: disk full"),
    StuckDetected(rule="same_error", evidence="the same error on app.py three times", severity="halt"),
    ProgressReported(actions=12, files_modified=["a.py", "b.py"], successes=10, failures=2, checks_passing=3),
    ClarificationRequested(call_id="c", question="Which database?", options=["postgres", "sqlite"]),
    TurnEnded(outcome="completed", reason="fixed the bug", steps=3),
    TurnEnded(outcome="paused", reason="the app was closed"),
    TurnEnded(outcome="halted", reason="step limit reached (7 model calls)"),
    TurnEnded(outcome="error", reason="bad key"),
    TurnEnded(outcome="clarify", reason="Which database?"),
    TurnEnded(outcome="approval", reason="approval needed: Run `rm -rf build`"),
    SnapshotRestored(target_id="s", target_seq=2, undo_snapshot_id="0123456789abcdef", written=["a.py"], deleted=[]),
    SnapshotCaptured(snapshot_id="fedcba9876543210", seq=3, tree="t", reason="after bash",
                     files=[FileChange(path="a.py", added=3, removed=1)]),
    ThoughtRecorded(call_id="t", thought="a - b should be a + b", number=1, total=3, next_needed=True),
    PlanUpdated(steps=[PlanStep(title="Fix add", done=True), PlanStep(title="Add a test")]),
    PermissionRequested(call_id="p", tool="bash", arguments="{}", summary="Run `rm -rf build`", rule="bash:rm *",
                        reason="no rule allows it"),
    PermissionDecided(call_id="p", allowed=True, scope="session", rules=["bash:rm *"]),
    PermissionDecided(call_id="p", allowed=False),
    AssistantMessage(text="half a sen", interrupted=True),
    ContextCompacted(summary="s", replaced=10, tokens_before=118_000, tokens_after=21_000, reason="threshold"),
    ConversationRewound(point=2, text="make it two\nand more", kept=4),
    ModelChanged(role="plan", model="openai/gpt-4.1"),
]
"""One of every kind of event a person reads about."""

DRAWN_BY_EACH_FRONT_END = (TextDelta, ReasoningDelta, UserMessage, ClarificationAnswered, StateChanged, UsageReported,
                           QueueChanged)
"""Events the front ends draw their own way (streamed text and reasoning, the user's words, the
graph, totals, the queue above the prompt)."""


def test_every_kind_of_event_is_described_or_left_to_the_front_ends() -> None:
    described = {type(event) for event in SHOWN}
    assert described | set(DRAWN_BY_EACH_FRONT_END) == set(EVENT_CLASSES)
    assert all(describe(event) is not None for event in SHOWN)


@pytest.mark.parametrize("event", [TextDelta(text="hi"), UserMessage(text="fix it"), UsageReported(
    model="m", input_tokens=1, output_tokens=1, cost=None, total_input_tokens=1, total_output_tokens=1,
    total_cost=None), AssistantMessage(text="whole reply")])
def test_what_each_front_end_draws_itself_is_not_described(event: Event) -> None:
    assert describe(event) is None


def test_lines_read_as_a_person_would_expect() -> None:
    def text(event: Event) -> str:
        description = describe(event)
        assert description is not None
        return str(description)

    assert text(SHOWN[1]) == "▶ bash pytest -q"
    assert text(SHOWN[2]).splitlines() == ["✗ 1 failed 1.25s", "x", "x", "x", "x", "x", "… 4 more lines"]
    assert text(SHOWN[4]) == "⟳ retry 1/2 in 0.5s: 429 rate limited"
    assert text(SHOWN[7]) == "✗ internal error: cannot write the log (OSError)"
    assert text(SHOWN[8]) == "⚠ stuck (same_error): the same error on app.py three times — halting"
    assert text(SHOWN[10]).splitlines() == ["? Which database?", "1. postgres", "2. sqlite"]
    assert text(SHOWN[11]) == "✓ completed: fixed the bug"
    assert text(SHOWN[12]) == "⏸ paused: the app was closed"
    # A question or a request was shown just before: the turn's end does not repeat it.
    assert text(SHOWN[15]) == "? waiting for your answer"
    assert text(SHOWN[16]) == "🔒 waiting for approval"
    assert text(SHOWN[21]) == "🔒 approval needed: Run `rm -rf build` (no rule allows it)"
    assert text(SHOWN[-2]) == "⟲ rewound: the conversation to before #2 (make it two)"
    assert text(SHOWN[-1]) == "≡ model for plan: openai/gpt-4.1 (this session, resumed too)"
    undone = ConversationRewound(point=2, text="make it two", kept=4, restored=[{"role": "user", "content": "x"}])
    assert text(undone) == "⟳ rewind undone: the conversation after #2 is back"
    assert text(SHOWN[23]) == "🔒 denied"


def test_only_warnings_are_marked_with_a_bang() -> None:
    def headline(kind: str) -> tuple[str, str]:
        description = describe(ModelNote(kind=kind, text="for the model"))
        assert description is not None
        return description.role, description.headline

    assert headline("restored") == ("context", "≡ told the model the workspace was restored")
    for kind in ("continue", "resumed", "shell", "images"):
        role, line = headline(kind)
        assert role == "context" and line.startswith("≡ "), (kind, line)
    for kind in ("reminder", "recovery"):  # the model stopped short, got stuck: warnings
        role, line = headline(kind)
        assert role == "warning" and line.startswith("! "), (kind, line)


def test_a_notice_is_marked_as_a_warning_only_when_it_is_one() -> None:
    def shown(notice: Event) -> tuple[str, str]:
        description = describe(notice)
        assert description is not None
        return description.role, str(description)

    ready = Notice(kind="mcp", text="MCP servers ready in 0.4 s: time (2 tools)", severity="info")
    gone = Notice(kind="mcp", text="MCP server 'gone' is not available: the command was not found", severity="warning")
    assert shown(ready) == ("context", "≡ MCP servers ready in 0.4 s: time (2 tools)")
    assert shown(gone) == ("warning", "! MCP server 'gone' is not available: the command was not found")
    lowered = Notice(kind="model", text="thinking budget lowered from 64,000 to 59,904 tokens", severity="warning")
    assert shown(lowered)[0] == "warning"
    # A log written before notices had a severity reads as it did: news by kind, else a warning.
    old = {"type": "notice", "ts": "2026-11-01T10:00:00Z"}
    old_mcp = event_from_dict({**old, "kind": "mcp", "text": "MCP servers ready"})
    assert shown(old_mcp) == ("warning", "! MCP servers ready")
    for kind in ("instructions", "model"):
        assert shown(event_from_dict({**old, "kind": kind, "text": "x"}))[0] == "context"
    assert event_from_dict(event_to_dict(ready)) == ready


def test_each_turn_outcome_has_its_own_role() -> None:
    roles = {describe(event).role for event in SHOWN if isinstance(event, TurnEnded)}  # type: ignore[union-attr]
    assert roles == {"turn-completed", "turn-paused", "turn-halted", "turn-error", "turn-clarify", "turn-approval"}


def test_a_call_is_previewed_as_its_tool_declares_else_by_its_raw_arguments_cut() -> None:
    declared = ToolCallStarted(call_id="1", name="edit_file", arguments='{"path": "a.py", "old_string": "x"}',
                               preview="a.py")
    assert describe(declared) == Description("tool-call", "▶ edit_file", "a.py")
    old_log = ToolCallStarted(call_id="1", name="write_file", arguments='{"path": "a.py", "content": "' + "y" * 300 + '"}')
    text = describe(old_log).text  # type: ignore[union-attr]
    assert text.startswith('{"path": "a.py", "content": "yyy') and text.endswith("…") and len(text) == 100


def test_a_traceback_is_never_shown() -> None:
    error = SHOWN[7]
    assert SECRET_FRAME not in str(describe(error))
    out = io.StringIO()
    TextPrinter(Console(file=out, width=200, highlight=False))(error)
    assert "cannot write the log" in out.getvalue() and SECRET_FRAME not in out.getvalue()
    assert "Traceback" not in out.getvalue()


def test_the_headless_printer_prints_the_describers_words() -> None:
    out = io.StringIO()
    printer = TextPrinter(Console(file=out, width=300, highlight=False))
    for event in SHOWN:
        printer(event)
    printed = out.getvalue()
    for event in SHOWN:
        description = describe(event)
        assert description is not None
        for line in description.lines:
            assert line in printed, f"{type(event).__name__}: {line!r} not printed"


def test_descriptions_are_plain_data() -> None:
    description = describe(SHOWN[10])
    assert dataclasses.is_dataclass(description) and description.lines == tuple(str(description).splitlines())


def test_the_describer_imports_neither_rich_nor_textual() -> None:
    code = "import sys, agentcli.describe; print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'textual')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_progress_summary_with_one_file_modified_says_file() -> None:
    one = describe(ProgressReported(actions=3, files_modified=["a.py"], successes=3, failures=0, checks_passing=0))
    assert one is not None and "1 file modified (a.py)" in one.text, one


def test_a_first_snapshot_is_the_workspace_as_found_and_a_later_empty_one_changed_nothing() -> None:
    from agentcli.describe import describe
    from agentcli.events import SnapshotCaptured

    first = describe(SnapshotCaptured(snapshot_id="a" * 40, seq=1, tree="t", reason="session start"))
    later = describe(SnapshotCaptured(snapshot_id="b" * 40, seq=4, tree="t", reason="after bash"))
    assert first is not None and first.text.endswith("session start · the workspace as found")
    assert later is not None and later.text.endswith("after bash · no file changes")
