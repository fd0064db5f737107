"""Re-reading an unchanged file after real work is a hint again, not a halt.

A productive run read a file three times, edited, and read it three times again: the second
re-read halted it at call 7, because the first had put the phase on notice. Identical reads
still get the recovery hint; with no new content or passing check since the hint, a re-read
loop halts as promptly as before.
"""

from __future__ import annotations

from agentcli.progress import ProgressTracker
from tests.progress.factories import edit, feed, read, verdicts


def test_rereads_around_an_edit_never_halt() -> None:
    actions = [read("app.py")] * 3
    actions += [edit("app.py", "a = 1", "a = 2", "a = 2\n")]
    actions += [read("app.py", "1: a = 2\n")] * 3
    found = verdicts(feed(ProgressTracker(), actions))
    assert [(i, v.rule, v.severity) for i, v in found] == [
        (3, "identical_call", "recover"),
        (7, "identical_call", "recover"),
    ]


def test_a_run_that_only_rereads_is_still_halted() -> None:
    found = verdicts(feed(ProgressTracker(), [read("app.py")] * 6))
    assert [(i, v.severity) for i, v in found][:2] == [(3, "recover"), (4, "halt")]


def test_rereads_after_a_hint_with_no_work_between_halt() -> None:
    actions = [read("app.py")] * 3 + [read("util.py")] + [read("app.py")]
    found = verdicts(feed(ProgressTracker(), actions))
    assert [(i, v.severity) for i, v in found] == [(3, "recover"), (5, "halt")]
