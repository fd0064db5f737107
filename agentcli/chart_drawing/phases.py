"""The phase region as nested boxes: a compound phase is a box around its children, laid out
left to right when they fit the width and top to bottom when they do not.

Neighbouring phases are joined by an arrow (``▶``/``▼``, ``⇄`` both ways) for every transition
between them or their descendants; a transition between phases that are not neighbours (a new
task after ``done`` starting ``plan`` again) is written under the region as a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentcli.chart_drawing.canvas import (
    COUNT_WIDTH,
    Canvas,
    Drawing,
    EdgeLike,
    NodeLike,
    Span,
    join_fitting,
    truncate,
)
from agentcli.chart_drawing.labels import phase_label


@dataclass
class _Tree:
    nodes: dict[str, NodeLike]
    children: dict[str, list[str]] = field(default_factory=dict)

    def chain(self, node: str) -> list[str]:
        """``node`` and its ancestors, innermost first."""
        out = [node]
        while (parent := self.nodes[out[-1]].parent) is not None:
            out.append(parent)
        return out

    def child_towards(self, parent: str, node: str) -> str | None:
        """The child of ``parent`` that is ``node`` or contains it."""
        chain = self.chain(node)
        return chain[chain.index(parent) - 1] if parent in chain[1:] else None


def draw_phases(nodes: Sequence[NodeLike], region: str, edges: Sequence[EdgeLike], width: int) -> Drawing:
    """Draw ``region``'s subtree in at most ``width`` columns (boxes included)."""
    tree = _Tree({node.id: node for node in nodes})
    for node in nodes:
        if node.parent is not None:
            tree.children.setdefault(node.parent, []).append(node.id)
    inside = _subtree(region, tree)
    local = [e for e in edges if e.source in inside and e.target in inside and e.source != region]
    drawn: set[tuple[str, str]] = set()
    canvas = Canvas()
    canvas.paste(_block_children(region, tree, local, width - 4, drawn), 0, 0)
    notes = [e for e in local if (e.source, e.target) not in drawn]
    for edge in notes:
        text = f"↺ {_short(tree, edge.source)} ▶ {_short(tree, edge.target)}: {phase_label(edge.event, edge.cond)}"
        canvas.put(canvas.height, 0, truncate(text, width - 4), "label", f"edge:{edge.source}>{edge.target}")
    return canvas.boxed(tree.nodes[region].name, f"box:{region}", min_width=min(width, canvas.width + 4))


def _subtree(root: str, tree: _Tree) -> set[str]:
    found, stack = {root}, [root]
    while stack:
        for child in tree.children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def _short(tree: _Tree, node: str) -> str:
    return tree.nodes[node].name.rsplit(".", 1)[-1]


def _block(node: str, tree: _Tree, edges: Sequence[EdgeLike], width: int, drawn: set[tuple[str, str]]) -> Drawing:
    if not tree.children.get(node):
        canvas = Canvas()
        text = f"[ {_short(tree, node)} ]"
        canvas.put(0, 0, text, f"node:{node}")
        canvas.count_slots[node] = (0, len(text), COUNT_WIDTH)
        canvas.put(0, len(text) + COUNT_WIDTH - 1, " ")
        return canvas.drawing()
    inner = _block_children(node, tree, edges, width - 4, drawn)
    canvas = Canvas()
    canvas.paste(inner, 0, 0)
    boxed = canvas.boxed(_short(tree, node), f"box:{node}")
    title = _short(tree, node)
    boxed.spans[0].append(_title_span(title, node))
    return boxed


def _title_span(title: str, node: str) -> Span:
    return Span(3, 3 + len(title), f"node:{node}")


def _between(
    parent: str, first: str, second: str, tree: _Tree, edges: Sequence[EdgeLike]
) -> tuple[list[EdgeLike], list[EdgeLike]]:
    """The edges from ``first``'s subtree to ``second``'s, and back."""
    down: list[EdgeLike] = []
    up: list[EdgeLike] = []
    for edge in edges:
        source, target = tree.child_towards(parent, edge.source), tree.child_towards(parent, edge.target)
        if (source, target) == (first, second):
            down.append(edge)
        elif (source, target) == (second, first):
            up.append(edge)
    return down, up


def _block_children(node: str, tree: _Tree, edges: Sequence[EdgeLike], width: int,
                    drawn: set[tuple[str, str]]) -> Drawing:
    kids = tree.children.get(node, [])
    blocks = [_block(kid, tree, edges, width, drawn) for kid in kids]
    joints = []
    for first, second in zip(kids, kids[1:], strict=False):
        down, up = _between(node, first, second, tree, edges)
        drawn.update((e.source, e.target) for e in down + up)
        joints.append((down, up))
    canvas = Canvas()
    across = sum(block.width for block in blocks) + 3 * max(0, len(blocks) - 1)
    if across <= width:
        middle = 1 if any(block.width and len(block.lines) > 1 for block in blocks) else 0
        x = 0
        for index, block in enumerate(blocks):
            canvas.paste(block, 0 if len(block.lines) > 1 else middle, x)
            x += block.width
            if index < len(joints):
                down, up = joints[index]
                arrow = "⇄" if down and up else ("▶" if down else ("◀" if up else " "))
                canvas.put(middle, x + 1, arrow, *(f"edge:{e.source}>{e.target}" for e in down + up))
                x += 3
        return canvas.drawing()
    row = 0
    for index, block in enumerate(blocks):
        canvas.paste(block, row, 0)
        row += len(block.lines)
        if index < len(joints):
            down, up = joints[index]
            arrow = "⇅" if down and up else ("▼" if down else ("▲" if up else " "))
            tags = [f"edge:{e.source}>{e.target}" for e in down + up]
            canvas.put(row, 2, arrow, *tags)
            labels = list(dict.fromkeys(phase_label(e.event, e.cond) for e in down + up))
            if labels:
                canvas.put(row, 4, join_fitting(labels, width - 4, sep="/"), "label", *tags)
            row += 1
    return canvas.drawing()
