"""The plan tools: ``create_plan`` records ordered steps with their acceptance, ``update_plan``
ticks them off.

The plan lives in a :class:`PlanStore` the two tools share with the session, which reads
:meth:`PlanStore.text` into the build phases' ``{plan}``. Each result carries a
:class:`~agentcli.events.PlanUpdated` event with the whole plan.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import Field, model_validator

from agentcli.events import PlanStep, PlanUpdated
from agentcli.tools.base import Arguments, Permission, Tool, ToolContext, ToolError, ToolResult


def format_plan(steps: Sequence[PlanStep]) -> str:
    """The plan as the model reads it in ``{plan}``: a numbered checklist; ``""`` when empty."""
    lines = []
    for number, step in enumerate(steps, start=1):
        line = f"{number}. [{'x' if step.done else ' '}] {step.title}"
        if step.acceptance:
            line += f" (done when: {step.acceptance})"
        lines.append(line)
    return "\n".join(lines)


class PlanStore:
    """A session's plan: ``create_plan`` writes it, ``update_plan`` ticks it off, prompts read it."""

    def __init__(self, steps: Iterable[PlanStep] = ()) -> None:
        self._steps: list[PlanStep] = list(steps)

    @property
    def empty(self) -> bool:
        """No plan yet. (Deliberately not ``__bool__``: ``store or PlanStore()`` would then
        silently swap an empty shared store for a new one.)"""
        return not self._steps

    @property
    def steps(self) -> list[PlanStep]:
        """A copy, in order."""
        return list(self._steps)

    def replace(self, steps: Iterable[PlanStep]) -> None:
        """Set the whole plan (``create_plan``, or a resumed session replaying ``PlanUpdated``)."""
        self._steps = list(steps)

    def mark(self, number: int, done: bool = True) -> PlanStep:
        """Tick step ``number`` (from 1) done or not done.

        Raises:
            ToolError: there is no plan, or no such step.
        """
        if not self._steps:
            raise ToolError("there is no plan yet; create one with create_plan first")
        if not 1 <= number <= len(self._steps):
            raise ToolError(f"there is no step {number}: the plan has steps 1 to {len(self._steps)}")
        step = dataclasses.replace(self._steps[number - 1], done=done)
        self._steps[number - 1] = step
        return step

    def text(self) -> str:
        return format_plan(self._steps)

    def as_data(self) -> list[dict[str, Any]]:
        return [dataclasses.asdict(step) for step in self._steps]


class PlanStepArgs(Arguments):
    title: str = Field(min_length=1, description="What to do, concretely: which change in which file.")
    acceptance: str = Field(
        min_length=1, description="How you will know it is done: a test passing, a command's output."
    )


class CreatePlanArgs(Arguments):
    steps: list[PlanStepArgs] = Field(min_length=1, description="The steps, in the order to do them.")

    @model_validator(mode="after")
    def _titles_unique(self) -> CreatePlanArgs:
        seen: dict[str, int] = {}
        for number, step in enumerate(self.steps, start=1):
            key = " ".join(step.title.split()).casefold()
            if not key:
                raise ValueError(f"step {number} has a blank title")
            if key in seen:
                raise ValueError(
                    f"steps {seen[key]} and {number} have the same title '{step.title.strip()}'; "
                    "make each step's title say what sets it apart")
            seen[key] = number
        return self


class CreatePlan(Tool[CreatePlanArgs]):
    name = "create_plan"
    description = (
        "Record the implementation plan: ordered steps, each with a title and its acceptance "
        "(how you will know it is done). Replaces any earlier plan."
    )
    arguments = CreatePlanArgs
    permission: ClassVar[Permission] = "internal"

    @classmethod
    def preview(cls, args: Mapping[str, object]) -> str:
        steps = args.get("steps")
        count = len(steps) if isinstance(steps, list) else 0
        return f"{count} step{'s' if count != 1 else ''}"

    def __init__(self, plan: PlanStore) -> None:
        self.plan = plan

    @classmethod
    def _build_schema(cls) -> dict[str, Any]:
        # The step object is inlined: pydantic puts it under $defs, and not every provider
        # litellm talks to resolves a $ref in a tool's parameters.
        schema = super()._build_schema()
        parameters = schema["function"]["parameters"]
        defs = parameters.pop("$defs", {})
        step = dict(defs["PlanStepArgs"])
        step.pop("title", None)
        for prop in step.get("properties", {}).values():
            prop.pop("title", None)
        parameters["properties"]["steps"]["items"] = step
        return schema

    async def run(self, args: CreatePlanArgs, ctx: ToolContext) -> ToolResult:
        self.plan.replace(
            PlanStep(title=" ".join(s.title.split()), acceptance=s.acceptance.strip()) for s in args.steps
        )
        count = len(args.steps)
        output = (
            f"Plan recorded with {count} step{'s' if count != 1 else ''}:\n{self.plan.text()}\n"
            "Tick each step off with update_plan(step=<number>) when it meets its acceptance."
        )
        return ToolResult(ok=True, output=output, data={"steps": self.plan.as_data()},
                          events=(PlanUpdated(steps=self.plan.steps),))


class UpdatePlanArgs(Arguments):
    step: int = Field(ge=1, description="The step's number in the plan, from 1.")
    done: bool = Field(True, description="True to tick it off, false to reopen it.")


class UpdatePlan(Tool[UpdatePlanArgs]):
    name = "update_plan"
    description = "Tick a plan step off when it meets its acceptance (or reopen it with done=false)."
    arguments = UpdatePlanArgs
    permission: ClassVar[Permission] = "internal"

    @classmethod
    def preview(cls, args: Mapping[str, object]) -> str:
        return f"step {args.get('step')} {'reopened' if args.get('done') is False else 'done'}"

    def __init__(self, plan: PlanStore) -> None:
        self.plan = plan

    async def run(self, args: UpdatePlanArgs, ctx: ToolContext) -> ToolResult:
        step = self.plan.mark(args.step, args.done)
        steps = self.plan.steps
        done = sum(s.done for s in steps)
        state = "done" if args.done else "reopened"
        head = f"Step {args.step} {state}: {step.title}. {done} of {len(steps)} steps done."
        remaining = next(((n, s) for n, s in enumerate(steps, start=1) if not s.done), None)
        tail = f" Next: step {remaining[0]}, {remaining[1].title}." if remaining else " Every step is done."
        return ToolResult(
            ok=True, output=head + tail, data={"steps": self.plan.as_data(), "step": args.step, "done": args.done},
            events=(PlanUpdated(steps=steps),),
        )
