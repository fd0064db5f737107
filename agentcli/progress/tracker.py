"""The progress tracker: fed every tool call, it keeps the totals and returns stuck verdicts.

It sees only the stream of actions, not model turns, so a loop spread over many model
messages is caught the same as one inside a single message. It does no IO: the session
layer acts on what it returns (injects `StuckVerdict.recovery_message` after `recover`,
moves the chart to `halted` after `halt`, emits the summary and stuck events).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from types import MappingProxyType

from agentcli.progress.actions import Action, normalise_volatile
from agentcli.progress.config import ProgressConfig
from agentcli.progress.escalation import Escalation
from agentcli.progress.novelty import NoveltyLedger
from agentcli.progress.rules import Finding, Rule, Step, build_rules
from agentcli.progress.summary import ProgressSummary
from agentcli.progress.verdicts import Severity, StuckVerdict

# Errors are compared, not stored, by the rules; a long traceback adds nothing to the
# comparison beyond its first kilobyte and would only cost time.
_ERROR_KEY_LIMIT = 1000
_HARMLESS_RULES = frozenset({"identical_call", "cycle"})
"""Rules whose finding on a call that changes nothing (a read, a search) stays a hint after real work."""


def _changes_nothing(action: Action) -> bool:
    """A successful call that wrote no file, ran no command and no check: a read or a search."""
    return action.ok and not action.file_hashes and action.checks is None and action.target_kind != "command"


class ProgressTracker:
    """Tracks semantic progress across a session and detects stuck loops.

    Call `record` after every tool call. Call `enter_phase` when the workflow enters a phase
    and `reset` when the user sends a message. After each `record`, `summary_due` tells whether to emit a
    progress summary (every `summary_every` calls).

    What counts as progress, and which rules fire, is described in `novelty.py` and
    `rules.py`; how a finding becomes `recover` or `halt` in `escalation.py`.
    """

    def __init__(self, config: ProgressConfig | None = None) -> None:
        """Start tracking a session.

        Args:
            config: The `[progress]` thresholds; the defaults when None.
        """
        self._config = config if config is not None else ProgressConfig()
        # Session totals: they describe the whole run and survive resets.
        self._actions = 0
        self._successes = 0
        self._failures = 0
        self._command_runs = 0
        self._files_modified: dict[str, None] = {}
        self._commands: dict[str, int] = {}
        # The latest report of each check source, kept by reference: merging thousands of
        # test results on every run would cost more than the rest of `record`; the merge
        # happens when a summary is asked for.
        self._check_reports: dict[tuple[str, str | None], Mapping[str, bool]] = {}
        # Per-phase tracking: cleared by reset.
        self._recent_actions: deque[Action] = deque(maxlen=self._config.recent_actions)
        self._recent_errors: deque[Action] = deque(maxlen=self._config.recent_errors)
        self._ledger = NoveltyLedger()
        self._rules: tuple[Rule, ...] = build_rules(self._config)
        self._escalation = Escalation(self._config.escalation_decay)
        self._worked_since_verdict = False
        """New file content or a newly passing check since the last verdict."""
        self._phase_actions = 0
        self._last_verdict: StuckVerdict | None = None
        self._reset_reason: str | None = None
        # Phases entered since the work last moved (new file content or a newly passing
        # check). Re-entering one of them is a bounce, not a fresh start: a workflow whose
        # phases hand the turn back and forth would otherwise reset the rules on every call
        # and never be caught repeating itself.
        self._cycle_phases: set[str] = set()
        self._strong_since_phase = False

    @property
    def config(self) -> ProgressConfig:
        """The thresholds in force."""
        return self._config

    def record(self, action: Action) -> StuckVerdict | None:
        """Take in one finished tool call and tell whether the agent is stuck.

        Args:
            action: The call and its result.

        Returns:
            None while the agent is making progress or has not repeated itself enough to
            tell. Otherwise a verdict naming the rule and the evidence: `recover` the first
            time, `halt` if the agent is still stuck (see `escalation.py`).
        """
        self._count(action)
        novelty = self._ledger.observe(action)
        for path in novelty.new_files:
            self._files_modified.setdefault(path, None)
        for path in novelty.returned_files:
            self._files_modified.setdefault(path, None)

        error_key = (
            normalise_volatile(action.error[:_ERROR_KEY_LIMIT]) if action.error is not None else None
        )
        step = Step(
            action=action,
            novelty=novelty,
            signature=(action.tool, action.args_hash, action.output_hash, action.ok, error_key),
            error_key=error_key,
        )
        config = self._config
        warned_about = self._last_verdict.rule if self._last_verdict is not None else None
        finding: Finding | None = None
        # Every rule sees every step, even after one has fired, so that each keeps an
        # accurate window. One finding becomes the verdict, the others being the same
        # incident seen from another angle: the rule the model was last warned about if it
        # fired again (so a halt reads "the pattern you were told about continued"), else
        # the first in priority order.
        for rule in self._rules:
            found = rule.observe(step)
            if found is None or not config.rule_enabled(found.rule):
                continue
            if finding is None or found.rule == warned_about:
                finding = found
        if novelty.strong:
            self._worked_since_verdict = True
            self._strong_since_phase = True
        if finding is None:
            if novelty.any:
                self._escalation.progressed()
            return None
        if self._worked_since_verdict and finding.rule in _HARMLESS_RULES and _changes_nothing(action):
            # Re-reads after real work (new content, a newly passing check) since the last
            # hint: the run is productive and a re-read breaks nothing, so another hint, not a
            # halt. A run that only re-reads made no such progress and is halted as before.
            severity: Severity = "recover"
        else:
            severity = self._escalation.judge()
        self._worked_since_verdict = False
        verdict = StuckVerdict(rule=finding.rule, evidence=finding.evidence, severity=severity)
        for rule in self._rules:
            rule.verdict_issued()
        self._last_verdict = verdict
        return verdict

    def enter_phase(self, name: str) -> bool:
        """Note that the workflow entered a phase; start afresh unless it is a bounce.

        A phase entered for the first time since the work last moved (new file content or a
        newly passing check) resets tracking as `reset` does. Returning to a phase already
        entered in that stretch (a↔b with nothing written in between) keeps everything the
        rules remember, so repetition spread over the bounce counts as in one phase.

        Args:
            name: The phase's name.

        Returns:
            Whether tracking was reset.
        """
        if self._strong_since_phase:
            self._cycle_phases.clear()
        elif name in self._cycle_phases:
            return False
        self._restart(f"entered phase {name}")
        self._cycle_phases.add(name)
        return True

    def reset(self, reason: str) -> None:
        """Start a fresh phase of tracking after a user message (phases use `enter_phase`).

        Args:
            reason: Why, e.g. "user message"; kept for display.
        """
        self._cycle_phases.clear()
        self._restart(reason)

    def _restart(self, reason: str) -> None:
        """Start a fresh phase of tracking: a new workflow phase, or a user message.

        Clears everything stuck detection remembers (what the phase has seen, the rules'
        counters, the escalation notice, recent actions and errors). Session totals and the
        current content of each file are kept.

        Args:
            reason: Why, e.g. "entered build.implement" or "user message"; kept for display.
        """
        self._ledger.new_phase()
        self._rules = build_rules(self._config)
        self._escalation.reset()
        self._worked_since_verdict = False
        self._recent_actions.clear()
        self._recent_errors.clear()
        self._phase_actions = 0
        self._last_verdict = None
        self._reset_reason = reason
        self._strong_since_phase = False

    def summary(self) -> ProgressSummary:
        """Session totals now.

        Returns:
            Calls, files modified, commands run, successes, failures and check states.
        """
        checks = self._checks()
        return ProgressSummary(
            actions=self._actions,
            files_modified=tuple(self._files_modified),
            commands_run=self._command_runs,
            successes=self._successes,
            failures=self._failures,
            checks_passing=tuple(name for name, ok in checks.items() if ok),
            checks_failing=tuple(name for name, ok in checks.items() if not ok),
        )

    def summary_due(self) -> bool:
        """Whether the action just recorded completes a block of `summary_every` calls.

        Call it after `record`; it stays true until the next `record`. Counted over the whole
        session, so summaries keep their rhythm across phases.
        """
        return self._actions > 0 and self._actions % self._config.summary_every == 0

    @property
    def actions(self) -> int:
        """Tool calls recorded since the tracker was created."""
        return self._actions

    @property
    def phase_actions(self) -> int:
        """Tool calls recorded since the last reset."""
        return self._phase_actions

    @property
    def last_reset_reason(self) -> str | None:
        """The reason given to the last `reset`, or None if there was none."""
        return self._reset_reason

    @property
    def last_verdict(self) -> StuckVerdict | None:
        """The latest verdict in this phase, or None."""
        return self._last_verdict

    @property
    def on_notice(self) -> bool:
        """Whether the next stuck finding halts (a recovery hint was given and not yet earned back)."""
        return self._escalation.on_notice

    @property
    def recent_actions(self) -> tuple[Action, ...]:
        """The last `recent_actions` actions of this phase, oldest first."""
        return tuple(self._recent_actions)

    @property
    def recent_errors(self) -> tuple[Action, ...]:
        """The last `recent_errors` failed actions of this phase, oldest first."""
        return tuple(self._recent_errors)

    @property
    def files_modified(self) -> tuple[str, ...]:
        """Files whose content the agent changed this session, in the order first changed."""
        return tuple(self._files_modified)

    @property
    def commands_run(self) -> Mapping[str, int]:
        """Each distinct command run this session and how many times, in first-run order."""
        return MappingProxyType(self._commands)

    @property
    def checks_passing(self) -> tuple[str, ...]:
        """Checks whose latest result was a pass."""
        return tuple(name for name, ok in self._checks().items() if ok)

    def _checks(self) -> dict[str, bool]:
        """The latest result of every check, across sources (a later report wins a name)."""
        merged: dict[str, bool] = {}
        for report in self._check_reports.values():
            merged.update(report)
        return merged

    def _count(self, action: Action) -> None:
        """Update the session totals and the recent windows."""
        self._actions += 1
        self._phase_actions += 1
        self._recent_actions.append(action)
        if action.ok:
            self._successes += 1
        else:
            self._failures += 1
            self._recent_errors.append(action)
        if action.target_kind == "command" and action.target is not None:
            self._command_runs += 1
            self._commands[action.target] = self._commands.get(action.target, 0) + 1
        if action.checks:
            source = (action.tool, action.target)
            # Re-inserted so the sources stay in the order last reported: the latest wins a name.
            self._check_reports.pop(source, None)
            self._check_reports[source] = action.checks
