"""How severe a stuck finding is: a hint the first time, a halt if the agent is still stuck.

The rule, in full:

1. A finding while the phase is *not on notice* is a `recover` verdict, and puts the phase
   on notice.
2. A finding while the phase *is on notice* is a `halt` verdict, whichever rule found it:
   the same pattern repeating right after the recovery message, or a second, different
   pattern before the agent has recovered.
3. The notice lifts after `escalation_decay` actions that made progress (of any kind, see
   `novelty.py`) since the last verdict. A model that recovers and then works productively
   gets a hint again, not a halt, the next time it gets stuck on something else.
4. A phase change or a user message (`ProgressTracker.reset`) lifts the notice.

Rejected: remembering every recovered rule for the whole phase. It halts an agent that
recovered well and hit an unrelated snag fifty steps later, which is exactly the behaviour
that makes users switch loop detectors off.
"""

from __future__ import annotations

from agentcli.progress.verdicts import Severity


class Escalation:
    """The notice a phase is under after a recovery hint."""

    def __init__(self, decay: int) -> None:
        """Start with no notice.

        Args:
            decay: Progress actions after a verdict that lift the notice.
        """
        self._decay = decay
        self._on_notice = False
        self._calm = 0

    @property
    def on_notice(self) -> bool:
        """Whether the next finding halts."""
        return self._on_notice

    def judge(self) -> Severity:
        """Decide the severity of a finding and update the notice.

        Returns:
            `recover` for a first finding, `halt` for one made while on notice.
        """
        self._calm = 0
        if self._on_notice:
            return "halt"
        self._on_notice = True
        return "recover"

    def progressed(self) -> None:
        """Count an action that made progress towards lifting the notice."""
        if not self._on_notice:
            return
        self._calm += 1
        if self._calm >= self._decay:
            self._on_notice = False
            self._calm = 0

    def reset(self) -> None:
        """Lift the notice: a new phase or a user message is a fresh start."""
        self._on_notice = False
        self._calm = 0
