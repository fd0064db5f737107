"""The header line: workspace, model, workflow phase, control state, tokens and cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from agentcli.events import SessionStarted, StateChanged, UsageReported
from agentcli.tui.calls import format_cost, format_tokens
from agentcli.tui.messages import SessionEventPosted

RUNNING_STATES = frozenset({"thinking", "executingTool", "capturingSnapshot"})


def display_path(path: Path) -> str:
    """The workspace with the home folder shown as ``~``."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def display_model(model: str) -> str:
    """A replay model shows its file name, not its whole path."""
    if model.startswith("replay:"):
        return "replay:" + Path(model[len("replay:") :]).name
    return model


class StatusHeader(Static):
    """One line that says where the agent is and what it has cost."""

    DEFAULT_CSS = """
    StatusHeader {
        height: 1;
        background: $panel;
        color: $foreground;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    workspace: reactive[str] = reactive("")
    """The workspace folder as shown."""
    model: reactive[str] = reactive("")
    """The model string as shown."""
    session_id: reactive[str] = reactive("")
    state: reactive[str] = reactive("idle")
    """The control state."""
    phase: reactive[str] = reactive("")
    """The active workflow phase (innermost), by name."""
    input_tokens: reactive[int] = reactive(0)
    output_tokens: reactive[int] = reactive(0)
    cost: reactive[float | None] = reactive(0.0)
    """Total dollars; None when any call had no known price."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.phase_names: dict[str, str] = {}
        """Phase state id -> phase name, from the chart's graph."""
        self.control_states: frozenset[str] = frozenset()
        """The control region's states, from the chart's graph."""

    def set_graph(self, graph: Any) -> None:
        """Learn the chart's control states and phases (from ``Session.graph``)."""
        nodes = list(graph.nodes)
        self.control_states = frozenset(n.id for n in nodes if n.parent == "control")
        self.phase_names = {n.id: n.name for n in nodes if n.id.startswith("phase_")}

    def show_configuration(self, configuration: list[str]) -> None:
        self.state = next((s for s in configuration if s in self.control_states), self.state)
        phases = [s for s in configuration if s in self.phase_names]
        if phases:
            self.phase = self.phase_names[phases[-1]]

    def on_session_event_posted(self, message: SessionEventPosted) -> None:
        event = message.event
        if isinstance(event, StateChanged):
            self.show_configuration(event.configuration)
        elif isinstance(event, UsageReported):
            self.input_tokens = event.total_input_tokens
            self.output_tokens = event.total_output_tokens
            self.cost = event.total_cost
        elif isinstance(event, SessionStarted):
            self.session_id = event.session_id

    def render(self) -> Content:
        state_style = "bold $graph-active" if self.state in RUNNING_STATES else (
            "bold $warning" if self.state in ("paused", "halted", "awaitingClarification") else "bold $success")
        mark = "●" if self.state in RUNNING_STATES else "○"
        parts = [
            Content.styled(f"{mark} {self.state}", state_style),
            Content.assemble(("phase ", "$text-muted"), (self.phase or "-", "bold")),
            Content(f"{format_tokens(self.input_tokens)} in / {format_tokens(self.output_tokens)} out"),
            Content(format_cost(self.cost)),
            Content.styled(self.model, "$primary"),
            Content(self.workspace),
            Content.styled(self.session_id, "$text-muted"),
        ]
        # Model and session are known only once the session is attached, just after the first frame.
        return Content.styled("  ·  ", "$text-muted").join(part for part in parts if part.plain)
