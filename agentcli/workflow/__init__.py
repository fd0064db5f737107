"""Workflows: phases with their own tools, model role and instructions, as data."""

from agentcli.workflow.builtin import BUILTIN_WORKFLOWS, PLAN_BUILD, SINGLE, UnknownWorkflowError, builtin_workflow
from agentcli.workflow.loader import WorkflowCatalog, WorkflowEntry, find_workflow, load_workflows
from agentcli.workflow.model import (
    InvalidWorkflowError,
    Phase,
    Workflow,
    WorkflowProblem,
    WorkflowTransition,
    render_instructions,
)

__all__ = [
    "BUILTIN_WORKFLOWS",
    "PLAN_BUILD",
    "SINGLE",
    "InvalidWorkflowError",
    "Phase",
    "UnknownWorkflowError",
    "Workflow",
    "WorkflowCatalog",
    "WorkflowEntry",
    "WorkflowProblem",
    "WorkflowTransition",
    "builtin_workflow",
    "find_workflow",
    "load_workflows",
    "render_instructions",
]
