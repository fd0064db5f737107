"""Where a session is and what the user may do now: one read-only view for every front end.

The TUI, the headless printer and ``agentcli resume`` read this view instead of keeping state
sets of their own. It is derived from the chart: the commands allowed now are the user events
the active states have transitions for, so a state added to the chart needs no front-end change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from statemachine import StateChart
from statemachine.model import Model

from agentcli.events import ClarificationRequested, PermissionRequested
from agentcli.session.chart import CONTROL_STATES, WAITING_STATES, control_events

Command = Literal["message", "answer", "approve", "deny", "pause", "resume", "restore", "compact"]
"""What a user can ask of a session: the Session method each names is the one to call."""

COMMAND_EVENTS: dict[str, Command] = {
    "user_message": "message",
    "answer": "answer",
    "approve": "approve",
    "deny": "deny",
    "pause": "pause",
    "resume": "resume",
    "compact": "compact",
}
"""The chart events a user's command sends, and the command's name."""

Waiting = Literal["task", "answer", "approval", "guidance"]
"""What the agent waits for from the user: a new task, an answer, a verdict, or guidance to go on."""


@dataclass(frozen=True)
class SessionView:
    """A snapshot of where the agent is; take a new one after each ``StateChanged``."""

    control: str
    """The control region's state (``idle``, ``thinking``, ``awaitingPermission``…)."""
    phase: str | None
    """The innermost active workflow phase, by name (``plan.analyze``), if the chart has one."""
    configuration: tuple[str, ...]
    """Every active state id, outermost first."""
    commands: frozenset[Command]
    """The commands the session takes now."""
    question: ClarificationRequested | None = None
    """The question waiting for an answer, when there is one."""
    permission: PermissionRequested | None = None
    """The tool call waiting for approval, when there is one."""

    @property
    def waiting_for(self) -> Waiting | None:
        """What the agent waits for, or None while it works."""
        if "answer" in self.commands:
            return "answer"
        if "approve" in self.commands:
            return "approval"
        if "resume" in self.commands:
            return "guidance"
        if "message" in self.commands:
            return "task"
        return None

    @property
    def running(self) -> bool:
        """The agent is working: streaming, running a tool or capturing the workspace."""
        return self.waiting_for is None

    def allows(self, command: Command) -> bool:
        return command in self.commands


def view_of(
    chart: type[StateChart[Model]],
    configuration: Sequence[str],
    *,
    question: ClarificationRequested | None = None,
    permission: PermissionRequested | None = None,
) -> SessionView:
    """The view of a chart in ``configuration`` (active state ids, outermost first)."""
    states = chart.states_map
    control = next((sid for sid in configuration if sid in CONTROL_STATES), "idle")
    phases = [sid for sid in configuration if sid.startswith("phase_") and sid in states]
    commands: set[Command] = {
        COMMAND_EVENTS[event] for event in control_events(chart, control) if event in COMMAND_EVENTS
    }
    if control in WAITING_STATES:
        commands.add("restore")
    return SessionView(
        control=control,
        phase=states[phases[-1]].name if phases else None,
        configuration=tuple(configuration),
        commands=frozenset(commands),
        question=question if "answer" in commands else None,
        permission=permission if "approve" in commands else None,
    )
