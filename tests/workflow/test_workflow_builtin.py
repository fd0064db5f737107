"""The built-in workflows: plan-build's phases, tools, limits and transitions, compiled into the chart."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.session.chart import _control_region, chart_class, chart_graph, state_id_for
from agentcli.tools.registry import default_registry
from agentcli.workflow import BUILTIN_WORKFLOWS, builtin_workflow
from agentcli.workflow.builtin import PLAN_BUILD, READ_ONLY_TOOLS, UnknownWorkflowError

READ_ONLY = set(READ_ONLY_TOOLS)
WRITES = {"write_file", "edit_file", "bash"}


def _callback_names(definition: Any, keys: tuple[str, ...]) -> set[str]:
    """Every callback name under ``keys`` in a chart definition."""
    names: set[str] = set()
    if isinstance(definition, dict):
        for key, value in definition.items():
            if key in keys and isinstance(value, str):
                names.add(value)
            else:
                names |= _callback_names(value, keys)
    elif isinstance(definition, list):
        for item in definition:
            names |= _callback_names(item, keys)
    return names


def _nothing(*args: Any, **kwargs: Any) -> bool:
    return False


async def _no_work(*args: Any, **kwargs: Any) -> None:
    return None


class _Listener:
    """The phase signals a review raises; every other callback of the chart does nothing (a
    guard is false), since only where the phase region goes is under test."""

    tool_signal: str | None = None
    checks_signal: str | None = None

    def enter_phase(self) -> None:
        self.tool_signal = self.checks_signal = None  # as the review does: a signal moves one step


for _name in _callback_names(_control_region(), ("enter", "exit", "cond", "on")):
    setattr(_Listener, _name, _nothing)
for _name in _callback_names(_control_region(), ("invoke",)):
    setattr(_Listener, _name, _no_work)


def test_both_builtins_are_valid_and_single_stays_the_default_shape() -> None:
    assert set(BUILTIN_WORKFLOWS) == {"single", "plan-build"}
    for workflow in BUILTIN_WORKFLOWS.values():
        assert workflow.warnings() == []
    single = builtin_workflow("single")
    assert [p.name for p in single.phases] == ["work"] and single.phase("work").tools == ["*"]
    with pytest.raises(UnknownWorkflowError, match="known workflows: plan-build, single"):
        builtin_workflow("plan_build")


def test_plan_build_follows_the_seed_000_hierarchy_and_limits() -> None:
    assert PLAN_BUILD.phase_names == [
        "plan.analyze", "plan.research", "plan.design", "build.implement", "build.validate", "done",
    ]
    assert PLAN_BUILD.initial == "plan.analyze" and PLAN_BUILD.terminal == ["done"]
    limits = {p.name: p.max_steps for p in PLAN_BUILD.phases}
    assert limits == {
        "plan.analyze": 5, "plan.research": 100, "plan.design": 100,
        "build.implement": 50, "build.validate": 100, "done": None,
    }
    roles = {p.name: p.model for p in PLAN_BUILD.phases}
    assert {roles[n] for n in ("plan.analyze", "plan.research", "plan.design")} == {"plan"}
    assert {roles[n] for n in ("build.implement", "build.validate")} == {"build"}


def test_plan_build_tool_access_matrix() -> None:
    tools = {p.name: set(p.tools) for p in PLAN_BUILD.phases}
    assert tools["plan.analyze"] == READ_ONLY | {"explore", "finish_phase"}
    assert tools["plan.research"] == READ_ONLY | {"think", "@research", "finish_phase"}  # + marked MCP tools
    assert tools["plan.design"] == READ_ONLY | {"think", "create_plan"}
    assert tools["build.implement"] == READ_ONLY | WRITES | {"update_plan", "finish_phase"}
    assert tools["build.validate"] == READ_ONLY | {"run_checks"}
    assert tools["done"] == set()
    # No planning phase can change a file.
    for name in ("plan.analyze", "plan.research", "plan.design", "build.validate"):
        assert not tools[name] & WRITES, name
    assert PLAN_BUILD.phase("build.validate").tool_choice == "run_checks"
    assert PLAN_BUILD.phase("done").tool_choice == "required"


def test_plan_build_transitions() -> None:
    moves = {(t.source, t.trigger): t.target for t in PLAN_BUILD.transitions}
    assert moves == {
        ("plan.analyze", "finish_phase called"): "plan.research",
        ("plan.research", "finish_phase called"): "plan.design",
        ("plan.design", "create_plan called"): "build.implement",
        ("build.implement", "finish_phase called"): "build.validate",
        ("build.validate", "checks passed"): "done",
        ("build.validate", "checks failed"): "build.implement",
    }


def test_plan_build_instructions_inject_the_plan_into_build_phases() -> None:
    assert "{plan}" in PLAN_BUILD.phase("build.implement").instructions
    assert "{plan}" in PLAN_BUILD.phase("build.validate").instructions
    assert "{workspace_summary}" in PLAN_BUILD.phase("plan.analyze").instructions


def test_plan_build_names_only_core_and_workflow_tools() -> None:
    known = set(default_registry().names) | {"think", "create_plan", "update_plan", "run_checks", "finish_phase", "explore"}
    assert PLAN_BUILD.tool_problems(known) == []


def test_plan_build_compiles_into_nested_chart_states() -> None:
    graph = chart_graph(chart_class(PLAN_BUILD))
    assert [n.name for n in graph.children("phase")] == ["plan", "build", "done"]
    assert [n.name for n in graph.children(state_id_for("plan"))] == ["plan.analyze", "plan.research", "plan.design"]
    assert [n.name for n in graph.children(state_id_for("build"))] == ["build.implement", "build.validate"]
    assert graph.node(state_id_for("plan")).kind == "compound"
    assert graph.node(state_id_for("plan.analyze")).initial
    edges = {(e.source, e.cond, e.target) for e in graph.edges}
    assert (state_id_for("plan.design"), "tool_signal == 'create_plan'", state_id_for("build.implement")) in edges
    assert (state_id_for("build.validate"), "checks_signal == 'failed'", state_id_for("build.implement")) in edges


async def test_plan_build_chart_walks_plan_to_done_and_restarts_on_a_new_task() -> None:
    listener = _Listener()
    chart: Any = chart_class(PLAN_BUILD)(listeners=[listener])
    await chart.activate_initial_state()

    def phase() -> str:
        leaves = [s.name for s in chart.configuration if s.id.startswith("phase_") and not s.states]
        assert len(leaves) == 1
        return str(leaves[0])

    assert phase() == "plan.analyze"
    for signal, expected in [
        (("tool", "finish_phase"), "plan.research"),
        (("tool", "finish_phase"), "plan.design"),
        (("tool", "finish_phase"), "plan.design"),  # design leaves only on create_plan
        (("tool", "create_plan"), "build.implement"),
        (("tool", "finish_phase"), "build.validate"),
        (("checks", "failed"), "build.implement"),
        (("tool", "finish_phase"), "build.validate"),
        (("checks", "passed"), "done"),
    ]:
        setattr(listener, f"{signal[0]}_signal", signal[1])
        await chart.send("noop")  # any event runs a step, in which the phase region reads the signal
        listener.tool_signal = listener.checks_signal = None
        assert phase() == expected, signal
    await chart.send("user_message")
    assert phase() == "plan.analyze"
