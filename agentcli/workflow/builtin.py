"""The workflows that ship with agentcli: ``single`` and ``plan-build``.

``plan-build`` follows seed 000's hierarchy and tool-access matrix. Every move between phases is
triggered by something the model visibly does, never by words in its reply:

=================  ======================  =================
from               trigger                 to
=================  ======================  =================
plan.analyze       ``finish_phase``        plan.research
plan.research      ``finish_phase``        plan.design
plan.design        ``create_plan``         build.implement
build.implement    ``finish_phase``        build.validate
build.validate     checks passed           done
build.validate     checks failed           build.implement
=================  ======================  =================

``finish_phase(summary)`` is one generic tool rather than one per phase (``finish_analysis``,
``request_validation``…): the model learns a single "I am done here" gesture, its summary stays in
the conversation for the next phase, and user workflows can reuse it. The alternatives were
rejected: ending analyze when ``explore`` returns cuts off a second exploration; ending research
on ``think(next_thought_needed=false)`` needs a guard on arguments, which the chart does not have.

``build.validate`` forces ``run_checks`` (``tool_choice``), and both check results leave the phase,
so entering validate always runs the checks exactly once: the model cannot call ``complete``
there without them. ``done`` offers only the control tools and requires a call, so the agent ends
with ``complete`` and a summary.

The step limits are seed 000's safety nets, per visit of a phase: analyze 5, research 100,
design 100, implement 50, validate 100.
"""

from __future__ import annotations

from agentcli.workflow.model import (
    CHECKS_TOOL,
    FINISH_PHASE_TOOL,
    RESEARCH_TOOLS,
    Phase,
    Workflow,
    WorkflowTransition,
)

READ_ONLY_TOOLS = ["read_file", "list_files", "glob", "grep"]
"""Tools that look at the workspace without changing it."""

WRITE_TOOLS = ["write_file", "edit_file", "bash"]

SINGLE = Workflow(
    name="single",
    description="One phase with every tool: the agent plans, edits and verifies as it sees fit.",
    phases=[Phase(name="work", description="Do the task with every tool.")],
    initial="work",
)

_ANALYZE = """\
You are planning, not building: no tool in this phase can change a file.
Goal of this phase: understand what the user asks for and which code it touches.

Workspace ({workspace}):
{workspace_summary}

- Hand broad questions to explore(task): a helper with read-only tools searches the code and
  returns a summary. Ask it something precise ("where are HTTP retries configured, and who calls
  that code?").
- Read the few files that matter yourself with read_file, grep, glob and list_files.
- This phase allows 5 steps. As soon as you know where the change belongs, call
  finish_phase(summary) with what you found: the relevant files, how they fit together, and the
  open questions. Research comes next."""

_RESEARCH = """\
You are planning, not building: no tool in this phase can change a file.
Goal of this phase: decide how to make the change well.

- Reason with think(...), one thought per call: number them, revise an earlier thought
  (is_revision, revises_thought) when you learn something, and branch (branch_from_thought,
  branch_id) to compare approaches.
- Confirm every assumption in the code with read_file and grep rather than guessing.
- Research tools from MCP servers (web pages, documentation), when offered, answer what the code
  cannot: library APIs, error messages, versions.
- If only the user can decide something, ask with clarify.
- When the approach is settled, call finish_phase(summary) with the approach, the alternatives
  you rejected and why, and the risks. Design comes next."""

_DESIGN = """\
You are planning, not building: no tool in this phase can change a file.
Goal of this phase: turn the chosen approach into a plan someone else could follow.

- Use think(...) to order the work and check it against the code.
- Then call create_plan(steps) with small, ordered steps. Each step has a title (what to do, in
  which file) and acceptance (how you will know it is done: a test that passes, a command's output).
  Every step should leave the code working.
- Creating the plan ends planning: the build starts with it."""

_IMPLEMENT = """\
Goal of this phase: carry out the plan.

Plan:
{plan}

- Work on the first step that is not done. Read before you edit; keep edits small and exact.
- Run the relevant tests with bash as you go, and read failures to fix their cause.
- When a step meets its acceptance, tick it off with update_plan(step=<number>).
- When every step is done, call finish_phase(summary) with what you changed: the project's checks
  run next. If you are here because checks failed, their output is above: fix the causes, then
  call finish_phase again."""

_VALIDATE = """\
Goal of this phase: run the project's checks with run_checks.

Plan:
{plan}

Passing checks finish the task; failing checks send you back to implement with their output."""

_DONE = """\
The checks passed. Call complete(summary) with what you changed, how it was verified, and anything
the user should review. If a plan step could not be done, say so."""

PLAN_BUILD = Workflow(
    name="plan-build",
    description=(
        "Plan read-only (analyze, research, design), then implement and validate until the checks pass."
    ),
    phases=[
        Phase(
            name="plan.analyze",
            description="Understand the request and the code it touches; explore delegates searches.",
            instructions=_ANALYZE,
            tools=[*READ_ONLY_TOOLS, "explore", FINISH_PHASE_TOOL],
            model="plan",
            max_steps=5,
        ),
        Phase(
            name="plan.research",
            description="Choose an approach, reasoning step by step with think.",
            instructions=_RESEARCH,
            tools=[*READ_ONLY_TOOLS, "think", RESEARCH_TOOLS, FINISH_PHASE_TOOL],
            model="plan",
            max_steps=100,
        ),
        Phase(
            name="plan.design",
            description="Write the plan: ordered steps with acceptance notes.",
            instructions=_DESIGN,
            tools=[*READ_ONLY_TOOLS, "think", "create_plan"],
            model="plan",
            max_steps=100,
        ),
        Phase(
            name="build.implement",
            description="Carry out the plan step by step, ticking steps off.",
            instructions=_IMPLEMENT,
            tools=[*READ_ONLY_TOOLS, *WRITE_TOOLS, "update_plan", FINISH_PHASE_TOOL],
            model="build",
            max_steps=50,
        ),
        Phase(
            name="build.validate",
            description="Run the project's checks; their exit codes decide.",
            instructions=_VALIDATE,
            tools=[*READ_ONLY_TOOLS, CHECKS_TOOL],
            tool_choice=CHECKS_TOOL,
            model="build",
            max_steps=100,
        ),
        Phase(
            name="done",
            description="Checks passed: summarize and complete.",
            instructions=_DONE,
            tools=[],
            tool_choice="required",
            model="build",
        ),
    ],
    transitions=[
        WorkflowTransition(source="plan.analyze", target="plan.research", tool=FINISH_PHASE_TOOL),
        WorkflowTransition(source="plan.research", target="plan.design", tool=FINISH_PHASE_TOOL),
        WorkflowTransition(source="plan.design", target="build.implement", tool="create_plan"),
        WorkflowTransition(source="build.implement", target="build.validate", tool=FINISH_PHASE_TOOL),
        WorkflowTransition(source="build.validate", target="done", checks="passed"),
        WorkflowTransition(source="build.validate", target="build.implement", checks="failed"),
    ],
    initial="plan.analyze",
    terminal=["done"],
)

BUILTIN_WORKFLOWS: dict[str, Workflow] = {SINGLE.name: SINGLE, PLAN_BUILD.name: PLAN_BUILD}


class UnknownWorkflowError(Exception):
    """No workflow has the requested name."""


def builtin_workflow(name: str) -> Workflow:
    try:
        return BUILTIN_WORKFLOWS[name]
    except KeyError:
        known = ", ".join(sorted(BUILTIN_WORKFLOWS))
        raise UnknownWorkflowError(f"unknown workflow '{name}'; known workflows: {known}") from None
