"""The state graph in a line or two, drawn from the :class:`StateGraph`'s data (which follows the
session whether its pane is shown or not), so they never disagree.

- :class:`GraphTrail`, under the drawing in the graph pane: the last transitions, and where the
  agent can go from where it is.
- :class:`GraphStrip`, over the prompt on terminals too narrow for the side panes (80×24): the
  trail ending in the state the agent is in now, lit.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from agentcli.chart_drawing import format_trail
from agentcli.tui.widgets._state_graph import StateGraph, state_name

HINT = "  ^g graph"


class GraphStrip(Widget):
    """One line: ``state  … thinking →has_tool_calls→ executingTool``, the current state lit."""

    DEFAULT_CSS = """
    GraphStrip {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    def __init__(self, graph: StateGraph, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.graph = graph
        graph.followers.append(self)

    def render(self) -> Content:
        graph = self.graph
        current = graph.control_state
        if current is None:
            return Content("")
        now = state_name(current, graph.names)
        room = self.size.width - len("state ")
        hint = HINT if room - len(HINT) >= 40 else ""
        trail = format_trail(list(graph.trail), room - len(hint), graph.names)
        if trail.endswith(now):  # the trail ends where the agent is: lit there
            return Content.assemble(("state ", "$text-muted"), (trail[: -len(now)], "$foreground"),
                                    (now, "bold reverse $graph-active"), (hint, "$text-muted"))
        # Before any transition (a session just opened or resumed): the state alone.
        return Content.assemble(("state ", "$text-muted"), (now, "bold reverse $graph-active"),
                                (hint, "$text-muted"))


class GraphTrail(Widget):
    """Under the drawing: ``last: idle →user_message→ thinking`` and ``next: …``, each wrapping
    onto a second line in a narrow pane. Always four lines high: a trail that grows would resize
    the drawing's pane on every transition."""

    DEFAULT_CSS = """
    GraphTrail {
        height: 4;
        padding: 0 1;
        color: $text-muted;
    }
    """

    def __init__(self, graph: StateGraph, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.graph = graph
        graph.followers.append(self)

    def render(self) -> Content:
        width = self.size.width
        trail, next_line = self.trail_line(width), self.next_line(width)
        # Each takes two lines, wrapped or not, so "next:" stays where the eye expects it.
        return Content("\n").join([*_two_lines(trail, width), *_two_lines(next_line, width)])

    def trail_line(self, width: int) -> Content:
        """The last transitions, oldest cut first, the newest state lit."""
        graph = self.graph
        if not graph.trail:
            return Content.assemble(("last: ", "$text-muted"), ("no transition yet", "italic $text-muted"))
        # Two lines' worth: the line wraps, so more of the way here shows in a narrow pane.
        text = format_trail(list(graph.trail), 2 * width - 12, graph.names)
        content = Content.assemble(("last: ", "$text-muted"), (text, "$foreground"))
        newest = state_name(graph.trail[-1].target, graph.names)
        if text.endswith(newest):
            content = content.stylize("bold $graph-active", len(content) - len(newest), len(content))
        return content

    def next_line(self, width: int) -> Content:
        """Where the agent can go from the state it is in."""
        graph = self.graph
        current = graph.control_state
        if current is None:
            return Content("")
        targets = [state_name(target, graph.names) for target in graph.next_states(current)]
        text = ", ".join(targets) or "nowhere (a final state)"
        if len(text) > 2 * width - 12:  # two lines' worth, like the trail
            text = text[: max(0, 2 * width - 13)] + "…"
        return Content.assemble(("next: ", "$text-muted"), (text, "$foreground"))


def _two_lines(content: Content, width: int) -> list[Content]:
    """``content`` wrapped to ``width`` and cut or padded to exactly two lines."""
    lines = list(content.wrap(max(1, width)))[:2] if width else [content]
    return lines + [Content("")] * (2 - len(lines))
