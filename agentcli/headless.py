"""The headless front end: a Session's events printed with Rich, or as JSON lines.

It reads events only, like any front end; the exit code comes from how the turn ended.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from agentcli.events import (
    AssistantMessage,
    ClarificationRequested,
    ErrorOccurred,
    Event,
    FileChange,
    ModelNote,
    Notice,
    Outcome,
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
    TextDelta,
    ThoughtRecorded,
    ToolCallFinished,
    ToolCallStarted,
    TurnEnded,
    event_to_json,
    UsageReported,
)

EXIT_CODES: dict[Outcome, int] = {"completed": 0, "error": 1, "clarify": 3, "halted": 4, "paused": 5, "approval": 5}
"""A call waiting for approval exits like a pause (5): the run stopped and ``resume`` continues it."""
EXIT_USAGE = 2

_ARGUMENT_PREVIEW = 100
_NOTE_LABELS = {
    "reminder": "the model stopped without complete/clarify/pause; reminded it once",
    "continue": "continuing where the session left off",
    "resumed": "resumed: told the model that time has passed and files may have changed",
    "recovery": "stuck pattern detected; sent the model a recovery hint",
}
_RESULT_LINES = 6


def _preview_arguments(name: str, raw: str) -> str:
    try:
        args = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return raw[:_ARGUMENT_PREVIEW]
    if not isinstance(args, dict):
        return raw[:_ARGUMENT_PREVIEW]
    for key in ("path", "command", "pattern", "summary", "question", "reason"):
        if key in args:
            text = str(args[key]).splitlines()[0] if str(args[key]) else ""
            return text[:_ARGUMENT_PREVIEW]
    return ", ".join(f"{k}={v!r}" for k, v in args.items())[:_ARGUMENT_PREVIEW]


def format_age(when: datetime) -> str:
    seconds = max(0.0, (datetime.now(timezone.utc) - when).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit} ago"
    return f"{seconds:.0f}s ago"


def format_changes(files: Sequence[FileChange]) -> str:
    """``a.py +3 −1, b.py +10`` (the first few files), or ``no file changes``."""
    if not files:
        return "no file changes"
    shown = [f"{f.path} +{f.added} −{f.removed}" for f in files[:3]]
    more = f", … {len(files) - 3} more" if len(files) > 3 else ""
    return ", ".join(shown) + more


def format_cost(cost: float | None) -> str:
    return "cost unknown" if cost is None else f"${cost:.4f}"


class TextPrinter:
    """Prints what the agent says and does, for a person watching a terminal."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self._mid_text = False
        self._totals: UsageReported | None = None
        self.session_id = ""

    def _end_text(self) -> None:
        if self._mid_text:
            self.console.print()
            self._mid_text = False

    def __call__(self, event: Event) -> None:
        c = self.console
        if isinstance(event, TextDelta):
            c.print(escape(event.text), end="", soft_wrap=True)
            self._mid_text = True
            return
        if isinstance(event, SessionStarted):
            self.session_id = event.session_id
            verb = "resumed" if event.resumed else "session"
            c.print(f"[dim]{verb} {event.session_id} · {escape(event.model)} · {escape(event.workspace)}[/]")
        elif isinstance(event, AssistantMessage):
            self._end_text()
            if event.interrupted:
                c.print("[yellow]… (reply interrupted)[/]")
        elif isinstance(event, ToolCallStarted):
            self._end_text()
            c.print(f"[bold cyan]▶ {event.name}[/] {escape(_preview_arguments(event.name, event.arguments))}")
        elif isinstance(event, ToolCallFinished):
            self._print_result(event)
        elif isinstance(event, UsageReported):
            self._totals = event
        elif isinstance(event, RetryScheduled):
            self._end_text()
            c.print(f"[yellow]⟳ retry {event.attempt}/{event.max_attempts - 1} in {event.delay_s:.1f}s: {escape(event.error)}[/]")
        elif isinstance(event, SubagentEvent):
            inner = event.event
            if isinstance(inner, ToolCallStarted):
                self._end_text()
                c.print(f"[dim]  ↳ ▶ {inner.name} {escape(_preview_arguments(inner.name, inner.arguments))}[/]")
        elif isinstance(event, ThoughtRecorded):
            self._end_text()
            c.print(f"[italic dim]  thought {event.number}/{event.total}: {escape(event.thought)}[/]")
        elif isinstance(event, PlanUpdated):
            self._end_text()
            c.print("[bold]plan:[/]")
            for number, step in enumerate(event.steps, start=1):
                c.print(f"  {'☑' if step.done else '☐'} {number}. {escape(step.title)}")
        elif isinstance(event, SnapshotCaptured):
            self._end_text()
            c.print(f"[dim]◆ snapshot {event.seq} {event.snapshot_id[:10]} · {escape(event.reason)} · "
                    f"{escape(format_changes(event.files))}[/]")
            if event.skipped:
                c.print(f"[yellow]  not snapshotted: {escape(', '.join(event.skipped[:5]))}[/]")
        elif isinstance(event, SnapshotRestored):
            self._end_text()
            c.print(f"[bold]↺ restored snapshot {event.target_seq}[/]: {len(event.written)} written, "
                    f"{len(event.deleted)} deleted")
        elif isinstance(event, StuckDetected):
            self._end_text()
            then = "sent a recovery hint" if event.severity == "recover" else "halting"
            c.print(f"[bold yellow]⚠ stuck ({event.rule}):[/] {escape(event.evidence)} — {then}")
        elif isinstance(event, ProgressReported):
            self._end_text()
            c.print(f"[dim]progress: {event.actions} actions · {len(event.files_modified)} files modified · "
                    f"{event.successes} ok · {event.failures} failed[/]")
        elif isinstance(event, ModelNote):
            self._end_text()
            c.print(f"[yellow]! {escape(_NOTE_LABELS.get(event.kind, event.kind))}[/]")
        elif isinstance(event, Notice):
            self._end_text()
            c.print(f"[yellow]! {escape(event.text)}[/]")
        elif isinstance(event, ErrorOccurred):
            self._end_text()
            c.print(f"[bold red]✗ {event.kind} error:[/] {escape(event.message)}")
        elif isinstance(event, PermissionRequested):
            self._end_text()
            c.print(f"[bold yellow]⏸ approval needed:[/] {escape(event.summary)} [dim]({escape(event.reason)})[/]")
        elif isinstance(event, PermissionDecided):
            verdict = "approved" if event.allowed else "denied"
            remembered = f", remembered: {', '.join(event.rules)}" if event.rules else ""
            c.print(f"[dim]{verdict} ({event.scope}){escape(remembered)}[/]")
        elif isinstance(event, ClarificationRequested):
            self._end_text()
            c.print(f"[bold magenta]? {escape(event.question)}[/]")
            for number, option in enumerate(event.options, start=1):
                c.print(f"  {number}. {escape(option)}")
        elif isinstance(event, TurnEnded):
            self._end_text()
            self._print_end(event)

    def _print_result(self, event: ToolCallFinished) -> None:
        mark = "[green]✓[/]" if event.ok else ("[yellow]⏸[/]" if event.interrupted else "[red]✗[/]")
        lines = event.output.rstrip().splitlines() or [""]
        shown = lines[:_RESULT_LINES]
        self.console.print(f"  {mark} {escape(shown[0][:200])} [dim]{event.duration_s:.2f}s[/]")
        for line in shown[1:]:
            self.console.print(f"    [dim]{escape(line[:200])}[/]")
        if len(lines) > _RESULT_LINES:
            self.console.print(f"    [dim]… {len(lines) - _RESULT_LINES} more lines[/]")

    def _print_end(self, event: TurnEnded) -> None:
        c = self.console
        styles = {"completed": "bold green", "clarify": "bold magenta", "paused": "bold yellow", "approval": "bold yellow",
                  "halted": "bold red", "error": "bold red"}
        c.print(f"[{styles[event.outcome]}]■ {event.outcome}[/]: {escape(event.reason)}")
        totals = self._totals
        if totals is not None:
            c.print(
                f"[dim]tokens: {totals.total_input_tokens:,} in / {totals.total_output_tokens:,} out · "
                f"{format_cost(totals.total_cost)} · {event.steps} steps[/]"
            )
        if self.session_id and event.outcome != "completed":
            hint = {
                "clarify": f'agentcli resume {self.session_id} --answer "…"',
                "paused": f"agentcli resume {self.session_id}",
                "approval": (f"agentcli resume {self.session_id} --approve [--scope session|always]  "
                             f"or  agentcli resume {self.session_id} --deny"),
                "halted": f'agentcli resume {self.session_id} "guidance…"',
                "error": f"agentcli resume {self.session_id}",
            }[event.outcome]
            c.print(f"[dim]continue with: {hint}[/]")


class JsonLinesPrinter:
    """One JSON object per event on stdout, for scripts and harnesses."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def __call__(self, event: Event) -> None:
        self.stream.write(event_to_json(event) + "\n")
        self.stream.flush()
