"""The explore subagent: a child session with read-only tools whose summary is the tool result.

The child runs the ``explore`` model role with its own small step limit; its events reach the
parent's subscribers wrapped in :class:`~agentcli.events.SubagentEvent` under the parent's call,
so front ends can nest them and the parent's log keeps them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentcli.events import Event, SubagentEvent, ToolCallFinished
from agentcli.tools.base import Tool, ToolContext, ToolResult
from agentcli.tools.workflow_tools import ExploreArgs
from agentcli.workflow.model import Phase, Workflow

if TYPE_CHECKING:
    from agentcli.session.session import Session

EXPLORE_MAX_STEPS = 25

EXPLORE_WORKFLOW = Workflow(
    name="explore",
    description="A read-only investigation for another agent.",
    phases=[
        Phase(
            name="explore",
            description="Investigate the workspace read-only and report.",
            instructions=(
                "You are an explore subagent working for another agent. Investigate the task with the "
                "read-only tools only; you cannot change anything. When you know the answer, call "
                "complete with a concise, factual summary: the files and symbols that matter (with "
                "paths and line numbers), how they connect, and anything surprising. If the task "
                "cannot be answered from the workspace, say so in the summary."
            ),
            tools=["read_file", "list_files", "glob", "grep"],
            model="explore",
        )
    ],
    initial="explore",
)


class Explore(Tool[ExploreArgs]):
    """Runs a child session; the parent's Session gives it the way to make one."""

    name = "explore"
    description = (
        "Delegate a read-only investigation (where is X defined, how does Y work) to a subagent "
        "with read, list, glob and grep. Returns its summary."
    )
    arguments = ExploreArgs
    permission = "read"
    target = "task"

    def __init__(self, make_child: Callable[[], Session], forward: Callable[[Event], None]) -> None:
        self._make_child = make_child
        self._forward = forward

    async def run(self, args: ExploreArgs, ctx: ToolContext) -> ToolResult:
        child = self._make_child()
        call_id = ctx.call_id
        finished: list[ToolCallFinished] = []

        def relay(event: Event) -> None:
            if isinstance(event, ToolCallFinished):
                finished.append(event)
            self._forward(SubagentEvent(call_id=call_id, event=event))

        child.subscribe(relay)
        try:
            ended = await child.run_turn(args.task)
        except asyncio.CancelledError:
            await child.pause("the parent run was paused")
            raise
        if ended.outcome == "completed":
            return ToolResult(ok=True, output=ended.reason or "(the subagent gave no summary)")
        seen = [f"{e.name}: {e.output[:200]}" for e in finished]
        detail = "\n".join(seen[-5:])
        return ToolResult.failure(f"the explore subagent ended without a summary ({ended.outcome}: {ended.reason})"
                                  + (f"\nLast results:\n{detail}" if detail else ""))
