"""The workflows that ship with agentcli."""

from __future__ import annotations

from agentcli.workflow.model import Phase, Workflow

SINGLE = Workflow(
    name="single",
    description="One phase with every tool: the agent plans, edits and verifies as it sees fit.",
    phases=[Phase(name="work", description="Do the task with every tool.")],
    initial="work",
)

BUILTIN_WORKFLOWS: dict[str, Workflow] = {SINGLE.name: SINGLE}


class UnknownWorkflowError(Exception):
    """No workflow has the requested name."""


def builtin_workflow(name: str) -> Workflow:
    try:
        return BUILTIN_WORKFLOWS[name]
    except KeyError:
        known = ", ".join(sorted(BUILTIN_WORKFLOWS))
        raise UnknownWorkflowError(f"unknown workflow '{name}'; known workflows: {known}") from None
