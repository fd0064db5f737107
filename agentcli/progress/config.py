"""The `[progress]` configuration table: every threshold the stuck detector uses."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

RuleId = Literal[
    "same_error",
    "identical_call",
    "cycle",
    "oscillation",
    "checks_stalled",
    "no_progress",
]
"""Stable identifiers of the stuck rules, as they appear in verdicts, events and config."""

RULE_IDS: tuple[RuleId, ...] = (
    "same_error",
    "identical_call",
    "oscillation",
    "cycle",
    "checks_stalled",
    "no_progress",
)
"""Every rule, in the order they are consulted: the most specific evidence first."""


class ProgressConfig(BaseModel):
    """Thresholds for progress tracking and stuck detection (the `[progress]` table).

    The defaults catch a true loop within a few repeats (a failing edit repeated is
    flagged on its 3rd attempt and halted on its 4th) while a long productive run is
    never flagged.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    enabled: bool = True
    """Detect stuck loops at all. When false the tracker still counts and summarises."""

    disabled_rules: frozenset[RuleId] = frozenset()
    """Rules to switch off one by one, e.g. `["checks_stalled"]`, instead of the whole detector."""

    same_error_repeats: int = Field(default=3, ge=2)
    """Failures with the same error on the same target, with no progress in between, that count as stuck."""

    identical_call_repeats: int = Field(default=3, ge=2)
    """Identical calls (tool, arguments) with identical output, with no new file content or
    newly passing check in between, that count as stuck."""

    identical_call_window: int = Field(default=20, ge=2)
    """How many recent actions the identical-call rule looks back over."""

    cycle_min_len: int = Field(default=2, ge=2)
    """Shortest repeating cycle of calls detected (A,B,A,B has length 2)."""

    cycle_max_len: int = Field(default=5, ge=2)
    """Longest repeating cycle of calls detected."""

    cycle_repeats: int = Field(default=2, ge=2)
    """Consecutive times a cycle must appear, all with identical outputs: 2 catches A,B,A,B on
    the 4th call. Identical outputs throughout mean nothing in the world changed, so two full
    rounds are already proof; a third round would only burn more calls."""

    oscillation_returns: int = Field(default=2, ge=1)
    """Times one file's content goes back to an earlier version, with no new content anywhere in
    between, that count as oscillating (edit, undo, edit, undo is 2 returns)."""

    check_stall_runs: int = Field(default=4, ge=1)
    """Consecutive check reports from one source (a test command, run_checks) that neither lower
    the number of failing checks nor newly pass a check, after the first failing report, that
    count as an implement-validate loop that is not converging."""

    no_progress_window: int = Field(default=10, ge=2)
    """Actions in a row without any progress (see `tracker.py`) that count as stuck."""

    escalation_decay: int = Field(default=5, ge=1)
    """Progress actions after a stuck verdict that lift the escalation: until then any further
    verdict halts, afterwards the next one is a recovery hint again."""

    recent_actions: int = Field(default=20, ge=1)
    """How many recent actions the tracker keeps for display and for the recovery message."""

    recent_errors: int = Field(default=10, ge=1)
    """How many recent failed actions the tracker keeps for display."""

    summary_every: int = Field(default=10, ge=1)
    """A progress summary is due after every this many recorded actions."""

    @model_validator(mode="after")
    def _check_ranges(self) -> ProgressConfig:
        """Reject threshold combinations that could never fire."""
        if self.cycle_max_len < self.cycle_min_len:
            raise ValueError(
                f"progress.cycle_max_len ({self.cycle_max_len}) is smaller than "
                f"progress.cycle_min_len ({self.cycle_min_len}); raise cycle_max_len or lower cycle_min_len"
            )
        if self.identical_call_window < self.identical_call_repeats:
            raise ValueError(
                f"progress.identical_call_window ({self.identical_call_window}) is smaller than "
                f"progress.identical_call_repeats ({self.identical_call_repeats}), so the rule could "
                "never fire; make the window at least as large as the repeats"
            )
        return self

    def rule_enabled(self, rule: RuleId) -> bool:
        """Tell whether `rule` may produce verdicts.

        Args:
            rule: The rule identifier.

        Returns:
            True when detection is enabled and the rule is not in `disabled_rules`.
        """
        return self.enabled and rule not in self.disabled_rules
