"""The tools workflows are made of: think, create_plan, update_plan, run_checks, finish_phase.

None of them ends a turn (that is the control tools' job) and none changes the workspace's files.
What the session needs from a result is in ``ToolResult.data``:

- ``think``: the fields of :class:`agentcli.events.ThoughtRecorded` (without ``call_id``).
- ``create_plan`` / ``update_plan``: ``steps``, the whole plan after the call, as
  :class:`agentcli.events.PlanStep` dicts, ready for ``PlanUpdated``.
- ``run_checks``: ``passed`` (the verdict, from exit codes only) and ``results`` per command.
- ``finish_phase``: ``summary``.

The plan lives in a :class:`PlanStore` that ``create_plan`` and ``update_plan`` share with the
session, which reads :meth:`PlanStore.text` into the build phases' ``{plan}``.
``explore`` needs a child session, so only its arguments are defined here (:class:`ExploreArgs`);
the session layer implements the tool.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import Field, model_validator

from agentcli.config import CheckSettings
from agentcli.events import PlanStep, PlanUpdated, ThoughtRecorded
from agentcli.tools.base import Arguments, Permission, Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.checks import CheckRun, DetectedCheck, detect_checks, run_check

WORKFLOW_TOOL_NAMES = ("think", "create_plan", "update_plan", "run_checks", "finish_phase", "explore")
"""Every tool name the built-in workflows use beyond the core tools (``explore`` included)."""

_PASSED_TAIL_CHARS = 400
"""Output shown for a passing check: its last lines, usually the runner's summary."""


# -- think ----------------------------------------------------------------------------------------


class ThinkArgs(Arguments):
    thought: str = Field(min_length=1, description="This thinking step: an analysis, a hypothesis, a check of one.")
    thought_number: int = Field(ge=1, description="Its number in the sequence, from 1.")
    total_thoughts: int = Field(ge=1, description="How many thoughts you expect in all; adjust it as you go.")
    next_thought_needed: bool = Field(description="True when another thought should follow this one.")
    is_revision: bool = Field(False, description="True when this thought corrects an earlier one.")
    revises_thought: int | None = Field(None, ge=1, description="The number of the thought it corrects.")
    branch_from_thought: int | None = Field(None, ge=1, description="Start an alternative line of thought from this number.")
    branch_id: str | None = Field(None, min_length=1, description="A short name for that alternative, e.g. 'cache-in-memory'.")

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


# -- the plan -------------------------------------------------------------------------------------


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
    acceptance: str = Field(min_length=1, description="How you will know it is done: a test passing, a command's output.")


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
        head = f"Step {args.step} {'done' if args.done else 'reopened'}: {step.title}. {done} of {len(steps)} steps done."
        remaining = next(((n, s) for n, s in enumerate(steps, start=1) if not s.done), None)
        tail = f" Next: step {remaining[0]}, {remaining[1].title}." if remaining else " Every step is done."
        return ToolResult(
            ok=True, output=head + tail, data={"steps": self.plan.as_data(), "step": args.step, "done": args.done},
            events=(PlanUpdated(steps=steps),),
        )


# -- run_checks -----------------------------------------------------------------------------------


class RunChecksArgs(Arguments):
    """No arguments: which checks run is the project's choice, not the model's."""


class RunChecks(Tool[RunChecksArgs]):
    name = "run_checks"
    description = (
        "Run the project's checks (tests, linters) and report which pass. The verdict comes from "
        "their exit codes; failing checks show the end of their output."
    )
    arguments = RunChecksArgs
    permission: ClassVar[Permission] = "command"  # the commands run project code

    @classmethod
    def preview(cls, args: Mapping[str, object]) -> str:
        return "the project's checks"

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        return "Run the project's checks"

    def __init__(self, commands: list[str] | None = None, timeout_s: float = 600.0) -> None:
        """Set the commands once, from the config.

        Args:
            commands: ``[checks] commands`` from the config; None detects them in the workspace
                at every call (a project gains tests while the agent works).
            timeout_s: Seconds each command may run before its process group is killed.
        """
        self.commands = list(commands) if commands is not None else None
        self.timeout_s = timeout_s

    @classmethod
    def from_settings(cls, checks: CheckSettings) -> RunChecks:
        return cls(checks.commands, checks.timeout_s)

    async def run(self, args: RunChecksArgs, ctx: ToolContext) -> ToolResult:
        detected: list[DetectedCheck] = []
        if self.commands is None:
            detected = detect_checks(ctx.workspace)
            commands = [check.command for check in detected]
        else:
            commands = self.commands
        if not commands:
            why = (
                "the [checks] commands list in the config is empty" if self.commands is not None
                else "none are configured ([checks] commands) and none were detected (no tests, "
                "ruff, package.json test script, Cargo.toml, go.mod or Makefile check/test target)"
            )
            return ToolResult(
                ok=True,
                output=f"No checks to run: {why}. Nothing was verified; this counts as passed.",
                data={"passed": True, "results": [], "source": "config" if self.commands is not None else "detected"},
            )
        wrap: Callable[[list[str]], list[str]] | None = None
        # getattr: ToolContext gains `sandbox` with the sandbox work; checks run project code, so
        # they run in the sandbox exactly when bash does.
        if getattr(ctx, "sandbox", False):
            from agentcli.tools.sandbox import sandbox_status, wrap_command

            status = await asyncio.to_thread(sandbox_status)
            bwrap = status.bwrap
            if not status.available or bwrap is None:
                return ToolResult.failure(f"the checks were not run: {status.reason}")
            wrap = functools.partial(wrap_command, workspace=ctx.workspace, bwrap=bwrap)

        runs = [await run_check(command, ctx.workspace, self.timeout_s, wrap=wrap) for command in commands]
        return _report(runs, detected, ctx.settings.max_output_chars, self.timeout_s)


def _report(runs: list[CheckRun], detected: list[DetectedCheck], budget: int, timeout_s: float) -> ToolResult:
    failed = [run for run in runs if not run.passed]
    passed = not failed
    if passed:
        head = f"All {len(runs)} check{'s' if len(runs) != 1 else ''} passed."
    else:
        head = f"{len(failed)} of {len(runs)} check{'s' if len(runs) != 1 else ''} failed: " + ", ".join(
            run.command for run in failed
        ) + "."
    sections = [head]
    if detected:
        sections.append(
            "Checks detected in the workspace (set [checks] commands in .agentcli.toml to choose them):\n"
            + "\n".join(f"- {check.command}: {check.reason}" for check in detected)
        )
    per_failure = max(1000, (budget - 2000) // max(1, len(failed)))
    for run in runs:
        if run.timed_out:
            status = f"FAILED: timed out after {timeout_s:g} s and was killed"
        elif run.passed:
            status = f"passed (exit code 0, {run.duration_s:.1f} s)"
        else:
            status = f"FAILED (exit code {run.exit_code}, {run.duration_s:.1f} s)"
        tail = _tail(run.output, _PASSED_TAIL_CHARS if run.passed else per_failure)
        sections.append(f"$ {run.command}\n{status}" + (f"\n{tail}" if tail else ""))
    data = {
        "passed": passed,
        "results": [
            {
                "command": run.command,
                "exit_code": run.exit_code,
                "passed": run.passed,
                "duration_s": run.duration_s,
                "timed_out": run.timed_out,
            }
            for run in runs
        ],
        "source": "detected" if detected else "config",
    }
    output = "\n\n".join(sections)
    if passed:
        return ToolResult(ok=True, output=output, data=data)
    return ToolResult(ok=False, output=output, error=head, data=data)


def _tail(text: str, limit: int) -> str:
    text = text.rstrip()
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    if 0 <= newline < len(cut) - 1:
        cut = cut[newline + 1 :]  # start on a whole line
    return f"[… {len(text) - len(cut)} earlier characters not shown]\n{cut}"


# -- finish_phase and explore ---------------------------------------------------------------------


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
