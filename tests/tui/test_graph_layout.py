"""The state graph is drawn from the chart's own definition: both regions, nested phases, counts."""

from __future__ import annotations

from agentcli.session.chart import chart_class, chart_graph
from agentcli.workflow import builtin_workflow
from agentcli.workflow.model import Workflow
from agentcli.tui.graph_layout import format_count, layout_graph, short_name, short_names


def plan_build() -> Workflow:
    return builtin_workflow("plan-build")


def test_both_regions_are_boxes_with_every_state() -> None:
    graph = chart_graph(chart_class(builtin_workflow("single")))
    layout = layout_graph(graph)
    text = "\n".join(layout.lines)
    assert layout.lines[0].startswith("╭─ control ")
    assert any(line.startswith("╭─ phase ") for line in layout.lines)
    for node in graph.nodes:
        if node.kind == "atomic":
            assert f"○ {node.name}" in text, node.id
    assert all(len(line) == layout.width for line in layout.lines), "a rectangle, so it scrolls cleanly"


REGIONS = ("control", "phase")
"""An edge from a region itself (a failure in any state ends in halted) is not drawn as a lane."""


def test_every_edge_has_a_count_slot() -> None:
    graph = chart_graph(chart_class(builtin_workflow("single")))
    layout = layout_graph(graph)
    for edge in graph.edges:
        if edge.source not in REGIONS:
            assert (edge.source, edge.target) in layout.count_slots, edge


def test_counts_are_written_on_their_edges() -> None:
    graph = chart_graph(chart_class(builtin_workflow("single")))
    layout = layout_graph(graph)
    loop = ("awaitingPermission", "awaitingPermission")  # approved, and the next call asks too
    lines = layout.with_counts({("thinking", "executingTool"): 7, loop: 2})
    row, column, width = layout.count_slots[("thinking", "executingTool")]
    assert lines[row][column : column + width] == "─7"
    assert lines[layout.node_lines["awaitingPermission"]].startswith("│ ○ awaitingPermission ↻ 2")
    assert "7" not in "".join(layout.lines), "the base drawing has no numbers"


def test_compound_phases_are_nested_boxes() -> None:
    graph = chart_graph(chart_class(plan_build()))
    layout = layout_graph(graph, short=True)
    text = "\n".join(layout.lines)
    assert "│ ╭─ plan " in text and "│ ╭─ build " in text
    assert "│ │ ○ analyze" in text and "│ │ ○ validate" in text
    assert "○ done" in text
    plan_top = layout.node_lines["phase_plan"]
    assert layout.node_lines["phase_plan__analyze"] == plan_top + 1
    assert layout.lines[layout.node_lines["phase_plan__design"] + 1].startswith("│ ╰")
    for edge in graph.edges:
        if edge.source not in REGIONS:
            assert (edge.source, edge.target) in layout.count_slots


def test_short_names_keep_the_graph_narrow() -> None:
    graph = chart_graph(chart_class(builtin_workflow("single")))
    assert short_name("awaitingClarification") == "awaiting"
    assert short_names(["awaitingClarification", "awaitingPermission", "executingTool"]) == {
        "awaitingClarification": "clarification", "awaitingPermission": "permission", "executingTool": "executing"}
    short = layout_graph(graph, short=True)
    assert short.width < layout_graph(graph).width
    labels = [line.split("○ ")[1].split()[0] for line in short.lines if "○ " in line]
    assert len(labels) == len(set(labels)), "short names stay unique"


def test_big_counts_stay_in_their_slot() -> None:
    assert format_count(7, 2) == "─7"
    assert format_count(42, 2) == "42"
    assert format_count(420, 2) == "9+"
