"""The workflow data model: phases, the transitions between them, initial and terminal phases."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ALL_TOOLS = "*"


class Phase(BaseModel):
    """One phase of a workflow: what the model is told, which tools it gets, which model runs it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
    """Dotted names nest: ``plan.design`` is the ``design`` state inside ``plan``."""
    description: str = ""
    instructions: str = ""
    tools: list[str] = Field(default_factory=lambda: [ALL_TOOLS])
    """Tool names offered in this phase; ``"*"`` offers every tool. Control tools are always added."""
    tool_choice: str = "auto"
    """``auto``, ``required``, or a tool name the model must call."""
    model: str = "default"
    """A role (``default``, ``plan``, ``build``, ``explore``) or a litellm model string."""
    max_steps: int | None = Field(None, ge=1)


class WorkflowTransition(BaseModel):
    """Move between phases when a tool is called or a check result arrives."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: str = Field(alias="from")
    target: str = Field(alias="to")
    tool: str | None = None
    """The transition fires after a successful call of this tool."""
    checks: Literal["passed", "failed"] | None = None

    @model_validator(mode="after")
    def _one_trigger(self) -> WorkflowTransition:
        if (self.tool is None) == (self.checks is None):
            raise ValueError("a transition needs exactly one trigger: 'tool' or 'checks'")
        return self


class Workflow(BaseModel):
    """A whole workflow, compiled into the chart's phase region."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    phases: list[Phase]
    transitions: list[WorkflowTransition] = Field(default_factory=list)
    initial: str
    terminal: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_exist(self) -> Workflow:
        names = {phase.name for phase in self.phases}
        if len(names) != len(self.phases):
            raise ValueError("phase names must be unique")
        for ref, where in [(self.initial, "initial"), *((t, "terminal") for t in self.terminal)]:
            if ref not in names:
                raise ValueError(f"{where} phase '{ref}' is not defined")
        for transition in self.transitions:
            for ref in (transition.source, transition.target):
                if ref not in names:
                    raise ValueError(f"transition refers to undefined phase '{ref}'")
        return self

    def phase(self, name: str) -> Phase:
        for phase in self.phases:
            if phase.name == name:
                return phase
        raise KeyError(name)
