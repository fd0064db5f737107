"""A plain-text drawing of a workflow, for ``agentcli workflows show NAME``.

It is drawn from the chart's graph (``agentcli.session.chart.chart_graph``), so what it shows is
what runs, not a hand-kept copy: the phase region as an indented tree, then every transition.
Given the :class:`Workflow` too, each phase also lists its tools, model and step limit. The graph
is taken structurally (the drawing's ``GraphLike``: anything shaped like ``ChartGraph``), which keeps
this module free of the session layer; it imports neither rich nor textual.
"""

from __future__ import annotations

import re

from agentcli.chart_drawing.canvas import GraphLike, NodeLike
from agentcli.workflow.model import ALL_TOOLS, Phase, Workflow

PHASE_REGION = "phase"
"""The id of the chart's phase region, whose subtree is the workflow."""


_UNICODE = {"branch": "├─ ", "last": "└─ ", "pipe": "│  ", "blank": "   ", "arrow": "→", "dot": "·"}
_ASCII = {"branch": "|- ", "last": "`- ", "pipe": "|  ", "blank": "   ", "arrow": "->", "dot": "-"}


_SIGNAL = re.compile(r"(tool|checks)_signal == '([^']*)'")
"""A phase transition's guard: the review of a finished call raised this signal."""


def describe_transition(event: str, cond: str | None = None) -> str:
    """When a phase transition is taken, in words: ``tool_signal == 'create_plan'`` is "after create_plan"."""
    signal = _SIGNAL.fullmatch(cond or "")
    if signal is not None:
        kind, value = signal.groups()
        if kind == "tool":
            return f"after {value}"
        return f"when checks {'pass' if value == 'passed' else 'fail'}"
    if event == "user_message":
        return "on a new task"
    return f"on {event}" if event else f"when {cond}"


def render_workflow(
    graph: GraphLike,
    workflow: Workflow | None = None,
    *,
    ascii_only: bool = False,
    region: str = PHASE_REGION,
) -> str:
    """Draw the phase region of a chart graph as text.

    Args:
        graph: The chart's graph (``chart_graph(chart_class(workflow))``).
        workflow: The workflow it was compiled from, for each phase's tools, model and limits.
        ascii_only: Use ``|-`` and ``->`` instead of box-drawing characters.
        region: The id of the node whose subtree is drawn.

    Returns:
        Lines ending in a newline: a heading (when ``workflow`` is given), the phase tree with the
        start and terminal phases marked, then the transitions.
    """
    glyph = _ASCII if ascii_only else _UNICODE
    nodes = {node.id: node for node in graph.nodes}
    if region not in nodes:
        raise ValueError(f"the graph has no '{region}' node to draw")
    children: dict[str, list[NodeLike]] = {}
    for node in graph.nodes:
        if node.parent is not None:
            children.setdefault(node.parent, []).append(node)

    inside = _subtree(region, children)
    edges = [e for e in graph.edges if e.source in inside and e.target in inside]
    start = _start(region, children)
    terminal = (
        {nodes[i].name for i in inside if nodes[i].name in workflow.terminal}
        if workflow is not None
        else {nodes[e.source].name for e in edges if e.event == "user_message"}
    )
    phases = {phase.name: phase for phase in workflow.phases} if workflow is not None else {}

    lines: list[str] = []
    if workflow is not None:
        lines.append(f"{workflow.name}: {workflow.description}" if workflow.description else workflow.name)
        lines.append("")
    lines.append("Phases")

    def walk(node_id: str, prefix: str) -> None:
        kids = children.get(node_id, [])
        for position, node in enumerate(kids):
            last = position == len(kids) - 1
            label = node.name.rsplit(".", 1)[-1]
            marks = []
            if node.id == start:
                marks.append("start")
            if node.name in terminal:
                marks.append("terminal")
            if marks:
                label += f"  [{', '.join(marks)}]"
            lines.append(prefix + (glyph["last"] if last else glyph["branch"]) + label)
            inner = prefix + (glyph["blank"] if last else glyph["pipe"])
            phase = phases.get(node.name)
            if phase is not None and not children.get(node.id):
                for detail in _details(phase, glyph["dot"]):
                    lines.append(inner + "  " + detail)
            walk(node.id, inner)

    walk(region, "")
    lines.append("")
    lines.append("Transitions")
    if not edges:
        lines.append("  (none: the agent ends the task with complete, clarify or pause)")
    else:
        rows = [(nodes[e.source].name, nodes[e.target].name, describe_transition(e.event, e.cond)) for e in edges]
        width_from = max(len(row[0]) for row in rows)
        width_to = max(len(row[1]) for row in rows)
        for source, target, when in rows:
            lines.append(f"  {source.ljust(width_from)}  {glyph['arrow']} {target.ljust(width_to)}  {when}")
    return "\n".join(lines) + "\n"


def _subtree(root: str, children: dict[str, list[NodeLike]]) -> set[str]:
    found = {root}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child.id)
            stack.append(child.id)
    return found


def _start(root: str, children: dict[str, list[NodeLike]]) -> str | None:
    """Follow initial children down from the region: the phase a task starts in."""
    node_id: str | None = root
    while node_id is not None and children.get(node_id):
        node_id = next((child.id for child in children[node_id] if child.initial), None)
    return node_id if node_id != root else None


def _details(phase: Phase, dot: str) -> list[str]:
    details = []
    if phase.description:
        details.append(phase.description)
    if ALL_TOOLS in phase.tools:
        tools = "every tool"
    elif phase.tools:
        tools = ", ".join(phase.tools) + " + control tools"
    else:
        tools = "control tools only"
    details.append(f"tools: {tools}")
    facts = [f"model: {phase.model}"]
    if phase.max_steps is not None:
        facts.append(f"max {phase.max_steps} steps")
    if phase.tool_choice == "required":
        facts.append("must call a tool")
    elif phase.forced_tool is not None:
        facts.append(f"must call {phase.forced_tool}")
    details.append(f" {dot} ".join(facts))
    return details
