"""The tools workflows are made of, and the set a session's workflow offers.

``think`` (``tools/think.py``), ``create_plan`` and ``update_plan`` (``tools/plan.py``),
``run_checks`` (``tools/run_checks.py``) and ``finish_phase`` (here). None of them ends a turn
(that is the control tools' job) and none changes the workspace's files. ``explore`` needs a
child session, so only its arguments are defined here (:class:`ExploreArgs`); the session layer
implements the tool.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from agentcli.config import CheckSettings
from agentcli.tools.base import Arguments, Permission, Tool, ToolContext, ToolResult
from agentcli.tools.plan import CreatePlan, CreatePlanArgs, PlanStore, UpdatePlan, UpdatePlanArgs, format_plan
from agentcli.tools.run_checks import RunChecks, RunChecksArgs
from agentcli.tools.think import Think, ThinkArgs

WORKFLOW_TOOL_NAMES = ("think", "create_plan", "update_plan", "run_checks", "finish_phase", "explore")
"""Every tool name the built-in workflows use beyond the core tools (``explore`` included)."""


class FinishPhaseArgs(Arguments):
    summary: str = Field(
        min_length=1, description="What this phase found or did, for the next phase to build on."
    )


class FinishPhase(Tool[FinishPhaseArgs]):
    name = "finish_phase"
    description = (
        "Say this phase's work is done, with a summary. The workflow moves to its next phase, "
        "whose instructions and tools apply from your next step."
    )
    arguments = FinishPhaseArgs
    permission: ClassVar[Permission] = "internal"
    target = "summary"

    async def run(self, args: FinishPhaseArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(
            ok=True,
            output="Phase finished. Follow the next phase's instructions from here.",
            data={"summary": args.summary},
        )


class ExploreArgs(Arguments):
    task: str = Field(
        min_length=1,
        description=(
            "A precise question about the codebase for a helper with read-only tools, e.g. "
            "'Where is the retry policy for HTTP calls defined, and what calls it?'"
        ),
    )


def workflow_tools(plan: PlanStore, checks: CheckSettings | None = None) -> list[Tool[Any]]:
    """The workflow tools for one session (``explore`` excluded: the session layer builds it).

    Args:
        plan: The session's plan, shared with the session that renders ``{plan}``.
        checks: The ``[checks]`` settings; defaults detect the commands with a 600 s timeout.
    """
    run_checks = RunChecks.from_settings(checks) if checks is not None else RunChecks()
    return [Think(), CreatePlan(plan), UpdatePlan(plan), run_checks, FinishPhase()]


__all__ = [
    "WORKFLOW_TOOL_NAMES",
    "CreatePlan",
    "CreatePlanArgs",
    "ExploreArgs",
    "FinishPhase",
    "FinishPhaseArgs",
    "PlanStore",
    "RunChecks",
    "RunChecksArgs",
    "Think",
    "ThinkArgs",
    "UpdatePlan",
    "UpdatePlanArgs",
    "format_plan",
    "workflow_tools",
]
