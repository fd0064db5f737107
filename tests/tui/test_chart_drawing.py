"""The chart's drawing is made from the chart class: every edge shows, names stay whole, the
waiting states sit beside the loop when there is room, phases nest, big workflows still fit."""

from __future__ import annotations

import re

import pytest

from agentcli.chart_drawing import draw_chart, edge_label, format_trail, to_dot, to_mermaid
from agentcli.chart_drawing.canvas import format_count
from agentcli.chart_drawing.labels import Step, phase_label
from agentcli.session.chart import WAITING_STATES, ChartGraph, chart_class, chart_graph
from agentcli.workflow import builtin_workflow
from agentcli.workflow.model import Workflow


def graph_of(workflow: str | Workflow) -> ChartGraph:
    return chart_graph(chart_class(builtin_workflow(workflow) if isinstance(workflow, str) else workflow))


def twelve_phases() -> Workflow:
    """A user workflow of twelve phases, two of them compound, each moved on by a tool."""
    names = [f"step{n}" for n in range(1, 9)] + ["review.read", "review.judge", "ship.tag", "ship.push"]
    return Workflow.model_validate({
        "name": "long",
        "phases": [{"name": name, "tools": ["read_file", "finish_phase", "run_checks"]} for name in names],
        "transitions": [{"from": a, "to": b, "tool": "finish_phase"} for a, b in zip(names, names[1:], strict=False)]
        + [{"from": "review.judge", "to": "step3", "checks": "failed"}],
        "initial": "step1",
        "terminal": ["ship.push"],
    })


def node_row(drawing: object, node: str) -> tuple[int, int]:
    for row, spans in enumerate(drawing.spans):  # type: ignore[attr-defined]
        for span in spans:
            if span.tag == f"node:{node}":
                return row, span.start
    raise AssertionError(f"{node} is not drawn")


@pytest.mark.parametrize("workflow", ["single", "plan-build"])
@pytest.mark.parametrize("width", [46, 60, 100])
def test_every_edge_and_state_of_the_chart_class_is_drawn(workflow: str, width: int) -> None:
    graph = graph_of(workflow)
    drawing = draw_chart(graph, width)
    tags = drawing.tags()
    missing = [(e.source, e.target, e.event) for e in graph.edges if f"edge:{e.source}>{e.target}" not in tags]
    assert not missing, missing
    for node in graph.nodes:
        if node.kind == "atomic":
            assert f"node:{node.id}" in tags, node.id
            name = node.name.rsplit(".", 1)[-1]
            assert f"[ {name} ]" in "\n".join(drawing.lines), "names are whole, never shortened"
    assert {len(line) for line in drawing.lines} == {width}, "a rectangle as wide as the pane"


def test_the_loop_reads_top_to_bottom_with_labelled_arrows() -> None:
    drawing = draw_chart(graph_of("single"), 80)
    text = "\n".join(drawing.lines)
    order = [node_row(drawing, state)[0] for state in
             ("idle", "capturingBaseline", "thinking", "executingTool", "capturingSnapshot", "reviewingProgress")]
    assert order == sorted(order), "the main loop runs down the column"
    assert "▼ modifies_files" in text and "▼ user_message" in text
    # reviewingProgress -> thinking closes the loop on the left: a lane up into thinking's row.
    thinking_row, thinking_x = node_row(drawing, "thinking")
    assert drawing.lines[thinking_row][thinking_x - 1] == "▶"
    lane = [span for span in drawing.spans[thinking_row] if span.tag == "edge:reviewingProgress>thinking"]
    assert lane and lane[0].start < thinking_x


def test_waiting_states_sit_beside_the_loop_when_there_is_room_and_under_it_when_not() -> None:
    graph = graph_of("single")
    waiting = sorted(WAITING_STATES - {"idle"})
    wide, narrow = draw_chart(graph, 90), draw_chart(graph, 48)
    loop_end = node_row(wide, "reviewingProgress")[0]
    for state in waiting:
        row, column = node_row(wide, state)
        assert row < loop_end and column > 30, state
        row, column = node_row(narrow, state)
        assert row > node_row(narrow, "reviewingProgress")[0], state
    assert "◀ is_clarify" in "\n".join(wide.lines), "why the agent waits there: the guard, not the event"
    assert "▶ approve, deny, pause" in "\n".join(wide.lines), "what takes it on"


def test_phases_are_nested_boxes_and_the_way_back_is_a_note() -> None:
    drawing = draw_chart(graph_of("plan-build"), 80)
    text = "\n".join(drawing.lines)
    assert "╭─ plan " in text and "╭─ build " in text
    assert "[ analyze ]" in text and "▶ [ research ]" in text
    assert "[ implement ]    ⇄ [ validate ]" in text
    assert "▼ create_plan" in text and "▼ checks pass" in text
    assert "↺ done ▶ analyze: new task" in text
    plan_top, plan_x = next((row, s.start) for row, spans in enumerate(drawing.spans) for s in spans
                            if s.tag == "box:phase_plan")
    analyze_row, analyze_x = node_row(drawing, "phase_plan__analyze")
    assert analyze_row > plan_top and analyze_x > plan_x, "analyze is inside the plan box"


def test_a_twelve_phase_workflow_fits_a_sixty_column_pane() -> None:
    workflow = twelve_phases()
    graph = graph_of(workflow)
    drawing = draw_chart(graph, 60)
    assert max(len(line) for line in drawing.lines) <= 60
    tags = drawing.tags()
    for phase in workflow.phases:
        assert f"[ {phase.name.rsplit('.', 1)[-1]} ]" in "\n".join(drawing.lines)
    assert all(f"edge:{e.source}>{e.target}" in tags for e in graph.edges)
    assert "↺ judge ▶ step3: checks fail" in "\n".join(drawing.lines)


def test_counts_go_into_their_slots_and_never_spill() -> None:
    drawing = draw_chart(graph_of("single"), 60)
    lines = drawing.with_counts({"thinking": 7, "paused": 1234})
    row, column, width = drawing.count_slots["thinking"]
    assert lines[row][column : column + width] == "×7 "
    row, column, width = drawing.count_slots["paused"]
    assert lines[row][column : column + width] == "99+"
    assert [len(line) for line in lines] == [len(line) for line in drawing.lines]
    assert format_count(42) == "×42" and format_count(3) == "×3 "


def test_labels_name_the_event_or_the_guard_that_chose_the_edge() -> None:
    assert edge_label("done.invoke.thinking", "has_tool_calls") == "has_tool_calls"
    assert edge_label("done.invoke.thinking") == "done"
    assert edge_label("", "is_stuck") == "is_stuck"
    assert edge_label("", None) == "else"
    assert edge_label("error.execution") == "error"
    assert edge_label("user_message", "has_snapshots") == "user_message"
    assert phase_label("", "tool_signal == 'create_plan'") == "create_plan"
    assert phase_label("", "checks_signal == 'failed'") == "checks fail"


def test_the_trail_drops_the_oldest_steps_to_fit() -> None:
    steps = [Step("idle", "thinking", "user_message"), Step("thinking", "executingTool", "has_tool_calls"),
             Step("executingTool", "capturingSnapshot", "modifies_files")]
    full = format_trail(steps, 200)
    assert full == ("idle →user_message→ thinking →has_tool_calls→ executingTool →modifies_files→ "
                    "capturingSnapshot")
    cut = format_trail(steps, 60)
    assert cut == "… executingTool →modifies_files→ capturingSnapshot" and len(cut) <= 60
    assert format_trail(steps, 10) == "… capturin"
    assert format_trail([], 40) == ""


@pytest.mark.parametrize("workflow", ["single", "plan-build"])
def test_mermaid_and_dot_have_every_state_and_transition(workflow: str) -> None:
    graph = graph_of(workflow)
    mermaid, dot = to_mermaid(graph), to_dot(graph, workflow)
    assert mermaid.startswith("stateDiagram-v2\n")
    assert "\n        --\n" in mermaid, "the two regions are concurrent"
    for edge in graph.edges:
        assert re.search(rf"^    {edge.source} --> {edge.target}\b", mermaid, re.M), edge
    assert dot.count("{") == dot.count("}")
    assert 'subgraph "cluster_control"' in dot and 'subgraph "cluster_phase"' in dot
    assert dot.count(" -> ") == len(graph.edges) + sum(1 for n in graph.nodes if n.kind == "compound")
    for node in graph.nodes:
        if node.kind == "atomic":
            assert f'"{node.id}" [label=' in dot


def test_the_drawing_is_pure() -> None:
    """The CLI draws with it too: no Textual, no rich, nothing of the session layer."""
    import subprocess
    import sys

    code = "import agentcli.chart_drawing, sys; print(' '.join(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(run.stdout.split())
    for name in ("textual", "rich", "agentcli.session", "pydantic"):
        assert not any(m == name or m.startswith(name + ".") for m in loaded), name


@pytest.mark.parametrize("workflow", ["single", "plan-build"])
def test_the_waiting_states_notes_line_up_at_every_width(workflow: str) -> None:
    """Each waiting state's ``▶`` (the ways out) starts in one column, as its ``◀`` lines do when
    they have lines of their own, at every pane width from the narrowest to beside the flow."""
    graph = graph_of(workflow)
    for width in range(40, 131):
        drawing = draw_chart(graph, width)
        spans = [span for row in drawing.spans for span in row]
        waiting = {span.tag.removeprefix("out:") for span in spans if span.tag.startswith("out:")}
        assert len(waiting) == 4, waiting  # permission, clarification, paused, halted
        outs = {span.start for span in spans if span.tag.startswith("out:")}
        nodes = {span.start for span in spans if span.tag.removeprefix("node:") in waiting}
        assert len(outs) == 1 and len(nodes) == 1, (width, outs, nodes)
        assert outs.pop() == nodes.pop() + 2, f"the ways out are indented under their state at {width}"
