"""Words for the chart's transitions: the label of an edge, the trail of recent transitions.

An invoked state's completion event (``done.invoke.thinking``) says only that the work returned;
what tells its edges apart is the guard that picked each (``has_tool_calls``, ``modifies_files``),
so that is the label. An eventless edge is a choice the chart made on its own: its guard too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

DONE_PREFIX = "done.invoke."


def edge_label(event: str, cond: str | None = None) -> str:
    """What to write on an edge: the event, or for a completion or eventless edge its guard.

    >>> edge_label("done.invoke.thinking", "has_tool_calls")
    'has_tool_calls'
    >>> edge_label("pause")
    'pause'
    """
    if event.startswith(DONE_PREFIX) or event == "done" or not event:
        if cond:
            return cond.split(" and ")[0]
        return "done" if event else "else"
    if event == "error.execution":
        return "error"
    return event


_SIGNAL = re.compile(r"(tool|checks)_signal == '([^']*)'")
"""A phase transition's guard: the review of a finished call raised this signal."""


def phase_label(event: str, cond: str | None = None) -> str:
    """What to write on a phase transition: the tool that moves it, or the checks' verdict.

    >>> phase_label("", "tool_signal == 'create_plan'")
    'create_plan'
    """
    signal = _SIGNAL.fullmatch(cond or "")
    if signal is not None:
        kind, value = signal.groups()
        return value if kind == "tool" else f"checks {'pass' if value == 'passed' else 'fail'}"
    if event == "user_message":
        return "new task"
    return edge_label(event, cond)


def is_running(node_id: str, edges: Iterable[tuple[str, str]]) -> bool:
    """A state that does work of its own: it has an edge taken when that work returns, or one
    the chart takes on its own. Every other state waits for the user."""
    return any(source == node_id and (not event or event.startswith(DONE_PREFIX)) for source, event in edges)


@dataclass(frozen=True)
class Step:
    """One transition of the trail."""

    source: str
    target: str
    label: str


def format_trail(steps: Sequence[Step], width: int, names: dict[str, str] | None = None) -> str:
    """The last transitions as one line, oldest cut first: ``thinking →has_tool_calls→ executingTool``.

    Args:
        steps: The transitions, oldest first.
        width: Columns available; older steps are dropped (and ``…`` shown) to fit.
        names: Display names by state id (phases are shown by their name).
    """
    names = names or {}
    if not steps:
        return ""
    states = [names.get(steps[0].source, steps[0].source)] + [names.get(s.target, s.target) for s in steps]
    for first in range(len(steps)):
        text = ("… " if first else "") + states[first] + "".join(
            f" →{steps[j].label}→ {states[j + 1]}" for j in range(first, len(steps)))
        if len(text) <= width:
            return text
    return ("… " + states[-1])[:width]
