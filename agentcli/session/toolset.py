"""Which tools a session offers: the core tools, plus the workflow tools its workflow names."""

from __future__ import annotations

from typing import Any

from agentcli.config import Settings
from agentcli.tools.base import Tool
from agentcli.tools.registry import ToolRegistry, default_registry
from agentcli.tools.workflow_tools import PlanStore, workflow_tools
from agentcli.workflow.model import Workflow


def named_tools(workflow: Workflow) -> set[str]:
    return {name for phase in workflow.phases for name in phase.tools}


def build_registry(workflow: Workflow, settings: Settings, plan: PlanStore, explore: Tool[Any] | None) -> ToolRegistry:
    """Core tools always; a workflow tool only where a phase names it (``single`` offers none).

    ``"*"`` in a phase means every tool of the session, so naming ``think`` in one phase of a
    custom workflow also offers it to that workflow's ``"*"`` phases.
    """
    wanted = named_tools(workflow)
    extra = [tool for tool in workflow_tools(plan, settings.checks) if tool.name in wanted]
    if explore is not None and "explore" in wanted:
        extra.append(explore)
    return ToolRegistry([*(default_registry()[name] for name in default_registry().names), *extra])
