"""The headless front end: a Session's events printed with Rich, or as JSON lines.

It reads events only, like any front end; the exit code comes from how the turn ended. The words
come from :mod:`agentcli.describe`, shared with the TUI; this module only styles them by role.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from agentcli.describe import NO_PRICE, NO_PRICE_WHY, Description, Role, describe, format_changes, format_cost
from agentcli.events import (
    ClarificationAnswered,
    Event,
    Outcome,
    ReasoningDelta,
    SessionStarted,
    TextDelta,
    TurnEnded,
    UsageReported,
    UserMessage,
    event_to_json,
)

__all__ = ["EXIT_CODES", "EXIT_USAGE", "JsonLinesPrinter", "TextPrinter", "cache_ratio", "format_age",
           "format_changes", "format_cost", "printable"]

EXIT_CODES: dict[Outcome, int] = {"completed": 0, "error": 1, "clarify": 3, "halted": 4, "paused": 5, "approval": 5}
"""A call waiting for approval exits like a pause (5): the run stopped and ``resume`` continues it."""
EXIT_USAGE = 2

LABEL_STYLES: dict[Role, str] = {
    "session": "dim",
    "tool-call": "bold cyan",
    "tool-ok": "green",
    "tool-error": "red",
    "tool-interrupted": "yellow",
    "subagent": "dim",
    "warning": "yellow",
    "error": "bold red",
    "stuck": "bold yellow",
    "progress": "dim",
    "question": "bold magenta",
    "permission": "bold yellow",
    "decision": "dim",
    "snapshot": "dim",
    "restore": "bold",
    "context": "dim",
    "thought": "italic dim",
    "plan": "bold",
    "turn-completed": "bold green",
    "turn-clarify": "bold magenta",
    "turn-approval": "bold yellow",
    "turn-paused": "bold yellow",
    "turn-halted": "bold red",
    "turn-error": "bold red",
}
"""The Rich style of each role's label (the describer says what; this says how it looks here)."""
WHOLE_LINE: frozenset[Role] = frozenset({"session", "subagent", "warning", "progress", "question", "decision",
                                         "snapshot", "thought", "context"})
"""Roles whose whole headline takes the label's style, not just the label."""
_INDENTS: dict[str, tuple[str, str]] = {"tool-ok": ("  ", "    "), "tool-error": ("  ", "    "),
                                        "tool-interrupted": ("  ", "    "), "subagent": ("  ", "    ")}
"""(headline, lines under it) indents: a result sits under its call."""


_CONTROLS: dict[int, str | None] = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)]
                                    if code not in (9, 10)}
_CONTROLS[13] = None
"""Control characters shown as their escapes (``\\x1b``): the model's words, a command's output and
a file's name may hold terminal escape sequences, which would clear the screen, retitle the
window, write the clipboard (OSC 52) or disguise a link when printed raw. Tabs and newlines stay;
a carriage return is dropped, as Rich drops it (a progress bar's redraws run together)."""


def printable(text: str) -> str:
    """``text`` safe to print as Rich markup: control characters escaped, then markup escaped."""
    return escape(text.translate(_CONTROLS))


def format_age(when: datetime) -> str:
    seconds = max(0.0, (datetime.now(UTC) - when).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit} ago"
    return f"{seconds:.0f}s ago"


def cache_ratio(read: int, total: int) -> str:
    """The share of input tokens read from the prompt cache, as a percentage."""
    return f"{100 * read / total:.0f}%" if total else "0%"


def rich_lines(description: Description) -> list[str]:
    """A description as Rich markup lines, styled by its role."""
    style = LABEL_STYLES[description.role]
    head, under = _INDENTS.get(description.role, ("", "  "))
    if description.role in WHOLE_LINE:
        words = printable(" ".join(p for p in (description.label, description.text) if p))
        line = f"[{style}]{words}[/]"
    else:
        text = f" {printable(description.text)}" if description.text else ""
        line = f"[{style}]{printable(description.label)}[/]{text}"
    if description.detail:
        line += f" [dim]{printable(description.detail)}[/]"
    dim = description.role.startswith("tool-")
    return [head + line] + [f"{under}[dim]{printable(more)}[/]" if dim else f"{under}{printable(more)}"
                            for more in description.more]


class _ReaderGoneConsole(Console):
    """A console whose reader may go away (``agentcli run … | head``): the rest is not printed,
    and the run goes on to its end and its exit code, as with ``-o jsonl``. Rich's own answer,
    ``SystemExit(1)`` from inside the printer, stopped the agent mid-turn without a word."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self.file.fileno())
        os.close(devnull)


class TextPrinter:
    """Prints what the agent says and does, for a person watching a terminal."""

    def __init__(self, console: Console | None = None, *, echo_user: bool = False) -> None:
        self.console = console or _ReaderGoneConsole(highlight=False)
        self.echo_user = echo_user
        """Print the user's own words too: a transcript read back (``sessions show``), where the
        live run leaves them out (the user has just typed them)."""
        self._mid_text = False
        self._mid_reasoning = False
        self._totals: UsageReported | None = None
        self._hint = ""
        self.session_id = ""
        self._price_explained = False
        """``no price`` was explained already (a transcript of many turns says it once)."""

    def _end_text(self) -> None:
        if self._mid_text or self._mid_reasoning:
            self.console.print()
            self._mid_text = self._mid_reasoning = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, ReasoningDelta):
            # The model's reasoning, dimmed, before its reply (a thinking model).
            if not self._mid_reasoning:
                self._end_text()
                self.console.print("[dim italic]thinking: [/]", end="")
                self._mid_reasoning = True
            self.console.print(f"[dim italic]{printable(event.text)}[/]", end="", soft_wrap=True)
            return
        if isinstance(event, TextDelta):
            if self._mid_reasoning:
                self._end_text()
            self.console.print(printable(event.text), end="", soft_wrap=True)
            self._mid_text = True
            return
        if isinstance(event, UsageReported):
            self._totals = event
            return
        if isinstance(event, SessionStarted):
            self.session_id = event.session_id
        if self.echo_user and isinstance(event, (UserMessage, ClarificationAnswered)):
            self._end_text()
            self._print_user(event)
            return
        description = describe(event)
        if description is None:
            return
        self._end_text()
        for line in rich_lines(description):
            self.console.print(line)
        if isinstance(event, TurnEnded):
            self._print_end(event)

    def _print_user(self, event: UserMessage | ClarificationAnswered) -> None:
        """``› `` and the user's words (a task, guidance, an answer); attachments by their names."""
        text = event.text if isinstance(event, UserMessage) else event.answer
        lines = text.strip().split("\n") or [""]
        self.console.print(f"[bold]› {printable(lines[0])}[/]")
        for more in lines[1:]:
            self.console.print(f"  {printable(more)}")
        if isinstance(event, UserMessage) and event.files:
            self.console.print(f"  [dim]attached: {printable(', '.join(event.files))}[/]")

    def _print_end(self, event: TurnEnded) -> None:
        """After the turn's end: what it cost, and how to go on from the command line."""
        c = self.console
        totals = self._totals
        if totals is not None:
            cached = (f" ({cache_ratio(totals.total_cache_read_tokens, totals.total_input_tokens)} from cache)"
                      if totals.total_cache_read_tokens else "")
            estimated = " (estimated)" if totals.estimated else ""
            steps = f"{event.steps} step{'' if event.steps == 1 else 's'}"
            c.print(
                f"[dim]tokens: {totals.total_input_tokens:,} in{cached} / {totals.total_output_tokens:,} out"
                f"{estimated} · {format_cost(totals.total_cost)} · {steps}[/]"
            )
            if totals.total_cost is None and not self._price_explained:
                self._price_explained = True
                c.print(f"[dim]{NO_PRICE}: {NO_PRICE_WHY}[/]")  # what the TUI's header says on hover
        if self.session_id and event.outcome != "completed":
            hint = {
                "clarify": f'agentcli resume {self.session_id} --answer "…"',
                "paused": f"agentcli resume {self.session_id}",
                "approval": (f"agentcli resume {self.session_id} --approve [--scope session|always]  "
                             f"or  agentcli resume {self.session_id} --deny"),
                "halted": f'agentcli resume {self.session_id} "guidance…"',
                "error": f"agentcli resume {self.session_id}",
            }[event.outcome]
            if self.echo_user:
                self._hint = hint  # a transcript: only its last turn's hint still applies (finish)
            else:
                c.print(f"[dim]continue with: {printable(hint)}[/]")
        elif self.echo_user:
            self._hint = ""

    def finish(self) -> None:
        """The end of a transcript read back: how to go on from where the session is now."""
        self._end_text()
        if self._hint:
            self.console.print(f"[dim]continue with: {printable(self._hint)}[/]")


class JsonLinesPrinter:
    """One JSON object per event on stdout, for scripts and harnesses."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def __call__(self, event: Event) -> None:
        self.stream.write(event_to_json(event) + "\n")
        self.stream.flush()
