"""The whole chart: each region of the parallel root in a box of its own, one under the other."""

from __future__ import annotations

from agentcli.chart_drawing.canvas import Canvas, Drawing, GraphLike
from agentcli.chart_drawing.flow import draw_flow
from agentcli.chart_drawing.phases import draw_phases

PHASE_REGION = "phase"
"""The chart's workflow region (drawn as nested boxes); every other region is drawn as a flow."""


def regions(graph: GraphLike) -> list[str]:
    """The chart's regions: the children of a parallel root, or the root itself."""
    roots = [node for node in graph.nodes if node.parent is None]
    if not roots:
        return []
    root = roots[0]
    if root.kind == "parallel":
        return [node.id for node in graph.nodes if node.parent == root.id]
    return [root.id]


def draw_chart(graph: GraphLike, width: int) -> Drawing:
    """Draw every region of ``graph`` in boxes ``width`` columns wide (wider only if a state's
    name alone needs it).

    Returns:
        The drawing: lines of equal width, spans tagged ``node:<id>``, ``box:<id>``,
        ``edge:<source>><target>``, ``label``, ``caption``, and a count slot per state.
    """
    names = {node.id: node.name for node in graph.nodes}
    drawings: list[Drawing] = []
    for region in regions(graph):
        if region == PHASE_REGION:
            drawings.append(draw_phases(graph.nodes, region, graph.edges, width))
        else:
            inner = draw_flow(graph.nodes, region, graph.edges, width - 4)
            canvas = Canvas()
            canvas.paste(inner, 0, 0)
            drawings.append(canvas.boxed(names[region], f"box:{region}", min_width=width))
    widest = max((drawing.width for drawing in drawings), default=0)
    result = Drawing()
    for drawing in drawings:
        result = result.below(_widen(drawing, widest))
    return result


def _widen(drawing: Drawing, width: int) -> Drawing:
    """Stretch a box's right border out to ``width`` so the regions line up."""
    extra = width - drawing.width
    if extra <= 0:
        return drawing
    last = len(drawing.lines) - 1
    lines = []
    spans = []
    for index, line in enumerate(drawing.lines):
        fill = "─" if index in (0, last) else " "
        lines.append(line[:-1] + fill * extra + line[-1])
        spans.append([type(s)(s.start, s.end + extra, s.tag) if s.end == len(line) and s.tag.startswith("box:")
                      else type(s)(s.start + extra, s.end + extra, s.tag) if s.start == len(line) - 1 else s
                      for s in drawing.spans[index]])
    return Drawing(lines, spans, dict(drawing.count_slots))
