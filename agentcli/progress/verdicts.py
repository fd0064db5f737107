"""What the tracker hands back: a stuck verdict, and the advice that goes with each rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentcli.progress.config import RuleId

Severity = Literal["recover", "halt"]
"""`recover`: tell the model and continue. `halt`: stop the agent and show the reason."""

_ADVICE: dict[RuleId, str] = {
    "same_error": (
        "Repeating the call will fail the same way. Work from the target's exact current "
        "content, or take a different approach (for an edit that cannot find its text, "
        "rewrite the file or a smaller region)."
    ),
    "identical_call": (
        "The call returns the same result every time; its output is already above. Use it, "
        "or do something different."
    ),
    "cycle": (
        "You are repeating the same sequence of calls and getting the same results. Break the "
        "cycle: change the approach, or stop and ask the user with clarify."
    ),
    "oscillation": (
        "You are undoing and redoing the same change. Decide which version is right, explain "
        "why, and move on."
    ),
    "checks_stalled": (
        "Your changes are not reducing the failing checks. Read the failure output closely, "
        "reconsider the cause, or ask the user with clarify."
    ),
    "no_progress": (
        "Recent actions produced no new file content, no new command, no newly passing check "
        "and no new information. Make a concrete change, or finish with complete, clarify or pause."
    ),
}


@dataclass(frozen=True, slots=True)
class StuckVerdict:
    """A stuck pattern the tracker found in the action stream."""

    rule: RuleId
    """Which rule fired: `same_error`, `identical_call`, `cycle`, `oscillation`,
    `checks_stalled` or `no_progress`."""

    evidence: str
    """One sentence naming what repeated, e.g. "edit_file main.py failed 3 times in a row with
    the same error: old_string not found in main.py"."""

    severity: Severity
    """`recover` for a first detection, `halt` when the agent is still stuck after one."""

    @property
    def reason(self) -> str:
        """The rule and the evidence in one line, for the halted state and the stuck event."""
        return f"{self.rule}: {self.evidence}"

    @property
    def recovery_message(self) -> str:
        """Text to inject for the model after a `recover` verdict.

        It names the rule and the evidence so the model can tell what to stop doing, adds
        advice specific to the rule, and warns that the next repeat stops the run.
        """
        return (
            f"Progress check: you appear to be stuck ({self.rule}): {self.evidence}. "
            f"{_ADVICE[self.rule]} If this happens again the run will be halted."
        )
