"""The live statechart: the layered drawing of both regions, the active states lit, the
transition just taken highlighted, visits counted on the states, a trail of the last transitions,
where the agent can go next, and a legend on ``?``.

The drawing comes from ``agentcli.chart_drawing`` (pure text with tagged spans), computed once
per graph and pane width; a transition only restyles spans and rewrites the count slots.
"""

from __future__ import annotations

import textwrap
import time
from collections import Counter, deque
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from agentcli.chart_drawing import Drawing, draw_chart, edge_label
from agentcli.chart_drawing.labels import Step, phase_label
from agentcli.events import StateChanged
from agentcli.tui.messages import SessionEventPosted

if TYPE_CHECKING:  # the session layer is imported after the first frame, not for a type
    from textual.timer import Timer

    from agentcli.session.chart import ChartGraph

TRAIL_LENGTH = 12
"""Transitions kept for the trail (the line shows as many of the latest as fit)."""

MIN_WIDTH = 40
"""Narrower than this the drawing scrolls sideways rather than squeezing further."""

FADE_S: tuple[float, float] = (2.0, 4.0)
"""Seconds after a transition when its edge dims from bright to lit, then settles among the
others: bright until the next one, it kept pointing at a step long done while the agent waited."""
GLOW_STYLES = ("", "$graph-active", "bold $graph-active")
"""The transition just taken, by glow: settled (drawn as any edge), fading, bright."""
FADE_TICK_S = 0.25
"""How often a fading edge checks its age; the timer pauses once it has settled."""

LEGEND = (
    ("[ thinking ]", "bold reverse $graph-active", "a state; lit: where the agent is now"),
    ("×3", "$graph-visited", "times the agent has entered it"),
    ("▼ label", "$foreground", "a transition to the next state: its event, or the guard that chose it"),
    ("┌▶  ◀┘", "$graph-edge", "other transitions: the loop closing on the left, skips on the right"),
    ("──▶", "bold $graph-active", "the transition just taken (its label ends the trail); it fades in seconds"),
    ("──▶", "$foreground", "where the agent can go from here; dim lines: elsewhere"),
    ("◀ ▶", "$foreground", "why a waiting state is entered / what takes the agent on"),
    ("╭─ plan ─╮", "$graph-active", "a compound phase, its border lit while the agent is in it"),
    ("→event→", "$foreground", "the trail: the last transitions, oldest cut first"),
)
"""The legend shown on ``?``: each mark, drawn as in the graph, and what it means."""

LEGEND_INDENT = 14
"""Columns for the marks in the legend; the meanings wrap under themselves."""


def state_name(node_id: str, names: dict[str, str]) -> str:
    return names.get(node_id, node_id)


class StateGraph(Widget, can_focus=True):
    """Draws the chart from its own definition (``Session.graph``), follows its transitions and
    lights the states the session view says are active."""

    DEFAULT_CSS = """
    StateGraph {
        width: 100%;
        min-width: 40;
        height: auto;
        color: $graph-edge;
        text-wrap: nowrap;
    }
    StateGraph:focus {
        background: $boost;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "toggle_legend", "Legend", id="agentcli.graph.legend",
                tooltip="Show or hide what the graph's marks mean"),
    ]

    configuration: reactive[tuple[str, ...]] = reactive((), layout=False)
    """Ids of the active states, outermost first."""
    last_step: reactive[Step | None] = reactive(None)
    """The transition taken last, highlighted with its label until the next one."""
    show_legend: reactive[bool] = reactive(False, layout=True)
    """Whether the legend is shown under the drawing (``?``)."""
    glow: reactive[int] = reactive(0, layout=False)
    """How bright ``last_step`` is drawn: 2 just taken, 1 fading, 0 settled (``GLOW_STYLES``)."""
    fade_s: tuple[float, float] | None = FADE_S
    """When the transition just taken dims and settles; None keeps it bright until the next one
    (snapshot tests freeze it, as they freeze clocks)."""

    def __init__(self, graph: ChartGraph | None = None, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.counts: Counter[tuple[str, str]] = Counter()
        """Times each (source, target) transition was taken."""
        self.visits: Counter[str] = Counter()
        """Times each state was entered."""
        self.trail: deque[Step] = deque(maxlen=TRAIL_LENGTH)
        """The last transitions, oldest first."""
        self.followers: list[Widget] = []
        """Widgets drawn from this one's data (the compact strip), refreshed with it."""
        self.names: dict[str, str] = {}
        self._parents: dict[str, str | None] = {}
        self._edges: set[tuple[str, str]] = set()
        self._compounds: set[str] = set()
        self._drawings: dict[int, Drawing] = {}
        self._width = MIN_WIDTH
        """The pane width the drawing was last sized for (layout asks first, render follows)."""
        self._stepped_at = 0.0
        """When ``last_step`` was taken (monotonic seconds), for its fade."""
        self._fade_timer: Timer | None = None
        self.graph: ChartGraph | None = None
        if graph is not None:
            self.set_graph(graph)

    def set_graph(self, graph: ChartGraph) -> None:
        """Draw another chart (a session with another workflow); resets what was followed."""
        self.graph = graph
        self.names = {node.id: node.name for node in graph.nodes}
        self._parents = {node.id: node.parent for node in graph.nodes}
        self._edges = {(edge.source, edge.target) for edge in graph.edges}
        self._compounds = {node.id for node in graph.nodes if node.kind != "atomic"}
        self._drawings.clear()
        self.counts.clear()
        self.visits.clear()
        self.trail.clear()
        self.last_step = None
        self._changed(layout=True)

    def show(self, configuration: tuple[str, ...] | list[str]) -> None:
        """Light ``configuration``: every active state id (the session view's)."""
        if not self.visits and not self.trail:
            self.visits.update(state for state in configuration if state in self._parents)
        self.configuration = tuple(configuration)
        self._changed()
        if self.is_mounted:
            self.call_after_refresh(self.reveal_current)

    def reveal_current(self) -> None:
        """Scroll the pane (when the drawing is taller than it) so the lit control state shows.

        The offset depends only on where that state is drawn, never on where the pane was: the
        loop at the top stays put while the agent goes round it, and the same state always shows
        the pane the same way (least-distance scrolling would depend on the states visited before).
        """
        current = self.control_state
        container = self.parent
        if current is None or not isinstance(container, Widget) or not container.size.height:
            return
        slot = self.drawing(self._width).count_slots.get(current)
        if slot is not None:
            legend = len(self.legend(self.drawing(self._width).width)) + 1 if self.show_legend else 0
            below = slot[0] + legend + 3  # the state, and two lines after it for context
            container.scroll_to(y=max(0, below - container.size.height), animate=False, immediate=True)

    # -- following the chart -------------------------------------------------------------

    def record(self, event: StateChanged, *, fresh: bool = True) -> None:
        """Follow one transition: count it, add it to the trail, highlight it while it is fresh
        (``fresh`` False: one read from the log of a session reopened, taken long ago)."""
        key = self._edge_key(event.source, event.target)
        if key is not None:
            self.counts[key] += 1
        self.visits[event.target] += 1
        label = phase_label(event.event, event.cond) if event.source.startswith("phase_") \
            else edge_label(event.event, event.cond)
        step = Step(event.source, event.target, label)
        self.trail.append(step)
        self.last_step = step
        if fresh:
            self._stepped_at = time.monotonic()
            self.glow = 2
            self._fade()
        else:
            self.glow = 0
        self._changed()

    def _fade(self) -> None:
        """Dim the transition just taken as it ages: one timer, paused once the edge has settled,
        rather than timers started per transition (a resumed session replays thousands)."""
        if self.fade_s is None or not self.is_attached:
            return
        age = time.monotonic() - self._stepped_at
        glow = 2 if age < self.fade_s[0] else 1 if age < self.fade_s[1] else 0
        if glow != self.glow:
            self.glow = glow
            self._changed()
        if self._fade_timer is None:
            self._fade_timer = self.set_interval(FADE_TICK_S, self._fade, pause=glow == 0)
        elif glow == 0:
            self._fade_timer.pause()
        else:
            self._fade_timer.resume()

    def on_mount(self) -> None:
        self._fade()  # transitions followed before the pane was mounted
    def _edge_key(self, source: str, target: str) -> tuple[str, str] | None:
        """The drawn edge a transition took; a compound state's transition may name a child."""
        candidates = [source]
        while (parent := self._parents.get(candidates[-1])) is not None:
            candidates.append(parent)
        for candidate in candidates:
            if (candidate, target) in self._edges:
                return candidate, target
        return None

    def on_resize(self) -> None:
        # The side panes are laid out after the first frame: a reveal asked for before the pane
        # had a height did nothing, so the first real size reveals again.
        self.call_after_refresh(self.reveal_current)

    def on_session_event_posted(self, message: SessionEventPosted) -> None:
        if isinstance(message.event, StateChanged):
            self.record(message.event)

    def _changed(self, *, layout: bool = False) -> None:
        if self.is_mounted:
            self.refresh(layout=layout)
        for follower in self.followers:
            if follower.is_mounted:
                follower.refresh()

    def action_toggle_legend(self) -> None:
        self.show_legend = not self.show_legend
        if isinstance(self.parent, Widget):
            self.parent.scroll_home(animate=False, immediate=True)

    # -- what is active ------------------------------------------------------------------

    @property
    def control_state(self) -> str | None:
        """The active innermost state of the first region (the control loop)."""
        regions = [node for node, parent in self._parents.items() if parent is not None
                   and self._parents.get(parent) is None]
        if not regions:
            return None
        inside = [state for state in self.configuration if self._parents.get(state) == regions[0]]
        return inside[-1] if inside else None

    def next_states(self, state: str) -> list[str]:
        """Where the agent can go from ``state`` (its own edges and its region's), in chart order."""
        chain = [state]
        while (parent := self._parents.get(chain[-1])) is not None:
            chain.append(parent)
        graph = self.graph
        if graph is None:
            return []
        # The state's own edges first, then those its region has for every state (errors).
        return list(dict.fromkeys(edge.target for source in chain for edge in graph.edges
                                  if edge.source == source and edge.target != state))

    # -- drawing -------------------------------------------------------------------------

    def drawing(self, width: int) -> Drawing:
        """The drawing for a pane ``width`` columns wide (cached per width)."""
        width = max(MIN_WIDTH, width)
        if width not in self._drawings:
            self._drawings[width] = draw_chart(self.graph, width) if self.graph is not None else Drawing()
        return self._drawings[width]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # The widget fills the pane's width (less its scrollbar): the drawing is made for it.
        self._width = max(MIN_WIDTH, width)
        drawing = self.drawing(self._width)
        return len(drawing.lines) + (len(self.legend(drawing.width)) + 1 if self.show_legend else 0)

    def legend(self, width: int) -> list[Content]:
        """The legend's lines, each meaning wrapped under itself to ``width``."""
        lines: list[Content] = []
        for mark, style, text in LEGEND:
            for index, part in enumerate(textwrap.wrap(text, max(10, width - LEGEND_INDENT))):
                head = (mark, style) if index == 0 else ("", "")
                lines.append(Content.assemble(head, " " * (LEGEND_INDENT - len(head[0])), (part, "$text-muted")))
        return lines

    def render(self) -> Content:
        drawing = self.drawing(self._width)
        lines = drawing.with_counts(dict(self.visits))
        styles = self._styles()
        slots_on: dict[int, list[tuple[int, int]]] = {}
        for node, (row, column, slot) in drawing.count_slots.items():
            if self.visits.get(node):
                slots_on.setdefault(row, []).append((column, column + slot))
        rendered: list[Content] = []
        for row, (text, spans) in enumerate(zip(lines, drawing.spans, strict=True)):
            content = Content(text)
            for rank in range(4):
                for span in spans:
                    style = styles.get(span.tag)
                    if style is not None and style[0] == rank:
                        content = content.stylize(style[1], span.start, span.end)
            for start, end in slots_on.get(row, []):
                content = content.stylize("$graph-visited", start, end)
            rendered.append(content)
        if self.show_legend:  # on top, where the pane is when ``?`` is pressed
            rendered = [*self.legend(drawing.width), Content(""), *rendered]
        return Content("\n").join(rendered)

    def _styles(self) -> dict[str, tuple[int, str]]:
        """Style per tag, with a rank: later ranks are applied over earlier ones."""
        active = set(self.configuration)
        styles: dict[str, tuple[int, str]] = {"label": (0, "italic $text-muted"), "caption": (0, "italic $text-muted")}
        for node in self.names:
            if node in active:
                # A compound state's name is its box's title: lit with the border, not reversed.
                compound = node in self._compounds
                styles[f"node:{node}"] = (3, "bold $graph-active" if compound else "bold reverse $graph-active")
                styles[f"box:{node}"] = (1, "$graph-active")
            else:
                styles[f"node:{node}"] = (1, "$graph-visited" if self.visits.get(node) else "$foreground")
        current = self.control_state
        if current is not None:
            for target in self.next_states(current):
                styles[f"edge:{current}>{target}"] = (1, "$foreground")
        step = self.last_step
        if step is not None and self.glow:
            key = self._edge_key(step.source, step.target)
            if key is not None:
                styles[f"edge:{key[0]}>{key[1]}"] = (2, GLOW_STYLES[self.glow])
        return styles
