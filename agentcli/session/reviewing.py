"""The work of ``reviewingProgress``: every finished call, once its effects are known, is shown to
the progress tracker, and raises the signals the workflow's phase transitions listen for.

The review runs on entry; the chart then leaves at once through its guards: halted when the
tracker sees a loop (``is_stuck``), else on to the next call or the next model call. In the same
step the phase region moves when the call raised its signal (``tool_signal == 'finish_phase'``,
``checks_signal == 'passed'``), so the next model call already sees the new phase.
"""

from __future__ import annotations

from statemachine import State

from agentcli.events import ProgressReported, StuckDetected
from agentcli.progress import StuckVerdict
from agentcli.session.outcomes import CallOutcome, CaptureOutcome, settled
from agentcli.session.turn import Turn


class Reviewing:
    """Feeds the progress tracker and raises the phase signals."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.stuck: StuckVerdict | None = None
        """The tracker's verdict when it asks to halt, from one review to the next."""
        self.tool_signal: str | None = None
        """The tool whose call just succeeded, while it is reviewed (phase transitions read it)."""
        self.checks_signal: str | None = None
        """``passed`` or ``failed`` while a check result is reviewed."""

    def review_progress(self, data: CallOutcome | CaptureOutcome) -> None:
        """On entering the state: record the call in the tracker and raise its signals."""
        turn = self.turn
        self.stuck = None
        done = settled(data)
        call, result = done.outcome.call, done.outcome.result
        verdict = turn.watchdog.after(call, done.outcome.tool, result, done.changed)
        if turn.watchdog.summary_due():
            summary = turn.watchdog.summary()
            turn.emit(ProgressReported(actions=summary.actions, files_modified=list(summary.files_modified),
                                       successes=summary.successes, failures=summary.failures,
                                       checks_passing=len(summary.checks_passing)))
        if verdict is not None:
            turn.emit(StuckDetected(rule=verdict.rule, evidence=verdict.evidence, severity=verdict.severity))
            if verdict.severity == "recover":
                turn.defer_note("recovery", verdict.recovery_message)
            else:
                self.stuck = verdict
                return  # a halted run moves no phase
        if result.ok:
            self.tool_signal = call.name
        passed = result.data.get("passed")
        if isinstance(passed, bool):  # run_checks: failing checks are still a result
            self.checks_signal = "passed" if passed else "failed"

    def is_stuck(self) -> bool:
        """Guard: the tracker saw a loop it will not let go on (a hint did not break it)."""
        return self.stuck is not None

    def halt_stuck(self) -> None:
        verdict = self.stuck
        self.turn.end_turn("halted", verdict.reason if verdict is not None else "the progress tracker saw a loop")

    def end_review(self) -> None:
        """On leaving the state: the signals were read by this step's transitions only. (The
        verdict stays: the transition that halts reads it after leaving.)"""
        self.tool_signal = None
        self.checks_signal = None

    def enter_phase(self, state: State) -> None:
        """On entering a workflow phase: progress starts afresh unless the workflow bounced back to a
        phase entered since the work last moved (see `ProgressTracker.enter_phase`); the phase's
        step count starts afresh, and the signal that moved the phase is spent (it moves it one
        step, never two)."""
        self.turn.watchdog.enter_phase(state.name)
        self.turn.phase_steps = 0
        self.tool_signal = None
        self.checks_signal = None
