"""The live statechart: both regions, the active states lit, visit counts on the transitions."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from agentcli.events import StateChanged
from agentcli.tui.graph_layout import GraphLayout, layout_graph
from agentcli.tui.messages import SessionEventPosted

if TYPE_CHECKING:  # the session layer is imported after the first frame, not for a type
    from agentcli.session.chart import ChartGraph


class StateGraph(Widget):
    """Draws the chart from its own definition (``Session.graph``), counts its transitions and
    lights the states the session view says are active.

    The layout is computed once per graph; a transition only changes which spans are lit and
    the counts written into their slots, so an update is a repaint, never a relayout.
    """

    DEFAULT_CSS = """
    StateGraph {
        width: auto;
        height: auto;
        color: $graph-edge;
    }
    """

    configuration: reactive[tuple[str, ...]] = reactive((), layout=False)
    """Ids of the active states, outermost first."""
    last_edge: reactive[tuple[str, str] | None] = reactive(None)
    """The transition taken last, drawn brighter than the others."""

    def __init__(self, graph: ChartGraph | None = None, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.counts: Counter[tuple[str, str]] = Counter()
        """Times each (source, target) transition was taken."""
        self.visited: set[str] = set()
        self._layouts = {False: GraphLayout([], []), True: GraphLayout([], [])}
        self._parents: dict[str, str | None] = {}
        self._edges: set[tuple[str, str]] = set()
        if graph is not None:
            self.set_graph(graph)

    def set_graph(self, graph: ChartGraph) -> None:
        """Draw another chart (a session with another workflow); resets counts."""
        self.graph = graph
        self._parents = {node.id: node.parent for node in graph.nodes}
        self._edges = {(edge.source, edge.target) for edge in graph.edges}
        self._layouts = {False: layout_graph(graph), True: layout_graph(graph, short=True)}
        self.counts.clear()
        self.visited.clear()
        self.last_edge = None
        if self.is_mounted:
            self.refresh(layout=True)

    def show(self, configuration: tuple[str, ...] | list[str]) -> None:
        """Light ``configuration``: every active state id (the session view's)."""
        self.visited.update(configuration)
        self.configuration = tuple(configuration)
        self.refresh()

    # -- following the chart -------------------------------------------------------------

    def record(self, event: StateChanged) -> None:
        """Count a transition; which states are lit is the session view's (:meth:`show`)."""
        key = self._edge_key(event.source, event.target)
        if key is not None:
            self.counts[key] += 1
            self.last_edge = key
        self.visited.update(event.configuration)
        self.refresh()

    def _edge_key(self, source: str, target: str) -> tuple[str, str] | None:
        """The drawn edge a transition took; a compound state's transition may name a child."""
        candidates = [source]
        while (parent := self._parents.get(candidates[-1])) is not None:
            candidates.append(parent)
        for candidate in candidates:
            if (candidate, target) in self._edges:
                return candidate, target
        return None

    def on_session_event_posted(self, message: SessionEventPosted) -> None:
        if isinstance(message.event, StateChanged):
            self.record(message.event)

    # -- drawing -------------------------------------------------------------------------

    @property
    def layout_in_use(self) -> GraphLayout:
        """The full-name layout when it fits the pane, the short-name one otherwise."""
        full = self._layouts[False]
        width = self.parent.size.width if isinstance(self.parent, Widget) else 0
        return full if not width or full.width <= width else self._layouts[True]

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return self.layout_in_use.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.layout_in_use.lines)

    def render(self) -> Content:
        layout = self.layout_in_use
        active = set(self.configuration)
        lines = layout.with_counts(self.counts)
        rendered: list[Content] = []
        last = self.last_edge
        for text, spans in zip(lines, layout.spans, strict=True):
            for span in spans:
                lit = span.tag.startswith("node:") and span.tag[5:] in active
                if lit and text[span.start : span.start + 2] == "○ ":
                    text = text[: span.start] + "●" + text[span.start + 1 :]
            content = Content(text)
            for span in spans:
                kind, _, ref = span.tag.partition(":")
                style = self._style(kind, ref, active, last)
                if style:
                    content = content.stylize(style, span.start, span.end)
            rendered.append(content)
        return Content("\n").join(rendered)

    def _style(self, kind: str, ref: str, active: set[str], last: tuple[str, str] | None) -> str:
        if kind == "node":
            if ref in active:
                return "bold reverse $graph-active"
            return "$graph-visited" if ref in self.visited else "$text-muted"
        if kind == "box":
            return "$graph-active" if ref in active else ""
        if kind == "count":
            source, _, target = ref.partition(">")
            if (source, target) == last:
                return "bold $graph-active"
            return "bold $graph-visited"
        return ""
