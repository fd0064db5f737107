"""Ranking a race's attempts: the checks first, then the size of the change.

An attempt that completed with every check passing beats one that did not; among equals, more
passing checks, then one that changed something over one that changed nothing (its checks pass
on the workspace as it was: a flaky test, or checks the task's change is not about, and there is
nothing of it to apply), then the smaller change (fewer lines touched: less to review, less to go
wrong), then the cheaper one.
"""

from __future__ import annotations

import math

from agentcli.fleet.models import Attempt


def sort_key(attempt: Attempt) -> tuple[int, int, int, int, int, float]:
    report = attempt.report
    completed = attempt.state == "done" and report is not None and report.outcome == "completed"
    passing = sum(1 for check in report.checks if check.passed) if report is not None else 0
    return (
        0 if attempt.passed else 1,
        0 if completed else 1,
        -passing,
        0 if attempt.change.files else 1,
        attempt.change.lines if attempt.state == "done" else 1 << 30,
        report.cost if report is not None and report.cost is not None else math.inf,
    )


def ranked(attempts: list[Attempt]) -> list[Attempt]:
    """Best first; ties keep the attempts' order."""
    return sorted(attempts, key=sort_key)


def best(attempts: list[Attempt]) -> Attempt | None:
    """The attempt to apply, if any passed."""
    top = ranked(attempts)
    return top[0] if top and top[0].passed else None
