"""The periodic progress summary front ends show ("12 files modified, 38 succeeded, 2 failed")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProgressSummary:
    """Session totals at one point in time. Totals survive phase resets; they describe the run."""

    actions: int
    """Tool calls recorded since the tracker was created."""

    files_modified: tuple[str, ...]
    """Files whose content the agent changed, in the order first changed."""

    commands_run: int
    """Command executions (every run, repeats included)."""

    successes: int
    """Calls that succeeded."""

    failures: int
    """Calls that failed."""

    checks_passing: tuple[str, ...]
    """Checks whose latest result was a pass."""

    checks_failing: tuple[str, ...]
    """Checks whose latest result was a failure."""

    @property
    def files_modified_count(self) -> int:
        """How many distinct files the agent changed."""
        return len(self.files_modified)

    @property
    def text(self) -> str:
        """One line for a status bar or the headless printer.

        Example: "40 tool calls: 12 files modified, 5 commands run, 38 succeeded, 2 failed,
        14/15 checks passing".
        """
        parts = [
            f"{self.files_modified_count} file{'s' if self.files_modified_count != 1 else ''} modified",
            f"{self.commands_run} command{'s' if self.commands_run != 1 else ''} run",
            f"{self.successes} succeeded",
            f"{self.failures} failed",
        ]
        total_checks = len(self.checks_passing) + len(self.checks_failing)
        if total_checks:
            parts.append(f"{len(self.checks_passing)}/{total_checks} checks passing")
        return f"{self.actions} tool call{'s' if self.actions != 1 else ''}: " + ", ".join(parts)
