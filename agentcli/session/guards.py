"""The chart's guards: small named questions about the work's outcome and the session's state.

Each is read by a transition in ``chart.py`` to choose the next state; none changes anything.
Guards on a completion event get the work's outcome as ``data``.
"""

from __future__ import annotations

from agentcli.session.compacting import CompactionOutcome
from agentcli.session.outcomes import CallOutcome, ModelOutcome
from agentcli.session.turn import Turn


class Guards:
    """The guards of the control region."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    # -- before a turn ---------------------------------------------------------------------------

    def has_snapshots(self) -> bool:
        """A snapshot store is attached (snapshots are on)."""
        return self.turn.snapshots is not None

    # -- thinking ----------------------------------------------------------------------------------

    def over_step_limit(self) -> bool:
        """The turn, or the active phase, has made as many model calls as it may."""
        turn = self.turn
        phase = turn.active_phase
        return turn.totals.steps >= turn.settings.max_steps or (
            phase.max_steps is not None and turn.phase_steps >= phase.max_steps)

    def needs_compaction(self) -> bool:
        """The next request would fill too much of the model's context window."""
        return self.turn.needs_compaction()

    def has_tool_calls(self, data: ModelOutcome) -> bool:
        """The reply asked for tools."""
        return bool(data.tool_calls)

    def model_unavailable(self, data: ModelOutcome) -> bool:
        """The model could not be reached after every retry (rate limits, server errors)."""
        return data.error is not None and data.error.retryable

    def model_overflowed(self, data: ModelOutcome) -> bool:
        """The provider said the request is longer than its context window, the first time."""
        return data.error is not None and data.error.kind == "overflow" and not self.turn.overflow_compacted

    def still_overflowing(self, data: ModelOutcome) -> bool:
        """It overflowed again after the view was compacted for it."""
        return data.error is not None and data.error.kind == "overflow"

    def model_refused(self, data: ModelOutcome) -> bool:
        """The provider declined to answer (its content policy)."""
        return data.error is not None and data.error.kind == "refused"

    def model_failed(self, data: ModelOutcome) -> bool:
        """The call failed for good: a missing or bad key, an unknown model, a bad request."""
        return data.error is not None and not data.error.retryable

    # -- running calls -----------------------------------------------------------------------------

    def has_pending_calls(self) -> bool:
        """Calls of the last reply are still waiting to run."""
        return bool(self.turn.pending)

    def needs_approval(self) -> bool:
        """The next call waits for the user's approval before it may run."""
        turn = self.turn
        return bool(turn.pending) and turn.needs_approval(turn.pending[0])

    def is_complete(self, data: CallOutcome) -> bool:
        return data.control == "complete"

    def is_clarify(self, data: CallOutcome) -> bool:
        return data.control == "clarify"

    def is_pause(self, data: CallOutcome) -> bool:
        return data.control == "pause"

    def modifies_files(self, data: CallOutcome) -> bool:
        """The call may have changed files and snapshots are on: capture before going on."""
        return self.turn.snapshots is not None and data.may_have_changed_files

    # -- compacting ------------------------------------------------------------------------------

    def compaction_failed(self, data: CompactionOutcome) -> bool:
        """The summary could not be written, or after an overflow nothing made room (neither
        compacting nor the smaller output limit the window the provider stated allows)."""
        return data.error is not None or (data.reason == "overflow" and not data.compacted and not data.fits)

    def asked_in_idle(self, data: CompactionOutcome) -> bool:
        """The user asked for the compaction while the agent had nothing to do."""
        return data.origin == "idle"

    def asked_by_user(self, data: CompactionOutcome) -> bool:
        return data.origin is not None
