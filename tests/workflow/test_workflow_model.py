"""The workflow model: every structural mistake is an error that names the field and the fix."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from pydantic import ValidationError

from agentcli.workflow.model import (
    InvalidWorkflowError,
    Phase,
    Workflow,
    WorkflowProblem,
    render_instructions,
)


def build(**overrides: Any) -> Workflow:
    data: dict[str, Any] = {
        "name": "flow",
        "phases": [
            {"name": "plan", "tools": ["read_file", "finish_phase"]},
            {"name": "work", "tools": ["read_file", "edit_file", "run_checks"]},
            {"name": "done", "tools": []},
        ],
        "transitions": [
            {"from": "plan", "to": "work", "tool": "finish_phase"},
            {"from": "work", "to": "done", "checks": "passed"},
        ],
        "terminal": ["done"],
    }
    data.update(overrides)
    return Workflow.model_validate(data)


def problems(**overrides: Any) -> list[WorkflowProblem]:
    """The structural problems a broken workflow raises, as data."""
    with pytest.raises(ValidationError) as caught:
        build(**overrides)
    found: list[WorkflowProblem] = []
    for item in caught.value.errors():
        cause = (item.get("ctx") or {}).get("error")
        assert isinstance(cause, InvalidWorkflowError), item
        found.extend(cause.problems)
    return found


def only(found: list[WorkflowProblem]) -> WorkflowProblem:
    assert len(found) == 1, [str(p) for p in found]
    return found[0]


def test_a_sound_workflow_has_no_problems_and_starts_at_its_first_phase() -> None:
    workflow = build()
    assert workflow.initial == "plan"
    assert workflow.warnings() == []
    assert workflow.tool_problems({"read_file", "edit_file", "run_checks", "finish_phase"}) == []


def test_undefined_phase_in_a_transition_suggests_the_close_name() -> None:
    problem = only(problems(transitions=[{"from": "plan", "to": "wrok", "tool": "finish_phase"}]))
    assert problem.field == "transitions[0].to"
    assert "phase 'wrok' is not defined (did you mean 'work'?)" in problem.message
    assert "phases are: plan, work, done" in problem.message


def test_initial_and_terminal_must_name_phases() -> None:
    found = problems(initial="start", terminal=["end"])
    assert {p.field for p in found} == {"initial", "terminal[0]"}
    assert all("is not defined" in p.message for p in found)


def test_transitions_out_of_a_terminal_phase_are_refused() -> None:
    found = problems(
        phases=[{"name": "work", "tools": ["finish_phase"]}, {"name": "done", "tools": ["finish_phase"]}],
        transitions=[
            {"from": "work", "to": "done", "tool": "finish_phase"},
            {"from": "done", "to": "work", "tool": "finish_phase"},
        ],
        terminal=["done"],
    )
    problem = only(found)
    assert problem.field == "transitions[1].from"
    assert "'done' is terminal" in problem.message and "take 'done' out of terminal" in problem.message


def test_initial_cannot_be_terminal() -> None:
    problem = only(problems(phases=[{"name": "only"}], transitions=[], terminal=["only"]))
    assert problem.field == "initial" and "end before it starts" in problem.message


def test_unreachable_phases_are_errors_naming_the_phase() -> None:
    problem = only(problems(transitions=[{"from": "plan", "to": "work", "tool": "finish_phase"}]))
    assert problem.field == "phases[2]"
    assert "phase 'done' can never be reached" in problem.message


def test_tool_choice_must_name_one_of_the_phase_tools() -> None:
    phases = [
        {"name": "plan", "tools": ["read_file", "finish_phase"], "tool_choice": "edit_file"},
        {"name": "work", "tools": ["run_checks"]},
        {"name": "done", "tools": []},
    ]
    problem = only(problems(phases=phases))
    assert problem.field == "phases[0].tool_choice"
    assert "forces 'edit_file', which is not among its tools (read_file, finish_phase)" in problem.message


def test_control_tools_may_be_forced_and_are_always_offered() -> None:
    workflow = build(phases=[
        {"name": "plan", "tools": ["finish_phase"]},
        {"name": "work", "tools": ["run_checks"]},
        {"name": "done", "tools": [], "tool_choice": "complete"},
    ])
    assert workflow.phase("done").offers("pause")
    assert workflow.phase("done").tool_choice_param() == {"type": "function", "function": {"name": "complete"}}


def test_a_group_cannot_also_be_a_phase() -> None:
    found = problems(
        phases=[{"name": "plan"}, {"name": "plan.design"}],
        transitions=[{"from": "plan", "to": "plan.design", "tool": "read_file"}],
        terminal=[],
    )
    problem = only(found)
    assert problem.field == "phases[0].name"
    assert "'plan' is a phase and also the group of plan.design" in problem.message


def test_transitions_must_name_phases_not_groups() -> None:
    found = problems(
        phases=[{"name": "plan.a", "tools": ["finish_phase"]}, {"name": "plan.b"}],
        transitions=[{"from": "plan", "to": "plan.b", "tool": "finish_phase"}],
        terminal=[],
    )
    problem = only(found)
    assert problem.field == "transitions[0].from"
    assert "'plan' is a group of phases (plan.a, plan.b), not a phase" in problem.message


def test_duplicate_phase_names() -> None:
    found = problems(phases=[{"name": "plan", "tools": ["finish_phase"]}, {"name": "plan"}], transitions=[], terminal=[])
    assert any(p.field == "phases[1].name" and "already defined as phases[0]" in p.message for p in found)


def test_a_trigger_the_phase_does_not_offer_can_never_fire() -> None:
    problem = only(problems(transitions=[
        {"from": "plan", "to": "work", "tool": "create_plan"},
        {"from": "work", "to": "done", "checks": "passed"},
    ]))
    assert problem.field == "transitions[0].tool"
    assert "phase 'plan' does not offer 'create_plan', so this transition can never fire" in problem.message


def test_checks_triggers_need_run_checks_in_the_phase() -> None:
    problem = only(problems(transitions=[
        {"from": "plan", "to": "work", "tool": "finish_phase"},
        {"from": "plan", "to": "done", "checks": "passed"},
        {"from": "work", "to": "done", "checks": "passed"},
    ]))
    assert problem.field == "transitions[1].checks" and "does not offer 'run_checks'" in problem.message


def test_control_tools_never_trigger_transitions() -> None:
    found = problems(transitions=[
        {"from": "plan", "to": "work", "tool": "complete"},
        {"from": "work", "to": "done", "checks": "passed"},
    ])
    assert any(p.field == "transitions[0].tool" and "is a control tool" in p.message for p in found)


def test_one_trigger_cannot_lead_to_two_phases() -> None:
    found = problems(transitions=[
        {"from": "plan", "to": "work", "tool": "finish_phase"},
        {"from": "plan", "to": "done", "tool": "finish_phase"},
        {"from": "work", "to": "done", "checks": "passed"},
    ])
    problem = only(found)
    assert problem.field == "transitions[1]" and "already leaves 'plan' on 'finish_phase called'" in problem.message


def test_every_problem_is_reported_at_once() -> None:
    found = problems(initial="nowhere", transitions=[{"from": "plan", "to": "wrok", "tool": "finish_phase"}])
    assert {p.field for p in found} == {"initial", "transitions[0].to"}


def test_field_level_mistakes_name_the_field() -> None:
    with pytest.raises(ValidationError) as caught:
        Phase.model_validate({"name": "Plan Design", "max_steps": 0})
    fields = {item["loc"][0] for item in caught.value.errors()}
    assert fields == {"name", "max_steps"}
    assert "use lowercase words" in str(caught.value)


def test_a_transition_needs_exactly_one_trigger() -> None:
    with pytest.raises(ValidationError, match="needs a trigger"):
        build(transitions=[{"from": "plan", "to": "work"}])
    with pytest.raises(ValidationError, match="not both"):
        build(transitions=[{"from": "plan", "to": "work", "tool": "finish_phase", "checks": "passed"}])


def test_unknown_tools_are_named_with_a_suggestion() -> None:
    workflow = build()
    found = workflow.tool_problems({"read_file", "edit_file", "run_checks"})
    problem = only(found)
    assert problem.field == "phases[0].tools[1]"
    assert "'finish_phase' is not a known tool" in problem.message and "known tools:" in problem.message
    with pytest.raises(InvalidWorkflowError) as caught:
        workflow.validate_tools({"read_file", "edit_file", "run_checks", "finish_phase", "red_file"} - {"edit_file"})
    assert "workflow 'flow' is invalid" in str(caught.value)
    assert "'edit_file' is not a known tool" in str(caught.value)


def test_warnings_for_unknown_placeholders_forced_loops_and_idle_finish_phase() -> None:
    workflow = build(phases=[
        {"name": "plan", "tools": ["read_file", "finish_phase", "think"], "tool_choice": "think",
         "instructions": "Plan {plan_text} for {workspace}; JSON like {\"a\": 1} is fine.", "model": "pln"},
        {"name": "work", "tools": ["run_checks", "finish_phase"]},
        {"name": "done", "tools": []},
    ])
    warned = {p.field: p.message for p in workflow.warnings()}
    assert "'{plan_text}' is not a placeholder (did you mean 'plan'?)" in warned["phases[0].instructions"]
    assert "forces 'think' on every request" in warned["phases[0].tool_choice"]
    assert "'pln' is not a model role (did you mean 'plan'?)" in warned["phases[0].model"]
    assert "offers 'finish_phase' but no transition leaves it" in warned["phases[1].tools"]


def test_render_instructions_fills_placeholders_and_leaves_other_braces() -> None:
    phase = Phase(
        name="work",
        instructions="{date} in {workspace}\n{workspace_summary}\nPlan:\n{plan}\nKeep {other} and {\"k\": 1}.",
    )
    text = render_instructions(
        phase, date=date(2025, 3, 4), workspace="/w", workspace_summary="A Python package.", plan_text="1. [ ] a"
    )
    assert text == '2025-03-04 in /w\nA Python package.\nPlan:\n1. [ ] a\nKeep {other} and {"k": 1}.'
    empty = render_instructions(phase, date="today", workspace="/w")
    assert "(no plan yet)" in empty and "(no workspace summary)" in empty


def test_tool_choice_as_litellm_takes_it() -> None:
    assert Phase(name="a").tool_choice_param() is None
    assert Phase(name="a", tool_choice="required").tool_choice_param() == "required"

