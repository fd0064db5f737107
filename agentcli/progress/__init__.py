"""Progress tracking and stuck detection: pure, no IO, fed facts and returning verdicts.

Imports only the standard library and pydantic, never another agentcli package.

Typical use by the session layer::

    tracker = ProgressTracker(config.progress)
    ...
    verdict = tracker.record(Action.from_call(name, args, output, ok, error, file_hashes, checks))
    if verdict is not None and verdict.severity == "recover":
        inject(verdict.recovery_message)
    elif verdict is not None:
        halt(verdict.reason)
    if tracker.summary_due():
        emit(tracker.summary())
"""

from agentcli.progress.actions import Action, TargetKind, normalise_volatile, stable_hash
from agentcli.progress.config import RULE_IDS, ProgressConfig, RuleId
from agentcli.progress.novelty import Novelty
from agentcli.progress.summary import ProgressSummary
from agentcli.progress.tracker import ProgressTracker
from agentcli.progress.verdicts import Severity, StuckVerdict

__all__ = [
    "RULE_IDS",
    "Action",
    "Novelty",
    "ProgressConfig",
    "ProgressSummary",
    "ProgressTracker",
    "RuleId",
    "Severity",
    "StuckVerdict",
    "TargetKind",
    "normalise_volatile",
    "stable_hash",
]
