"""What the chart's transitions do: mostly, say how the turn ends.

Each function here is an ``on`` action of a transition in ``chart.py``. A transition into a
waiting state ends the turn through :meth:`Turn.end_turn`, with the outcome its target means
and the reason its trigger gives; the Session announces it (``TurnEnded``) once the transition
is done. The rest tell the model something (``remind``) or ask the user (``ask_approval``).
"""

from __future__ import annotations

import traceback

from agentcli.events import ClarificationRequested, ErrorOccurred, PermissionRequested
from agentcli.llm.types import ModelCallError
from agentcli.session.compacting import CompactionOutcome
from agentcli.session.outcomes import CallOutcome, ModelOutcome
from agentcli.session.prompt import REMINDER, TRUNCATED_REMINDER
from agentcli.session.turn import Turn

_NARROWER = "resume with a narrower step (read files in parts, with offset and limit), or start a new session"


class Endings:
    """The actions of the control region's transitions."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self._reminded_truncated = False
        """The reply that drew the latest reminder was cut off by the output limit."""

    # -- the model's reply -------------------------------------------------------------------------

    def remind(self, data: ModelOutcome) -> None:
        """A reply without a tool call: remind the model, once, how a turn must end."""
        self._reminded_truncated = data.truncated
        if data.truncated:  # its own kind: the screen must not say the model merely stopped
            self.turn.add_note("truncated", TRUNCATED_REMINDER)
        else:
            self.turn.add_note("reminder", REMINDER)

    def stop_silent(self, data: ModelOutcome) -> None:
        """The reply after the reminder had no tool call either. When the output limit cut it off
        (the model may well have been writing its call), saying "stopped without complete" would
        send the user after the wrong cause: the reason names the limit and what to change."""
        if not data.truncated:
            self.turn.end_turn("paused", "stopped without complete/clarify/pause")
            return
        turn = self.turn
        model = turn.settings.model_for(turn.active_phase.model)
        limit = f" of {turn.max_output:,} tokens" if turn.max_output else ""
        times = "twice in a row" if self._reminded_truncated else "after a reminder"
        turn.end_turn("paused", f"the reply was cut off by the output limit{limit} {times}; raise "
                                f'max_output_tokens under [models.limits."{model}"], or resume asking for '
                                "smaller steps (one file or one edit at a time)")

    def give_up_on_model(self, data: ModelOutcome) -> None:
        """The model stayed unreachable or busy through every retry: pause; resuming tries again."""
        error = data.error
        assert error is not None
        self._model_error(error)
        self.turn.end_turn("paused", f"model unavailable, retries exhausted: {error}")

    def refused_by_model(self, data: ModelOutcome) -> None:
        """The provider declined to answer: halt with its reason (guidance may steer around it)."""
        error = data.error
        assert error is not None
        self._model_error(error)
        self.turn.end_turn("halted", str(error))

    def pause_on_overflow(self, data: ModelOutcome) -> None:
        """Compacting did not make the request fit: pause with the figures, never loop."""
        if data.error is not None:
            self._model_error(data.error)
        self.turn.end_turn("paused", f"{self._does_not_fit()} even after compacting; {_NARROWER}")

    def pause_on_failed_compaction(self, data: CompactionOutcome) -> None:
        if data.error is not None:
            self.turn.end_turn("paused", f"could not compact the context: {data.error}")
        else:  # an overflow, and neither cutting outputs nor a summary made room
            why = ("a summary of the older part would be no shorter than it" if data.no_gain
                   else "there is nothing older to summarize")
            self.turn.end_turn("paused", f"{self._does_not_fit()}, compacting could not make room ({why}); "
                                         f"{_NARROWER}")

    def _does_not_fit(self) -> str:
        turn = self.turn
        window = f" of a {turn.window:,}-token window" if turn.window else ""
        return f"the conversation does not fit the model's context (~{turn.context_tokens():,} tokens{window})"

    def end_compaction(self, data: CompactionOutcome) -> None:
        """A compaction the user asked for ends the turn where it was asked."""
        if data.compacted:
            said = f"context compacted: ~{data.tokens_before:,} → ~{data.tokens_after:,} tokens"
        elif data.no_gain:
            said = "compacting could not make room: a summary would be no shorter than what it replaces"
        else:
            said = "nothing to compact: the context holds only the latest turns"
        self.turn.end_turn("completed" if data.origin == "idle" else "paused", said)

    def fail_model(self, data: ModelOutcome) -> None:
        """A failure retrying cannot fix (a key, a model name, a bad request): the turn ends in error."""
        error = data.error
        assert error is not None
        self._model_error(error)
        self.turn.end_turn("error", str(error))

    def _model_error(self, error: ModelCallError) -> None:
        # For the log: the classification and the provider's own words. The turn's end shows the line.
        self.turn.emit(ErrorOccurred(kind=f"model:{error.kind}", message=str(error), fatal=True, detail=error.detail))

    def halt_at_step_limit(self) -> None:
        turn = self.turn
        phase = turn.active_phase
        limit = turn.settings.max_steps
        if turn.totals.steps >= limit:
            reason = f"step limit reached ({limit} model calls)"
        else:
            reason = f"step limit of the {phase.name} phase reached ({phase.max_steps} model calls)"
        turn.end_turn("halted", reason)

    # -- tool calls --------------------------------------------------------------------------------

    def ask_approval(self) -> None:
        """The next call needs the user's verdict: say what it would do, and wait."""
        turn = self.turn
        call = turn.pending[0]
        decision = turn.decision(call)
        turn.emit(PermissionRequested(call_id=call.id, tool=call.name, arguments=call.arguments,
                                      summary=decision.summary, rule=decision.rule, rules=list(decision.rules),
                                      reason=decision.reason))
        turn.end_turn("approval", f"approval needed: {decision.summary}")

    def complete(self, data: CallOutcome) -> None:
        self.turn.end_turn("completed", str(data.result.data.get("summary", "")))

    def ask(self, data: CallOutcome) -> None:
        """The clarify tool: the question waits for the user's answer."""
        question = str(data.result.data.get("question", ""))
        options = [str(option) for option in data.result.data.get("options", [])]
        self.turn.emit(ClarificationRequested(call_id=data.call.id, question=question, options=options))
        self.turn.end_turn("clarify", question)

    def pause_by_agent(self, data: CallOutcome) -> None:
        self.turn.end_turn("paused", str(data.result.data.get("reason", "")))

    # -- the user, and failures --------------------------------------------------------------------

    def stop(self, reason: str = "paused by the user") -> None:
        """The user (or a front end closing) paused the run."""
        self.turn.end_turn("paused", reason)

    def fail(self, error: BaseException) -> None:
        """Anything raised in a state's work or a callback: the turn ends halted with the error.

        The traceback goes to the log (``ErrorOccurred.traceback``), never to the screen.
        """
        turn = self.turn
        what = type(error).__name__
        message = str(error) or what
        doing = f" while {turn.doing}" if turn.doing else ""
        turn.doing = None
        turn.emit(ErrorOccurred(kind="internal", message=f"{what}{doing}: {message}", fatal=True, exception=what,
                                traceback="".join(traceback.format_exception(error))))
        turn.end_turn("error", f"{what}{doing}: {message}")
