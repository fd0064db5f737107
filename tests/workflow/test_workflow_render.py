"""The text drawing of a workflow, drawn from the compiled chart."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

import pytest

from agentcli.session.chart import chart_class, chart_graph
from agentcli.workflow import PLAN_BUILD, SINGLE, Workflow
from agentcli.workflow.examples import EXAMPLE_WORKFLOW_NAME, EXAMPLE_WORKFLOW_TOML
from agentcli.workflow.render import describe_transition, render_workflow


def drawing(workflow: Workflow) -> str:
    return render_workflow(chart_graph(chart_class(workflow)), workflow)


def test_plan_build_is_drawn_as_a_nested_tree_with_its_transitions() -> None:
    text = drawing(PLAN_BUILD)
    lines = text.splitlines()
    assert lines[0].startswith("plan-build: Plan read-only")
    tree = [line for line in lines if "─ " in line]
    assert [line.split("─ ")[1] for line in tree] == [
        "plan", "analyze  [start]", "research", "design", "build", "implement", "validate", "done  [terminal]",
    ]
    assert "│  ├─ analyze  [start]" in lines
    assert "└─ done  [terminal]" in lines
    assert "tools: read_file, list_files, glob, grep, explore, finish_phase + control tools" in text
    assert "model: build · max 100 steps · must call run_checks" in text
    assert "tools: control tools only" in text
    transitions = lines[lines.index("Transitions") + 1 :]
    assert [" ".join(row.split()) for row in transitions] == [
        "plan.analyze → plan.research after finish_phase",
        "plan.research → plan.design after finish_phase",
        "plan.design → build.implement after create_plan",
        "build.implement → build.validate after finish_phase",
        "build.validate → done when checks pass",
        "build.validate → build.implement when checks fail",
        "done → plan.analyze on a new task",
    ]


def test_the_graph_alone_is_enough_and_ascii_is_available() -> None:
    text = render_workflow(chart_graph(chart_class(PLAN_BUILD)), ascii_only=True)
    assert text.isascii()
    assert "|  |- analyze  [start]" in text and "`- done  [terminal]" in text  # terminal read from the restart edge
    assert "tools:" not in text
    assert "build.validate   -> done             when checks pass" in text


def test_single_has_no_transitions_and_says_how_it_ends() -> None:
    text = drawing(SINGLE)
    assert "└─ work  [start]" in text and "tools: every tool" in text
    assert "(none: the agent ends the task with complete, clarify or pause)" in text


def test_the_example_file_draws_its_custom_trigger() -> None:
    workflow = Workflow.model_validate({**tomllib.loads(EXAMPLE_WORKFLOW_TOML), "name": EXAMPLE_WORKFLOW_NAME})
    text = drawing(workflow)
    assert "  review     → fix.edit   after write_file" in text.splitlines()
    assert "├─ fix" in text and "│  ├─ edit" in text


@dataclass(frozen=True)
class Node:
    id: str
    name: str
    parent: str | None
    initial: bool = False


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    event: str
    cond: str | None = None


@dataclass(frozen=True)
class Graph:
    nodes: list[Node]
    edges: list[Edge]


def test_any_graph_shaped_like_the_chart_graph_can_be_drawn() -> None:
    graph = Graph(
        nodes=[Node("phase", "phase", None), Node("a", "a", "phase", True), Node("b", "b", "phase")],
        edges=[Edge("a", "b", "", "tool_signal == 'go'"), Edge("a", "idle", "elsewhere")],
    )
    text = render_workflow(graph)
    assert text == "Phases\n├─ a  [start]\n└─ b\n\nTransitions\n  a  → b  after go\n"
    with pytest.raises(ValueError, match="no 'phase' node"):
        render_workflow(Graph(nodes=[], edges=[]))


def test_events_in_words() -> None:
    assert describe_transition("", "tool_signal == 'create_plan'") == "after create_plan"
    assert describe_transition("", "checks_signal == 'passed'") == "when checks pass"
    assert describe_transition("", "checks_signal == 'failed'") == "when checks fail"
    assert describe_transition("user_message") == "on a new task"
    assert describe_transition("resume") == "on resume"
