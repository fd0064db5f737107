"""Laying out the statechart as lines of box-drawing text (pure: no Textual).

Each region of the chart is a box. Inside it, states are rows in definition order; a compound
state is a nested box around its children. Transitions are drawn on *lanes* to the right of the
states: one vertical lane per target state, joined by a horizontal line from every source row,
ending in an arrowhead at the target. The junction of a source with a lane carries the visit
count of that transition, so the numbers sit on the edges. A self-transition is ``↻`` after the
state's name.

The layout depends only on the graph's structure, so it is computed once; the widget overlays
the counts into the reserved slots and styles the spans by tag when it renders.

Why lanes: a general layered drawing with routed edges does not fit a 40-column side pane, and
the chart has few nodes but many edges (everything can pause); one lane per target keeps the
width at three columns per target whatever the number of sources.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

LANE_WIDTH = 3
"""Columns per lane: two for the count, one for the junction."""

COUNT_WIDTH = LANE_WIDTH - 1


# Read-only members (properties), so that frozen dataclasses such as the chart's ChartGraph fit.
class _Node(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def parent(self) -> str | None: ...
    @property
    def kind(self) -> str: ...


class _Edge(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def event(self) -> str: ...


class _Graph(Protocol):
    @property
    def nodes(self) -> Sequence[_Node]: ...
    @property
    def edges(self) -> Sequence[_Edge]: ...


@dataclass(frozen=True)
class Span:
    """A tagged run of columns on one line: ``node:<id>``, ``box:<id>``, ``count:<src>><dst>``."""

    start: int
    end: int
    tag: str


@dataclass
class GraphLayout:
    """The drawing: lines of text, tagged spans per line, and where each count is written."""

    lines: list[str]
    spans: list[list[Span]]
    count_slots: dict[tuple[str, str], tuple[int, int, int]] = field(default_factory=dict)
    """(source, target) -> (line, column, width): where the visit count goes."""
    width: int = 0
    node_lines: dict[str, int] = field(default_factory=dict)
    """The line each state is drawn on (a compound state's is its box's top border)."""

    def with_counts(self, counts: dict[tuple[str, str], int]) -> list[str]:
        """The lines with every non-zero count written into its slot."""
        lines = list(self.lines)
        for key, (row, column, width) in self.count_slots.items():
            count = counts.get(key, 0)
            if not count:
                continue
            text = format_count(count, width, " " if key[0] == key[1] else "─")
            line = lines[row]
            lines[row] = line[:column] + text + line[column + width :]
        return lines


def format_count(count: int, width: int, fill: str = "─") -> str:
    """A count right-aligned in ``width`` columns; one too big to fit shows as ``9+``."""
    text = str(count)
    if len(text) > width:
        text = "9" * (width - 1) + "+"
    return text.rjust(width, fill)


def short_name(name: str) -> str:
    """The first word of a camelCase state id (``awaitingClarification`` -> ``awaiting``)."""
    match = re.match(r"[a-z0-9_.]+", name)
    return match.group(0) if match else name


def short_names(names: Iterable[str]) -> dict[str, str]:
    """Short names that stay unique: when two share a first word (``awaitingPermission``,
    ``awaitingClarification``), each is called by its next word (``permission``, ``clarification``)."""
    names = list(names)
    first = {name: short_name(name) for name in names}
    clashes = {short for short in first.values() if list(first.values()).count(short) > 1}
    result = {}
    for name in names:
        if first[name] in clashes:
            words = re.findall(r"[A-Z][a-z0-9]*", name)
            result[name] = words[0].lower() if words else name
        else:
            result[name] = first[name]
    return result


@dataclass
class _Row:
    kind: str  # "node", "top", "bottom"
    node: str
    depth: int
    label: str = ""


def layout_graph(graph: _Graph, *, short: bool = False) -> GraphLayout:
    """Lay out every region of the chart, one box under the other.

    Args:
        graph: A ChartGraph (or anything with the same nodes and edges).
        short: Use the first word of camelCase names, for narrow panes.
    """
    nodes = {node.id: node for node in graph.nodes}
    children: dict[str | None, list[str]] = {}
    for node in graph.nodes:
        children.setdefault(node.parent, []).append(node.id)
    roots = children.get(None, [])
    if not roots:
        return GraphLayout(lines=[], spans=[])
    root = nodes[roots[0]]
    regions = children.get(root.id, []) if root.kind == "parallel" else [root.id]

    lines: list[str] = []
    spans: list[list[Span]] = []
    slots: dict[tuple[str, str], tuple[int, int, int]] = {}
    node_lines: dict[str, int] = {}
    boxes = [_layout_region(region, nodes, children, graph.edges, short) for region in regions]
    width = max((box.width for box in boxes), default=0)
    for index, box in enumerate(boxes):
        if index:
            lines.append(" " * width)
            spans.append([])
        offset = len(lines)
        box.pad(width)
        lines.extend(box.lines)
        spans.extend(box.spans)
        for key, (row, column, slot_width) in box.count_slots.items():
            slots[key] = (row + offset, column, slot_width)
        for node_id, row in box.node_lines.items():
            node_lines[node_id] = row + offset
    return GraphLayout(lines=lines, spans=spans, count_slots=slots, width=width, node_lines=node_lines)


@dataclass
class _Box:
    lines: list[str]
    spans: list[list[Span]]
    count_slots: dict[tuple[str, str], tuple[int, int, int]]
    node_lines: dict[str, int]
    width: int

    def pad(self, width: int) -> None:
        """Widen the region box to ``width`` by stretching its right border."""
        extra = width - self.width
        if extra <= 0:
            return
        for index, line in enumerate(self.lines):
            fill = "─" if index in (0, len(self.lines) - 1) else " "
            self.lines[index] = line[:-1] + fill * extra + line[-1]
            self.spans[index] = [
                Span(s.start, s.end + extra, s.tag) if s.end == len(line) and s.tag.startswith("box:") else s
                for s in self.spans[index]
            ]
        self.width = width


def _descendants_rows(
    node_id: str, nodes: dict[str, _Node], children: dict[str | None, list[str]], depth: int,
    short: dict[str, str] | None,
) -> list[_Row]:
    rows: list[_Row] = []
    for child in children.get(node_id, []):
        node = nodes[child]
        name = node.name if node.id.startswith("phase_") or short is None else short.get(node.name, node.name)
        if node.id.startswith("phase_") and node.parent and node.parent.startswith("phase_"):
            name = name.rsplit(".", 1)[-1]  # inside the ``plan`` box, ``plan.design`` reads ``design``
        if children.get(child):
            rows.append(_Row("top", child, depth, name))
            rows.extend(_descendants_rows(child, nodes, children, depth + 1, short))
            rows.append(_Row("bottom", child, depth))
        else:
            rows.append(_Row("node", child, depth, name))
    return rows


def _layout_region(
    region: str,
    nodes: dict[str, _Node],
    children: dict[str | None, list[str]],
    edges: Iterable[_Edge],
    short: bool,
) -> _Box:
    names = short_names(n.name for n in nodes.values() if not n.id.startswith("phase_")) if short else None
    rows = _descendants_rows(region, nodes, children, 0, names)
    row_of = {row.node: index for index, row in enumerate(rows) if row.kind in ("node", "top")}
    in_region = set(row_of)
    pairs: dict[tuple[str, str], None] = {}
    self_loops: set[str] = set()
    for edge in edges:
        if edge.source not in in_region or edge.target not in in_region:
            continue
        if edge.source == edge.target:
            self_loops.add(edge.source)
        else:
            pairs[(edge.source, edge.target)] = None

    # The node column: labels (with a self-loop slot) inside any nested boxes.
    def label_text(row: _Row) -> str:
        marker = "○ " if row.kind == "node" else ""
        loop = " ↻" + " " * COUNT_WIDTH if row.node in self_loops else ""
        return marker + row.label + loop

    node_width = 0
    for row in rows:
        d = row.depth
        if row.kind == "node":
            node_width = max(node_width, 4 * d + len(label_text(row)) + 1)
        elif row.kind == "top":
            node_width = max(node_width, 4 * d + len(label_text(row)) + 6)

    # Lanes: one per target, the shortest spans nearest the states.
    sources: dict[str, list[str]] = {}
    for source, target in pairs:
        sources.setdefault(target, []).append(source)
    lanes = []
    for target, from_nodes in sources.items():
        lane_rows = {row_of[target], *(row_of[s] for s in from_nodes)}
        lanes.append((max(lane_rows) - min(lane_rows), row_of[target], target, lane_rows, from_nodes))
    lanes.sort(key=lambda lane: (lane[0], lane[1]))

    arrow_col = node_width
    lane_start = arrow_col + 2
    inner_width = lane_start + LANE_WIDTH * len(lanes) if lanes else node_width
    total = inner_width + 4  # "│ " + inner + " │"

    out_lines: list[str] = []
    out_spans: list[list[Span]] = []
    slots: dict[tuple[str, str], tuple[int, int, int]] = {}
    node_lines: dict[str, int] = {}

    title = f"╭─ {nodes[region].name} "
    out_lines.append(title + "─" * (total - len(title) - 1) + "╮")
    out_spans.append([Span(0, total, f"box:{region}")])

    for index, row in enumerate(rows):
        cells = [" "] * inner_width
        row_spans: list[Span] = []
        d = row.depth
        # Enclosing nested boxes: borders at 2k (left) and node_width-1-2k (right) for k < d.
        enclosing = _enclosing(rows, index)
        for k, box_node in enclosing:
            cells[2 * k] = "│"
            cells[node_width - 1 - 2 * k] = "│"
            row_spans.append(Span(2 * k + 2, 2 * k + 3, f"box:{box_node}"))
            row_spans.append(Span(node_width - 1 - 2 * k + 2, node_width - 2 * k + 2, f"box:{box_node}"))
        left, right = 2 * d, node_width - 1 - 2 * d
        label_end = left
        if row.kind == "top":
            text = f"╭─ {row.label} "
            segment = text + "─" * (right - left - len(text)) + "╮"
            cells[left : right + 1] = list(segment)
            row_spans.append(Span(left + 2, right + 3, f"box:{row.node}"))
            row_spans.append(Span(left + 5, left + 5 + len(row.label), f"node:{row.node}"))
            label_end = left + len(text) - 1
            node_lines[row.node] = index + 1
        elif row.kind == "bottom":
            segment = "╰" + "─" * (right - left - 1) + "╯"
            cells[left : right + 1] = list(segment)
            row_spans.append(Span(left + 2, right + 3, f"box:{row.node}"))
        else:
            text = label_text(row)
            cells[left : left + len(text)] = list(text)
            name_width = len(text) - (2 + COUNT_WIDTH if row.node in self_loops else 0)
            row_spans.append(Span(left + 2, left + 2 + name_width, f"node:{row.node}"))
            if row.node in self_loops:
                column = left + len(text) - COUNT_WIDTH
                slots[(row.node, row.node)] = (index + 1, column + 2, COUNT_WIDTH)
                row_spans.append(Span(column + 1, column + 2 + COUNT_WIDTH, f"count:{row.node}>{row.node}"))
            label_end = left + len(text)
            node_lines[row.node] = index + 1

        # Lanes and the horizontal line that reaches them.
        reach = -1
        is_target = False
        for k, (_, target_row, _target, lane_rows, _) in enumerate(lanes):
            if index in lane_rows:
                reach = k
                is_target = is_target or target_row == index
        if reach >= 0 and row.kind != "bottom":
            for column in range(label_end + 1, arrow_col):
                cells[column] = "┼" if cells[column] == "│" else ("─" if cells[column] == " " else cells[column])
            cells[arrow_col : arrow_col + 2] = list("◀─" if is_target else "──")
            if is_target:
                row_spans.append(Span(arrow_col + 2, arrow_col + 3, "arrow"))
        for k, (_, _target_row, target, lane_rows, from_nodes) in enumerate(lanes):
            junction = lane_start + LANE_WIDTH * k + COUNT_WIDTH
            top, bottom = min(lane_rows), max(lane_rows)
            horizontal = k <= reach and row.kind != "bottom"
            if index in lane_rows:
                up, down, right = top < index, bottom > index, k < reach
                cells[junction] = _JUNCTIONS[(up, down, right)]
                for column in range(junction - COUNT_WIDTH, junction):
                    cells[column] = "─"
                if row.node in from_nodes:
                    slots[(row.node, target)] = (index + 1, junction - COUNT_WIDTH + 2, COUNT_WIDTH)
                    row_spans.append(Span(junction - COUNT_WIDTH + 2, junction + 2, f"count:{row.node}>{target}"))
            elif top < index < bottom:
                # A crossing, not a junction: the lane stays whole and the line passes under it.
                cells[junction] = "│"
                for column in range(junction - COUNT_WIDTH, junction):
                    cells[column] = "─" if horizontal else " "
            elif horizontal:
                for column in range(junction - COUNT_WIDTH, junction + 1):
                    cells[column] = "─"
        out_lines.append("│ " + "".join(cells) + " │")
        row_spans.insert(0, Span(0, 1, f"box:{region}"))
        row_spans.append(Span(total - 1, total, f"box:{region}"))
        out_spans.append(row_spans)

    out_lines.append("╰" + "─" * (total - 2) + "╯")
    out_spans.append([Span(0, total, f"box:{region}")])
    return _Box(out_lines, out_spans, slots, node_lines, total)


_JUNCTIONS = {
    (True, True, False): "┤",
    (True, False, False): "┘",
    (False, True, False): "┐",
    (True, True, True): "┼",
    (True, False, True): "┴",
    (False, True, True): "┬",
    (False, False, False): "╴",
    (False, False, True): "─",
}
"""Junction glyphs by (lane goes up, lane goes down, the row's line goes on to the right)."""


def _enclosing(rows: list[_Row], index: int) -> list[tuple[int, str]]:
    """The nested boxes (depth, compound id) that a row sits inside."""
    stack: list[tuple[int, str]] = []
    for row in rows[:index]:
        if row.kind == "top":
            stack.append((row.depth, row.node))
        elif row.kind == "bottom":
            stack.pop()
    if rows[index].kind == "bottom":
        stack.pop()
    return stack
