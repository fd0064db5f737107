"""The records the fleet keeps: what a headless job is asked to do, what it reports, and a race.

pydantic models, because they are written to ``race.json`` and to batch results files and read back
(``race show``, ``race apply``, a resumed batch); a file written by hand or cut by a crash is
validated, not trusted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

AttemptState = Literal["pending", "starting", "running", "checking", "done", "failed", "cancelled"]
"""Where an attempt is: materializing (starting), its session running, its checks running, ended."""


class CheckOutcome(BaseModel):
    """One check command's verdict in an attempt's or a task's directory."""

    command: str
    passed: bool
    exit_code: int | None
    duration_s: float
    timed_out: bool = False
    output_tail: str = ""
    """The last lines of its output (where test runners print their summary)."""


class JobSpec(BaseModel):
    """One headless session to run in a prepared directory (a race attempt or a batch task)."""

    prompt: str
    model: str | None = None
    """A litellm model string; None takes the workspace's configured model."""
    api_base: str | None = None
    workflow: str | None = None
    max_steps: int | None = None
    permission_mode: Literal["ask", "edits", "all"] = "all"
    """The attempt runs in a throwaway copy, so by default nothing waits for an approval no one gives."""
    sandbox: bool | None = None
    checks: list[str] | None = None
    """Check commands; None takes ``[checks]`` from the config, else those detected in the directory."""
    check_timeout_s: float = 600.0
    test_patch: str | None = None
    """Applied before the checks and taken back after (SWE-bench's tests, which the agent never sees)."""


class JobReport(BaseModel):
    """What a job did: its session's ending, usage, wall time, and the checks run afterwards."""

    exit_code: int
    session_id: str | None = None
    outcome: str | None = None
    """completed, clarify, halted, paused, approval or error; None when the session never started."""
    reason: str = ""
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    wall_s: float = 0.0
    checks: list[CheckOutcome] = Field(default_factory=list)
    error: str = ""
    """Why the job could not run or was cut off (the last lines of the process's stderr)."""

    @property
    def checks_passed(self) -> bool:
        """Every check passed (true when there were none to run)."""
        return all(check.passed for check in self.checks)

    @property
    def passed(self) -> bool:
        """The session completed and every check passed."""
        return self.outcome == "completed" and self.checks_passed


class ChangeSize(BaseModel):
    """How much an attempt changed, against the tree it started from."""

    files: int = 0
    added: int = 0
    removed: int = 0

    @property
    def lines(self) -> int:
        return self.added + self.removed


class Attempt(BaseModel):
    """One of a race's attempts: where it runs and, once ended, how it did."""

    id: str
    """``1``, ``2``, …: what ``race apply`` takes."""
    model: str | None = None
    workflow: str | None = None
    workdir: str
    state: AttemptState = "pending"
    session_id: str | None = None
    control: str = ""
    """The session's control state while it runs (thinking, executingTool, …), from its events."""
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    report: JobReport | None = None
    base_tree: str | None = None
    """The tree the attempt started from, as captured in the attempt's own snapshot store."""
    final_tree: str | None = None
    change: ChangeSize = Field(default_factory=ChangeSize)
    materialize_s: float = 0.0
    """Writing the snapshot's files into the attempt's directory."""
    base_capture_s: float = 0.0
    """Recording them as the attempt's base (the session's own first capture is then cheap)."""
    collect_s: float = 0.0
    """Capturing the tree it ended with and diffing it against the base."""
    note: str = ""
    """Why it failed or was cancelled, when it did."""

    @property
    def passed(self) -> bool:
        return self.state == "done" and self.report is not None and self.report.passed

    @property
    def has_change(self) -> bool:
        """Its directory holds a change to read or apply: it was written, and nothing runs in it now.

        A cancelled attempt counts: its session paused, ``agentcli resume`` may have finished it
        since, and its directory is collected afresh whenever it is diffed or applied.
        """
        return self.base_tree is not None and self.state in ("done", "failed", "cancelled")


class Applied(BaseModel):
    """A record of ``race apply``: which attempt, and the snapshot that undoes it."""

    attempt: str
    at: datetime
    undo_snapshot: str
    """The workspace's snapshot taken just before: ``agentcli restore`` it to undo."""
    paths: list[str]
    undone: datetime | None = None
    """When ``race undo`` took it back: the next undo goes on to the apply before it."""


class Race(BaseModel):
    """A race: one task, N attempts from one snapshot of the workspace."""

    id: str
    workspace: str
    task: str
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    base_tree: str
    """The workspace's tree when the race started (uncommitted work included)."""
    base_snapshot: str
    """The workspace snapshot holding that tree (``agentcli restore`` takes it)."""
    backend: str = "local"
    jobs: int = 1
    attempts: list[Attempt] = Field(default_factory=list)
    applied: list[Applied] = Field(default_factory=list)
    ended: datetime | None = None
    pid: int | None = None
    """The process running the race: once it is gone, a race it left unended has ended with it."""
    host: str | None = None
    """The machine that process runs on (a data dir may be shared; a pid means nothing elsewhere)."""

    def attempt(self, attempt_id: str) -> Attempt | None:
        return next((a for a in self.attempts if a.id == attempt_id), None)
