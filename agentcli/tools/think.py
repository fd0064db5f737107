"""The ``think`` tool: sequential thinking, one numbered thought per call, nothing changed.

Its result carries a :class:`~agentcli.events.ThoughtRecorded` event, which the session emits
so front ends show the thought; ``data`` holds the same fields.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator

from agentcli.events import ThoughtRecorded
from agentcli.tools.base import Arguments, Permission, Tool, ToolContext, ToolResult


class ThinkArgs(Arguments):
    thought: str = Field(min_length=1, description="This thinking step: an analysis, a hypothesis, a check of one.")
    thought_number: int = Field(ge=1, description="Its number in the sequence, from 1.")
    total_thoughts: int = Field(ge=1, description="How many thoughts you expect in all; adjust it as you go.")
    next_thought_needed: bool = Field(description="True when another thought should follow this one.")
    is_revision: bool = Field(False, description="True when this thought corrects an earlier one.")
    revises_thought: int | None = Field(None, ge=1, description="The number of the thought it corrects.")
    branch_from_thought: int | None = Field(
        None, ge=1, description="Start an alternative line of thought from this number."
    )
    branch_id: str | None = Field(
        None, min_length=1, description="A short name for that alternative, e.g. 'cache-in-memory'."
    )

    @model_validator(mode="after")
    def _consistent(self) -> ThinkArgs:
        if self.is_revision and self.revises_thought is None:
            raise ValueError("is_revision is true: give revises_thought, the number of the thought it corrects")
        if self.revises_thought is not None and self.revises_thought >= self.thought_number:
            raise ValueError(
                f"revises_thought ({self.revises_thought}) must be an earlier thought than "
                f"thought_number ({self.thought_number})")
        if (self.branch_id is None) != (self.branch_from_thought is None):
            raise ValueError("a branch needs both branch_from_thought and branch_id")
        if self.branch_from_thought is not None and self.branch_from_thought >= self.thought_number:
            raise ValueError(
                f"branch_from_thought ({self.branch_from_thought}) must be an earlier thought than "
                f"thought_number ({self.thought_number})")
        return self


class Think(Tool[ThinkArgs]):
    name = "think"
    description = (
        "Think step by step, one thought per call, before acting. Number the thoughts; revise an "
        "earlier one when you learn something (is_revision, revises_thought); branch to compare "
        "approaches (branch_from_thought, branch_id). Set next_thought_needed to false on the last. "
        "Nothing in the workspace changes."
    )
    arguments = ThinkArgs
    permission: ClassVar[Permission] = "internal"
    target = "thought"

    async def run(self, args: ThinkArgs, ctx: ToolContext) -> ToolResult:
        # As in the sequential-thinking tool this follows, running past the estimate raises it.
        total = max(args.total_thoughts, args.thought_number)
        revises = args.revises_thought
        label = f"Thought {args.thought_number} of {total}"
        if revises is not None:
            label += f" (revises thought {revises})"
        if args.branch_id is not None:
            label += f" on branch '{args.branch_id}' from thought {args.branch_from_thought}"
        follow = (
            f"Continue with thought {args.thought_number + 1}." if args.next_thought_needed
            else "Thinking done: act on it."
        )
        data = {
            "thought": args.thought,
            "number": args.thought_number,
            "total": total,
            "next_needed": args.next_thought_needed,
            "revises": revises,
            "branch": args.branch_id,
            "branch_from": args.branch_from_thought,
        }
        thought = ThoughtRecorded(call_id=ctx.call_id, thought=args.thought, number=args.thought_number, total=total,
                                  next_needed=args.next_thought_needed, revises=revises, branch=args.branch_id,
                                  branch_from=args.branch_from_thought)
        return ToolResult(ok=True, output=f"{label} recorded. {follow}", data=data, events=(thought,))
