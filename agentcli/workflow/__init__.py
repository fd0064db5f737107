"""Workflows: phases with their own tools, model role and instructions, as data."""

from agentcli.workflow.model import Phase, Workflow, WorkflowTransition
from agentcli.workflow.builtin import BUILTIN_WORKFLOWS, builtin_workflow

__all__ = ["Phase", "Workflow", "WorkflowTransition", "BUILTIN_WORKFLOWS", "builtin_workflow"]
