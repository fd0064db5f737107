"""The plan pane: the workflow's plan, each step ticked off as the agent finishes it.

Hidden until a plan exists (``create_plan`` in the ``plan-build`` workflow); the stream still
records each change of the plan, this pane shows where it stands now.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from agentcli.events import PlanStep


def plan_lines(steps: Sequence[PlanStep]) -> Content:
    """One line per step: done ones ticked, the next one to do marked, acceptance muted below."""
    upcoming = next((number for number, step in enumerate(steps, start=1) if not step.done), None)
    lines = []
    for number, step in enumerate(steps, start=1):
        if step.done:
            lines.append(Content.assemble(("✓ ", "$tool-ok"), (f"{number}. {step.title}", "$text-muted")))
            continue
        style = "bold" if number == upcoming else ""
        lines.append(Content.assemble(("▸ " if number == upcoming else "○ ", "$graph-active"),
                                      (f"{number}. {step.title}", style)))
        if number == upcoming and step.acceptance:
            lines.append(Content.styled(f"   done when: {step.acceptance}", "$text-muted"))
    return Content("\n").join(lines)


class PlanPane(Static):
    """The current plan; says how many steps are done in ``summary``."""

    DEFAULT_CSS = """
    PlanPane { height: auto; max-height: 12; padding: 0 1; overflow-y: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.steps: list[PlanStep] = []

    @property
    def summary(self) -> str:
        """``2/5 done``, or empty with no plan."""
        return f"{sum(step.done for step in self.steps)}/{len(self.steps)} done" if self.steps else ""

    def show_plan(self, steps: Sequence[PlanStep]) -> None:
        self.steps = list(steps)
        self.update(plan_lines(self.steps))

    def clear(self) -> None:
        self.show_plan([])
