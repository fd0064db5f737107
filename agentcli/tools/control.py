"""The control tools that end a turn: complete, clarify, pause. The agent must end with one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from agentcli.tools.base import Arguments, Permission, Tool, ToolContext, ToolResult


class ControlTool(Tool[Any]):
    """A tool that ends the turn; it always runs, whatever the permission mode."""

    permission: ClassVar[Permission] = "control"

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        return cls.name.capitalize()


class CompleteArgs(Arguments):
    summary: str = Field(description="What was done and how it was verified.")


class Complete(ControlTool):
    name = "complete"
    description = "Finish the task. Call this once the work is done and verified, with a summary."
    arguments = CompleteArgs

    async def run(self, args: CompleteArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(ok=True, output="Task marked complete.", control="complete",
                          data={"summary": args.summary})


class ClarifyArgs(Arguments):
    question: str = Field(description="The question for the user.")
    options: list[str] | None = Field(None, description="Suggested answers the user can pick from.")


class Clarify(ControlTool):
    name = "clarify"
    description = (
        "Ask the user a question when the task is ambiguous or a decision is theirs. "
        "The run waits for the answer."
    )
    arguments = ClarifyArgs

    async def run(self, args: ClarifyArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(
            ok=True,
            output="Question sent to the user; waiting for the answer.",
            control="clarify",
            data={"question": args.question, "options": list(args.options or [])},
        )


class PauseArgs(Arguments):
    reason: str = Field(description="Why the work stops here and what is needed to go on.")


class Pause(ControlTool):
    name = "pause"
    description = "Stop and hand control back to the user, e.g. when blocked or needing review."
    arguments = PauseArgs

    async def run(self, args: PauseArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(ok=True, output="Paused.", control="pause", data={"reason": args.reason})


CONTROL_TOOLS = frozenset(tool.name for tool in (Complete, Clarify, Pause))
"""The tools that end a turn; every phase offers them."""
