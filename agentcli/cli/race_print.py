"""What ``agentcli race`` prints: a line per attempt's state change, the comparison table, and why
an attempt has nothing to show (kept apart from the commands in agentcli/cli/race.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from agentcli.fleet.models import Attempt, Race


def no_result(attempt: Attempt, wanted: str) -> str:
    """Why an attempt has no diff or result: still running (it will have one), or never written."""
    if attempt.state in ("pending", "starting", "running", "checking"):
        return (f"attempt {attempt.id} is still {attempt.state}; it has {wanted} once it ends "
                "(`agentcli race show` follows it)")
    note = f": {attempt.note}" if attempt.note else ""
    return f"attempt {attempt.id} has no {wanted.removeprefix('a ')}; it never started ({attempt.state}{note})"


def parenthesized(setup: str) -> str:
    """``(openai/x)``, and ``(configured)`` once, not ``((configured))``."""
    return setup if setup.startswith("(") and setup.endswith(")") else f"({setup})"


_LAST_STATE: dict[tuple[str, str], str] = {}


def print_change(race: Race, attempt: Attempt) -> None:
    """One line per state change (not per token or step): enough to follow a race in a log."""
    from agentcli.fleet.view import change_words, checks_words, setup_words

    if _LAST_STATE.get((race.id, attempt.id)) == attempt.state:
        return
    _LAST_STATE[(race.id, attempt.id)] = attempt.state
    line = f"  attempt {attempt.id} {parenthesized(setup_words(attempt))}: {attempt.state}"
    if attempt.state == "done" and attempt.report is not None:
        line += (f": {attempt.report.outcome}, checks {checks_words(attempt)}, {change_words(attempt)}, "
                 f"{attempt.report.steps} steps")
    elif attempt.note:
        line += f": {attempt.note.splitlines()[-1] if attempt.note.strip() else ''}"
    typer.echo(line)


def print_json_change(race: Race, attempt: Attempt) -> None:
    import json

    if _LAST_STATE.get((race.id, attempt.id)) == attempt.state:
        return
    _LAST_STATE[(race.id, attempt.id)] = attempt.state
    typer.echo(json.dumps({"race": race.id, "attempt": attempt.model_dump(mode="json")}))


def print_table(race: Race) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from agentcli.fleet.view import COLUMNS, rows

    console = Console()
    console.print(f"race {race.id}: {' '.join(race.task.split())[:200]}", markup=False, highlight=False)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), collapse_padding=True, show_edge=False)
    for column in COLUMNS:
        # Only the model gives way on a narrow terminal; the figures stay whole.
        table.add_column(column, no_wrap=column != "model", overflow="fold",
                         justify="right" if column in ("steps", "tokens", "cost") else "left")
    listed = rows(race)
    for row in listed:
        table.add_row(*row.cells, style="green" if row.passed else None)
    console.print(table)
    for row in listed:
        if row.note:
            console.print(f"  attempt {row.attempt_id}: {row.note}", markup=False, highlight=False)
    if race.ended is not None:
        from agentcli.fleet.scoring import best

        top = best(race.attempts)
        if top is None:
            typer.echo("no attempt passed; look at one with: agentcli race diff ATTEMPT")
        elif top.change.files == 0:
            # Its checks pass on the workspace as it was: there is nothing to apply.
            typer.echo(f"attempt {top.id} passed without changing anything; nothing to apply")
        else:
            typer.echo(f"apply the best with: agentcli race apply {top.id}")
