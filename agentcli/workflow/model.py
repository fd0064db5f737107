"""The workflow data model: phases, the transitions between them, initial and terminal phases.

A workflow is data (seed 004). It is checked in three layers, each naming the field at fault:

- **structure**, whenever a :class:`Workflow` is built: names, references, nesting, triggers that
  can actually fire, reachability. A workflow that fails here cannot be compiled into a chart, so
  these are errors (raised as :class:`InvalidWorkflowError` inside pydantic's ``ValidationError``).
- **tools**, with :meth:`Workflow.tool_problems`: which tools exist depends on the registry a
  session builds, so the caller passes the known names.
- **warnings**, with :meth:`Workflow.warnings`: things that run but are probably not meant
  (an unknown ``{placeholder}``, a forced tool that never leaves its phase).

Unreachable phases are errors, not warnings: a phase no transition leads to never runs, which is
almost always a forgotten or misspelt transition, and a warning is easy to scroll past.

Over 400 lines because the models and their structural checks belong together: pydantic runs
the checks as the models are built, and each check names the field it reads.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date as Date
from difflib import get_close_matches
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# The control tools end the turn, so every phase offers them and none triggers a transition. The
# tools layer declares them and imports nothing of the workflow's: no cycle.
from agentcli.tools.control import CONTROL_TOOLS

ALL_TOOLS = "*"
RESEARCH_TOOLS = "@research"
"""In a phase's tools: the MCP tools the user marked as research tools (``research = true``)."""
MCP_PREFIX = "mcp__"
"""MCP tools (``mcp__SERVER__TOOL``, or patterns such as ``mcp__docs__*``) are known only once
their servers start, so a workflow may name them without the check against the registry."""
"""In a phase's ``tools``: offer every registered tool."""


CHECKS_TOOL = "run_checks"
"""The tool whose result sends ``checks_passed`` or ``checks_failed``."""

FINISH_PHASE_TOOL = "finish_phase"
"""The generic "this phase's work is done" tool that workflows use as a trigger."""

MODEL_ROLES = ("default", "plan", "build", "explore")
"""Model roles resolved through ``[models]`` in the config; anything else is a litellm model string."""

PLACEHOLDERS = ("date", "workspace", "workspace_summary", "plan")
"""What ``{name}`` in a phase's instructions is replaced with, request by request."""

NO_PLAN = "(no plan yet)"
NO_SUMMARY = "(no workspace summary)"

_PHASE_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
_WORKFLOW_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class WorkflowProblem:
    """One thing wrong with a workflow, located by field (``phases[2].tool_choice``)."""

    field: str
    """Where: a dotted path with list indexes from 0, or ``""`` for the file as a whole."""
    message: str
    """What is wrong and what to do about it."""
    file: str | None = None
    """The workflow file, when the workflow came from one."""

    def __str__(self) -> str:
        where = f"{self.file}: " if self.file else ""
        return f"{where}{self.field}: {self.message}" if self.field else f"{where}{self.message}"


class InvalidWorkflowError(ValueError):
    """A workflow that cannot run; ``problems`` says every field at fault, not only the first."""

    def __init__(self, problems: list[WorkflowProblem], *, name: str | None = None) -> None:
        self.problems = list(problems)
        self.name = name
        head = f"workflow '{name}' is invalid:\n" if name else ""
        super().__init__(head + "\n".join(f"  {p}" if head else str(p) for p in self.problems))


def _did_you_mean(value: str, choices: Collection[str]) -> str:
    close = get_close_matches(value, sorted(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Phase(BaseModel):
    """One phase of a workflow: what the model is told, which tools it gets, which model runs it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """Dotted names nest: ``plan.design`` is the ``design`` state inside ``plan``."""
    description: str = ""
    """One line for listings and the chart drawing."""
    instructions: str = ""
    """Told to the model in this phase. ``{date}``, ``{workspace}``, ``{workspace_summary}`` and
    ``{plan}`` are filled in for every request."""
    tools: list[str] = Field(default_factory=lambda: [ALL_TOOLS])
    """Tool names offered in this phase; ``"*"`` offers every tool. Control tools are always added."""
    tool_choice: str = "auto"
    """``auto``, ``required`` (some tool must be called), or a tool name the model must call."""
    model: str = "default"
    """A role (``default``, ``plan``, ``build``, ``explore``) or a litellm model string."""
    max_steps: int | None = Field(None, ge=1)
    """Safety limit on model calls in one visit of this phase; unset means only the turn's limit."""

    @field_validator("name")
    @classmethod
    def _dotted_name(cls, value: str) -> str:
        if not _PHASE_NAME.match(value):
            raise ValueError(
                f"'{value}' is not a phase name: use lowercase words (letters, digits, _) "
                "joined by dots, e.g. 'plan.design'"
            )
        return value

    @field_validator("tools")
    @classmethod
    def _no_repeats(cls, value: list[str]) -> list[str]:
        seen: set[str] = set()
        for tool in value:
            if tool in seen:
                raise ValueError(f"'{tool}' is listed twice")
            seen.add(tool)
        return value

    @field_validator("tool_choice", "model")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    @property
    def offers_all_tools(self) -> bool:
        return ALL_TOOLS in self.tools

    def offers(self, tool: str) -> bool:
        """Whether the model can call ``tool`` in this phase (control tools always)."""
        return self.offers_all_tools or tool in self.tools or tool in CONTROL_TOOLS

    @property
    def forced_tool(self) -> str | None:
        """The tool named by ``tool_choice``, or None for ``auto``/``required``."""
        return None if self.tool_choice in ("auto", "required") else self.tool_choice

    def tool_choice_param(self) -> str | dict[str, Any] | None:
        """``tool_choice`` as litellm takes it: None for auto, ``"required"``, or a function object.

        litellm (like the OpenAI API) does not accept a bare tool name: a forced tool is
        ``{"type": "function", "function": {"name": ...}}``.
        """
        if self.tool_choice == "auto":
            return None
        if self.tool_choice == "required":
            return "required"
        return {"type": "function", "function": {"name": self.tool_choice}}


class WorkflowTransition(BaseModel):
    """Move between phases when a tool is called or a check result arrives."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    source: str = Field(alias="from")
    """The phase the transition leaves (written ``from`` in files)."""
    target: str = Field(alias="to")
    """The phase it enters (written ``to`` in files)."""
    tool: str | None = None
    """The transition fires after a successful call of this tool."""
    checks: Literal["passed", "failed"] | None = None
    """The transition fires when ``run_checks`` reports this result."""

    @model_validator(mode="after")
    def _one_trigger(self) -> WorkflowTransition:
        if self.tool is None and self.checks is None:
            raise ValueError(
                "a transition needs a trigger: tool = \"<tool name>\" or checks = \"passed\" / \"failed\""
            )
        if self.tool is not None and self.checks is not None:
            raise ValueError("a transition has one trigger: give 'tool' or 'checks', not both")
        return self

    @property
    def event(self) -> str:
        """The chart event that fires it (as ``agentcli.session.chart`` compiles it)."""
        return f"called_{self.tool}" if self.tool else f"checks_{self.checks}"

    @property
    def trigger(self) -> str:
        """The trigger in words: ``create_plan called`` or ``checks passed``."""
        return f"{self.tool} called" if self.tool else f"checks {self.checks}"


class Workflow(BaseModel):
    """A whole workflow, compiled into the chart's phase region."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """Lowercase letters, digits, ``-`` and ``_``; a workflow file's name is its file name."""
    description: str = ""
    phases: list[Phase] = Field(min_length=1)
    transitions: list[WorkflowTransition] = Field(default_factory=list)
    initial: str
    """The phase a task starts in; the first phase when left out of a file."""
    terminal: list[str] = Field(default_factory=list)
    """Phases that end the workflow; a new task afterwards starts again at ``initial``."""

    @model_validator(mode="before")
    @classmethod
    def _initial_defaults_to_first_phase(cls, data: Any) -> Any:
        if isinstance(data, dict) and "initial" not in data:
            phases = data.get("phases")
            if isinstance(phases, list) and phases:
                first = phases[0]
                name = first.get("name") if isinstance(first, dict) else getattr(first, "name", None)
                if isinstance(name, str):
                    data = {**data, "initial": name}
        return data

    @field_validator("name")
    @classmethod
    def _workflow_name(cls, value: str) -> str:
        if not _WORKFLOW_NAME.match(value):
            raise ValueError(
                f"'{value}' is not a workflow name: use lowercase letters, digits, '-' and '_', e.g. 'plan-build'"
            )
        return value

    @model_validator(mode="after")
    def _structure_is_sound(self) -> Workflow:
        problems = self.structure_problems()
        if problems:
            raise InvalidWorkflowError(problems)
        return self

    # -- lookups -------------------------------------------------------------------------------

    def phase(self, name: str) -> Phase:
        for phase in self.phases:
            if phase.name == name:
                return phase
        raise KeyError(name)

    @property
    def phase_names(self) -> list[str]:
        return [phase.name for phase in self.phases]

    def transitions_from(self, name: str) -> list[WorkflowTransition]:
        return [t for t in self.transitions if t.source == name]

    def is_terminal(self, name: str) -> bool:
        return name in self.terminal

    # -- validation ----------------------------------------------------------------------------

    def structure_problems(self) -> list[WorkflowProblem]:
        """Everything that keeps the workflow from compiling or running as written."""
        problems: list[WorkflowProblem] = []
        names = self.phase_names
        index = {name: i for i, name in reversed(list(enumerate(names)))}
        groups = {".".join(n.split(".")[:depth]) for n in names for depth in range(1, n.count(".") + 1)}

        for i, name in enumerate(names):
            if index[name] != i:
                problems.append(WorkflowProblem(
                    f"phases[{i}].name", f"phase '{name}' is already defined as phases[{index[name]}]"))
            if name in groups:
                children = ", ".join(n for n in names if n.startswith(name + "."))
                problems.append(WorkflowProblem(
                    f"phases[{i}].name",
                    f"'{name}' is a phase and also the group of {children}; a group cannot be a phase "
                    f"itself: rename the phase (e.g. '{name}.start') or its children"))

        def unknown(ref: str) -> str | None:
            if ref in index:
                return None
            if ref in groups:
                members = ", ".join(n for n in names if n.startswith(ref + "."))
                return f"'{ref}' is a group of phases ({members}), not a phase; name one of them"
            return f"phase '{ref}' is not defined{_did_you_mean(ref, index)}; phases are: {', '.join(names)}"

        references_ok = True
        for field, ref in [("initial", self.initial), *((f"terminal[{k}]", t) for k, t in enumerate(self.terminal))]:
            if (message := unknown(ref)) is not None:
                problems.append(WorkflowProblem(field, message))
                references_ok = False
        if self.initial in self.terminal:
            problems.append(WorkflowProblem(
                "initial",
                f"the initial phase '{self.initial}' is also terminal, so the workflow would end before it starts"))

        seen_triggers: dict[tuple[str, str], int] = {}
        for k, transition in enumerate(self.transitions):
            where = f"transitions[{k}]"
            for key, ref in (("from", transition.source), ("to", transition.target)):
                if (message := unknown(ref)) is not None:
                    problems.append(WorkflowProblem(f"{where}.{key}", message))
                    references_ok = False
            if transition.source not in index:
                continue
            source = self.phase(transition.source)
            if self.is_terminal(source.name):
                problems.append(WorkflowProblem(
                    f"{where}.from",
                    f"'{source.name}' is terminal: a terminal phase ends the workflow and has no transitions "
                    f"out (a new task restarts at '{self.initial}'); remove this transition or take "
                    f"'{source.name}' out of terminal"))
            if transition.tool is not None:
                if transition.tool in CONTROL_TOOLS:
                    problems.append(WorkflowProblem(
                        f"{where}.tool",
                        f"'{transition.tool}' is a control tool: it ends the turn and never triggers a "
                        f"transition; use another tool (e.g. {FINISH_PHASE_TOOL})"))
                elif not source.offers(transition.tool):
                    problems.append(WorkflowProblem(
                        f"{where}.tool",
                        f"phase '{source.name}' does not offer '{transition.tool}', so this transition can "
                        f"never fire; add '{transition.tool}' to that phase's tools"))
            elif not source.offers(CHECKS_TOOL):
                problems.append(WorkflowProblem(
                    f"{where}.checks",
                    f"phase '{source.name}' does not offer '{CHECKS_TOOL}', so no check result can arrive "
                    f"there and this transition can never fire; add '{CHECKS_TOOL}' to that phase's tools"))
            trigger_key = (transition.source, transition.event)
            if trigger_key in seen_triggers:
                problems.append(WorkflowProblem(
                    where,
                    f"transitions[{seen_triggers[trigger_key]}] already leaves '{transition.source}' on "
                    f"'{transition.trigger}'; one trigger can lead to one phase only: keep one of them"))
            else:
                seen_triggers[trigger_key] = k

        for i, phase in enumerate(self.phases):
            forced = phase.forced_tool
            if forced is not None and not phase.offers(forced):
                problems.append(WorkflowProblem(
                    f"phases[{i}].tool_choice",
                    f"phase '{phase.name}' forces '{forced}', which is not among its tools "
                    f"({', '.join(phase.tools) or 'none'}); add it to tools, or use 'auto' or 'required'"))

        if references_ok:
            reachable = self._reachable()
            for i, name in enumerate(names):
                if name not in reachable:
                    problems.append(WorkflowProblem(
                        f"phases[{i}]",
                        f"phase '{name}' can never be reached: no transition from the initial phase "
                        f"'{self.initial}' leads to it; add a transition to it or remove it"))
        return problems

    def _reachable(self) -> set[str]:
        seen = {self.initial}
        queue = deque([self.initial])
        while queue:
            for transition in self.transitions_from(queue.popleft()):
                if transition.target not in seen:
                    seen.add(transition.target)
                    queue.append(transition.target)
        return seen

    def tool_problems(self, known: Collection[str]) -> list[WorkflowProblem]:
        """Tool names the registry does not have (control tools are always known)."""
        known_set = set(known) | CONTROL_TOOLS
        listing = ", ".join(sorted(known_set))
        problems: list[WorkflowProblem] = []

        def check(field: str, tool: str, subject: str) -> None:
            if tool not in (ALL_TOOLS, RESEARCH_TOOLS) and tool not in known_set and not tool.startswith(MCP_PREFIX):
                problems.append(WorkflowProblem(
                    field,
                    f"{subject}: '{tool}' is not a known tool{_did_you_mean(tool, known_set)}; known tools: {listing}"))

        for i, phase in enumerate(self.phases):
            for j, tool in enumerate(phase.tools):
                check(f"phases[{i}].tools[{j}]", tool, f"phase '{phase.name}'")
            forced = phase.forced_tool
            if forced is not None and forced not in phase.tools:  # a listed tool is checked above
                check(f"phases[{i}].tool_choice", forced, f"phase '{phase.name}'")
        for k, transition in enumerate(self.transitions):
            # The structure check made sure the source phase offers the trigger; only a phase
            # offering "*" does so without naming it, so only then is the name checked here.
            if transition.tool is not None and self.phase(transition.source).offers_all_tools:
                check(f"transitions[{k}].tool", transition.tool, "trigger")
        return problems

    def validate_tools(self, known: Collection[str]) -> None:
        """Raise :class:`InvalidWorkflowError` when a phase or transition names an unknown tool."""
        problems = self.tool_problems(known)
        if problems:
            raise InvalidWorkflowError(problems, name=self.name)

    def warnings(self) -> list[WorkflowProblem]:
        """Things that run but are probably not what the author meant."""
        found: list[WorkflowProblem] = []
        for i, phase in enumerate(self.phases):
            for placeholder in dict.fromkeys(_PLACEHOLDER.findall(phase.instructions)):
                if placeholder not in PLACEHOLDERS:
                    found.append(WorkflowProblem(
                        f"phases[{i}].instructions",
                        f"'{{{placeholder}}}' is not a placeholder{_did_you_mean(placeholder, set(PLACEHOLDERS))} "
                        f"and is left as written; placeholders are "
                        + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)))
            if phase.model not in MODEL_ROLES and "/" not in phase.model:
                close = get_close_matches(phase.model, MODEL_ROLES, n=1)
                if close:
                    found.append(WorkflowProblem(
                        f"phases[{i}].model",
                        f"'{phase.model}' is not a model role (did you mean '{close[0]}'?); it will be "
                        "passed to litellm as a model name"))
            leaving = {t.tool for t in self.transitions_from(phase.name) if t.tool}
            if any(t.checks for t in self.transitions_from(phase.name)):
                leaving.add(CHECKS_TOOL)
            forced = phase.forced_tool
            if forced is not None and forced not in CONTROL_TOOLS and forced not in leaving:
                found.append(WorkflowProblem(
                    f"phases[{i}].tool_choice",
                    f"phase '{phase.name}' forces '{forced}' on every request and no transition leaves on "
                    "it, so the phase only ends at its step limit"))
            if FINISH_PHASE_TOOL in phase.tools and FINISH_PHASE_TOOL not in leaving:
                found.append(WorkflowProblem(
                    f"phases[{i}].tools",
                    f"phase '{phase.name}' offers '{FINISH_PHASE_TOOL}' but no transition leaves it on "
                    f"'{FINISH_PHASE_TOOL}', so calling it changes nothing"))
        return found


def render_instructions(
    phase: Phase,
    *,
    date: Date | str,
    workspace: Path | str,
    workspace_summary: str = "",
    plan_text: str = "",
) -> str:
    """A phase's instructions with its placeholders filled in.

    Only the known placeholders are replaced, so other braces (a JSON example, ``{x}`` in code)
    pass through unchanged: ``str.format`` would raise on them.

    Args:
        phase: The active phase.
        date: Today, as a date or already formatted.
        workspace: The workspace path.
        workspace_summary: A short description of the workspace (layout, languages).
        plan_text: The current plan as text (see ``agentcli.tools.workflow_tools.format_plan``).

    Returns:
        The text to put in the system prompt; empty when the phase has no instructions.
    """
    values = {
        "date": date.isoformat() if isinstance(date, Date) else str(date),
        "workspace": str(workspace),
        "workspace_summary": workspace_summary.strip() or NO_SUMMARY,
        "plan": plan_text.strip() or NO_PLAN,
    }
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), phase.instructions)
