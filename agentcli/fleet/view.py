"""A race as rows of words: what ``race show`` prints and the TUI's race screen lists.

Textual-free and rich-free, so both front ends show the same figures in the same words.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.describe import NO_PRICE
from agentcli.fleet.models import Attempt, Race
from agentcli.fleet.scoring import ranked

COLUMNS = ("#", "model", "state", "steps", "tokens", "cost", "checks", "change")
"""The table's columns; the first is the attempt's id, starred for the one to apply."""


@dataclass(frozen=True)
class AttemptRow:
    attempt_id: str
    rank: int
    """1 for the best; 0 while the race runs (no ranking yet)."""
    cells: tuple[str, ...]
    passed: bool
    note: str
    """Why it failed, or how its session ended when not completed; empty otherwise."""


def setup_words(attempt: Attempt) -> str:
    """Its model, and its workflow when the race gave one: attempts differ by either (``--workflow a,b``)."""
    model = attempt.model or "(configured)"
    return f"{model} · {attempt.workflow}" if attempt.workflow else model


def state_words(attempt: Attempt) -> str:
    """The attempt's state; while its session runs, the session's own state (``thinking``,
    ``executingTool``), which says it runs: "running: executingTool" pushed the change column
    off an 80-column race view."""
    report = attempt.report
    if attempt.state == "running" and attempt.control:
        return attempt.control.rsplit(".", 1)[-1]
    if attempt.state == "done" and report is not None:
        return report.outcome or "ended"
    return attempt.state


def checks_words(attempt: Attempt) -> str:
    report = attempt.report
    if report is None or report.outcome is None:
        return "—"  # not run: the session never ended a turn
    if not report.checks:
        return "none"
    passing = sum(1 for check in report.checks if check.passed)
    return f"{passing}/{len(report.checks)} " + ("pass" if passing == len(report.checks) else "fail")


def change_words(attempt: Attempt) -> str:
    if attempt.state != "done":
        return "—"
    change = attempt.change
    if change.files == 0:
        return "no change"
    return f"{change.files} file{'s' if change.files != 1 else ''} +{change.added} -{change.removed}"


def cost_words(cost: float | None, unknown: str = NO_PRICE) -> str:
    """Dollars; for none, ``unknown`` (what the front ends say for a model without a price, or ``—``
    where nothing was called)."""
    return unknown if cost is None else f"${cost:.4f}"


def rows(race: Race) -> list[AttemptRow]:
    """One row per attempt, best first once the race has ended (the attempts' order while it runs)."""
    ended = race.ended is not None
    order = ranked(race.attempts) if ended else race.attempts
    out: list[AttemptRow] = []
    for index, attempt in enumerate(order, start=1):
        report = attempt.report
        steps = report.steps if report is not None and report.steps else attempt.steps
        tokens = (report.input_tokens + report.output_tokens) if report is not None and report.session_id \
            else attempt.input_tokens + attempt.output_tokens
        cost = report.cost if report is not None and report.session_id else attempt.cost
        completed = report is not None and report.outcome == "completed"
        note = attempt.note or (report.reason if report is not None and not completed else "")
        star = "★" if ended and index == 1 and attempt.passed else " "
        out.append(AttemptRow(
            attempt_id=attempt.id,
            rank=index if ended else 0,
            cells=(f"{star}{attempt.id}", setup_words(attempt), state_words(attempt), str(steps),
                   f"{tokens:,}", cost_words(cost, "—"), checks_words(attempt), change_words(attempt)),
            passed=attempt.passed,
            note=" ".join(note.split())[:200],
        ))
    return out
