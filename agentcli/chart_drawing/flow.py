"""The control region as a layered flow: the loop as a column of states joined by arrows, the
states that wait for the user beside it.

The layout is Sugiyama's, cut down to what a tall narrow pane can show: cycles are broken by a
depth-first walk from the initial state (children in definition order, which the chart keeps in
reading order), states are layered by longest path over the remaining forward edges, and laid out
one per row, layer by layer. An edge between neighbouring rows is an arrow with its label; any
other edge between running states goes on a lane to the right (one lane per target, lanes whose
rows do not overlap share a column, the shortest nearest the states), drawn without a label but
ending in its own arrowhead. Edges into and out of the waiting states are written as their labels
beside each of them (``◀ pause, needs_approval``, ``▶ resume``): drawn as lines, the "pause from
anywhere" and "resume to the start of a turn" edges would cover the picture.

grandalf's general Sugiyama layout was tried on the same region first: with its 53 distinct edges
it needed 359×48 cells and crossed almost every one. This keeps the picture within a side pane.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentcli.chart_drawing.canvas import COUNT_WIDTH, Canvas, Drawing, EdgeLike, NodeLike, join_fitting
from agentcli.chart_drawing.labels import edge_label, is_running


@dataclass(frozen=True)
class _Edge:
    source: str
    target: str
    label: str


def _labels(edges: Sequence[_Edge]) -> list[str]:
    """Distinct labels in first-seen order."""
    return list(dict.fromkeys(edge.label for edge in edges))


def order_flow(states: Sequence[str], initial: str | None, edges: Sequence[_Edge]) -> list[str]:
    """The running states' rows: depth-first cycle breaking, then longest-path layers."""
    index = {state: position for position, state in enumerate(states)}
    successors: dict[str, list[str]] = {state: [] for state in states}
    for edge in edges:
        if edge.source in index and edge.target in index and edge.source != edge.target:
            successors[edge.source].append(edge.target)
    forward: dict[str, set[str]] = {state: set() for state in states}
    seen: set[str] = set()
    on_path: set[str] = set()

    def visit(state: str) -> None:
        seen.add(state)
        on_path.add(state)
        for target in sorted(set(successors[state]), key=index.__getitem__):
            if target in on_path:
                continue  # a back edge: the loop closing, drawn upwards
            forward[state].add(target)
            if target not in seen:
                visit(target)
        on_path.discard(state)

    for root in ([initial] if initial in index else []) + list(states):
        if root not in seen:
            visit(root)
    layer: dict[str, int] = {}

    def depth(state: str) -> int:
        if state not in layer:
            sources = [source for source in states if state in forward[source]]
            layer[state] = 0
            layer[state] = 1 + max((depth(source) for source in sources), default=-1)
        return layer[state]

    return sorted(states, key=lambda state: (depth(state), index[state]))


def _node_text(name: str) -> str:
    return f"[ {name} ]"


def draw_flow(nodes: Sequence[NodeLike], region: str, all_edges: Sequence[EdgeLike], width: int) -> Drawing:
    """Draw a region of atomic states as a flow; the waiting states beside it when ``width``
    allows, under it otherwise."""
    states = [node.id for node in nodes if node.parent == region]
    names = {node.id: node.name for node in nodes}
    initial = next((node.id for node in nodes if node.parent == region and node.initial), None)
    inside = set(states)
    kept = [e for e in all_edges if e.target in inside and (e.source in inside or e.source == region)]
    edges = [_Edge(e.source, e.target, edge_label(e.event, e.cond)) for e in kept]
    # Into a waiting state, the guard says why (``needs_approval``) where the event would only
    # say what the agent was doing (``user_message``, ``done``).
    reasons = [_Edge(e.source, e.target, (e.cond or "").split(" and ")[0] or edge_label(e.event)) for e in kept]
    facts = [(e.source, e.event) for e in all_edges]
    flow_set = {state for state in states if state == initial or is_running(state, facts)}
    flow = order_flow([s for s in states if s in flow_set], initial, edges)
    side = [state for state in states if state not in flow_set]
    row_of = {state: 2 * position for position, state in enumerate(flow)}

    # Edges between neighbouring rows are arrows; the loop closing (upwards) goes on lanes to the
    # left, as in the seed's diagram, and forward skips on lanes to the right.
    up_edges: list[_Edge] = []
    down_edges: list[_Edge] = []
    for edge in edges:
        if edge.source not in row_of or edge.target not in row_of or edge.source == edge.target:
            continue
        gap = row_of[edge.target] - row_of[edge.source]
        if gap < -2:
            up_edges.append(edge)
        elif gap > 2:
            down_edges.append(edge)
    left, right = _assign_lanes(up_edges, row_of), _assign_lanes(down_edges, row_of)
    left_columns = 1 + max((lane.column for lane in left), default=-1)
    ox = 2 * left_columns + 1 if left_columns else 0

    canvas = Canvas()
    node_width = max((len(_node_text(names[s])) for s in flow), default=0)
    flow_width = ox + node_width + COUNT_WIDTH
    for state in flow:
        text = _node_text(names[state])
        canvas.put(row_of[state], ox, text, f"node:{state}")
        canvas.count_slots[state] = (row_of[state], ox + len(text), COUNT_WIDTH)
    lane_x0 = flow_width + 2
    label_room = lane_x0 - ox - 5
    for upper, lower in zip(flow, flow[1:], strict=False):
        down = [e for e in edges if (e.source, e.target) == (upper, lower)]
        up = [e for e in edges if (e.source, e.target) == (lower, upper)]
        if not down and not up:
            continue
        row = row_of[upper] + 1
        arrow = "▼" if not up else ("▲" if not down else "⇅")
        canvas.put(row, ox + 2, arrow, *(f"edge:{e.source}>{e.target}" for e in down + up))
        text = join_fitting(_labels(down + up), label_room, sep="/")
        canvas.put(row, ox + 4, text, "label", *(f"edge:{e.source}>{e.target}" for e in down + up))
    ends = {state: ox + len(_node_text(names[state])) + COUNT_WIDTH for state in flow}
    _draw_right_lanes(canvas, right, row_of, ends, lane_x0)
    _draw_left_lanes(canvas, left, row_of, ox)
    flow_drawing_width = max(canvas.width, flow_width)

    # The waiting states: beside the flow when there is room, else under it.
    side_note_width = max((len(_node_text(names[s])) + COUNT_WIDTH for s in side), default=0)
    beside = flow_drawing_width + 3 + max(side_note_width, 24) <= width
    if side:
        x = flow_drawing_width + 3 if beside else 0
        row = 0 if beside else canvas.height + 1
        canvas.put(row, x, "waiting for you", "caption")
        row += 1
        note_width = (width - x - 2) if beside else width - 4
        for state in side:
            text = _node_text(names[state])
            canvas.put(row, x, text, f"node:{state}")
            canvas.count_slots[state] = (row, x + len(text), COUNT_WIDTH)
            into = [e for e in reasons if e.target == state]
            out = [e for e in edges if e.source == state and e.target in inside]
            # Beside the flow each note has a line of its own; under it, the way in shares the
            # state's line so that the pane stays short.
            in_at = (row + 1, x + 2) if beside else (row, x + len(text) + COUNT_WIDTH + 1)
            if into:
                room = (x + note_width if beside else width) - in_at[1]
                note = "◀ " + join_fitting(_labels(into), room - 2)
                canvas.put(*in_at, note, f"in:{state}", *{f"edge:{e.source}>{e.target}" for e in into})
            out_row = row + 2 if beside else row + 1
            if out:
                note = "▶ " + join_fitting(_labels(out), note_width - 2)
                canvas.put(out_row, x + 2, note, f"out:{state}", *{f"edge:{e.source}>{e.target}" for e in out})
            row = out_row + 1
    return canvas.drawing()


@dataclass
class _Lane:
    target: str
    edges: list[_Edge]
    top: int
    bottom: int
    column: int = 0


def _assign_lanes(edges: Sequence[_Edge], row_of: dict[str, int]) -> list[_Lane]:
    """One lane per target; lanes whose rows do not overlap share a column (interval colouring),
    the shortest lanes nearest the states so that fewer lines cross."""
    by_target: dict[str, list[_Edge]] = {}
    for edge in edges:
        by_target.setdefault(edge.target, []).append(edge)
    lanes = []
    for target, group in by_target.items():
        rows = [row_of[target], *(row_of[e.source] for e in group)]
        lanes.append(_Lane(target, group, min(rows), max(rows)))
    lanes.sort(key=lambda lane: (lane.bottom - lane.top, lane.top))
    columns: list[list[_Lane]] = []
    for lane in lanes:
        for number, taken in enumerate(columns):
            if all(lane.bottom < other.top - 1 or lane.top > other.bottom + 1 for other in taken):
                lane.column = number
                taken.append(lane)
                break
        else:
            lane.column = len(columns)
            columns.append([lane])
    return lanes


_JUNCTIONS = {
    (True, True, False): "┤", (True, False, False): "┘", (False, True, False): "┐", (False, False, False): "─",
    (True, True, True): "┼", (True, False, True): "┴", (False, True, True): "┬", (False, False, True): "─",
}
"""A lane's glyph where a row joins it, by (lane goes up, goes down, the row's line goes on right)."""


def _tag_lane(canvas: Canvas, lane: _Lane, row_of: dict[str, int], x: int, row: int) -> None:
    for edge in lane.edges:
        low, high = sorted((row_of[edge.source], row_of[lane.target]))
        if low <= row <= high:
            canvas.tag(row, x, x + 1, f"edge:{edge.source}>{edge.target}")


def _line(canvas: Canvas, row: int, start: int, end: int) -> None:
    for column in range(start, end):
        if canvas.get(row, column) == " ":
            canvas.put(row, column, "─")


def _draw_right_lanes(canvas: Canvas, lanes: list[_Lane], row_of: dict[str, int], ends: dict[str, int],
                      x0: int) -> None:
    lane_x = {id(lane): x0 + 2 * lane.column for lane in lanes}
    # Horizontal lines first, lanes over them: a lane crossing a line stays whole.
    for lane in lanes:
        x = lane_x[id(lane)]
        for edge in lane.edges:
            _line(canvas, row_of[edge.source], ends[edge.source], x)
            canvas.tag(row_of[edge.source], ends[edge.source], x + 1, f"edge:{edge.source}>{edge.target}")
        row, start = row_of[lane.target], ends[lane.target]
        _line(canvas, row, start, x)
        canvas.put(row, start, "◀", "arrow")
        for edge in lane.edges:
            canvas.tag(row, start, x + 1, f"edge:{edge.source}>{edge.target}")
    for lane in lanes:
        x = lane_x[id(lane)]
        joined = {row_of[lane.target], *(row_of[e.source] for e in lane.edges)}
        for row in range(lane.top, lane.bottom + 1):
            if row in joined:
                glyph = _JUNCTIONS[(row > lane.top, row < lane.bottom, canvas.get(row, x + 1) == "─")]
            else:
                glyph = "│"  # a crossing: the lane stays whole, the other line passes under it
            canvas.put(row, x, glyph)
            _tag_lane(canvas, lane, row_of, x, row)


_LEFT_JUNCTIONS = {
    (True, True, False): "├", (True, False, False): "└", (False, True, False): "┌",
    (True, True, True): "┼", (True, False, True): "┴", (False, True, True): "┬",
}
"""A left lane's glyph where a row leaves it rightwards, by (up, down, a line also goes on left)."""


def _draw_left_lanes(canvas: Canvas, lanes: list[_Lane], row_of: dict[str, int], ox: int) -> None:
    lane_x = {id(lane): ox - 2 - 2 * lane.column for lane in lanes}
    for lane in lanes:
        x = lane_x[id(lane)]
        for edge in lane.edges:
            _line(canvas, row_of[edge.source], x + 1, ox)
            canvas.tag(row_of[edge.source], x, ox, f"edge:{edge.source}>{edge.target}")
        row = row_of[lane.target]
        _line(canvas, row, x + 1, ox - 1)
        canvas.put(row, ox - 1, "▶", "arrow")
        for edge in lane.edges:
            canvas.tag(row, x, ox, f"edge:{edge.source}>{edge.target}")
    for lane in lanes:
        x = lane_x[id(lane)]
        joined = {row_of[lane.target], *(row_of[e.source] for e in lane.edges)}
        for row in range(lane.top, lane.bottom + 1):
            if row in joined:
                glyph = _LEFT_JUNCTIONS[(row > lane.top, row < lane.bottom, canvas.get(row, x - 1) == "─")]
            else:
                glyph = "│"
            canvas.put(row, x, glyph)
            _tag_lane(canvas, lane, row_of, x, row)
