"""What the tracker reports besides verdicts: summaries, totals, recent windows, switches."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentcli.progress import Action, ProgressConfig, ProgressTracker, stable_hash
from tests.progress.factories import bash, failed_edit, feed, pytest_run, read, verdicts, write


def test_a_summary_is_due_every_ten_tool_calls() -> None:
    tracker = ProgressTracker()

    due = []
    for i in range(35):
        tracker.record(write(f"f{i}.py", "x"))
        due.append(tracker.summary_due())

    assert [i + 1 for i, flag in enumerate(due) if flag] == [10, 20, 30]


def test_summaries_keep_their_rhythm_across_phase_changes() -> None:
    tracker = ProgressTracker()
    feed(tracker, [read(f"a{i}.py") for i in range(7)])
    tracker.reset("entered build.implement")
    feed(tracker, [read(f"b{i}.py") for i in range(2)])

    assert not tracker.summary_due()
    tracker.record(read("b9.py"))
    assert tracker.summary_due()


def test_the_summary_counts_files_commands_successes_and_failures() -> None:
    tracker = ProgressTracker()
    feed(
        tracker,
        [
            read("main.py"),
            write("main.py", "v1"),
            write("util.py", "v1"),
            write("main.py", "v2"),
            failed_edit("main.py"),
            pytest_run({"test_a": True, "test_b": False}),
            bash("ruff check .", "All checks passed!"),
            pytest_run({"test_a": True, "test_b": True}),
        ],
    )

    summary = tracker.summary()

    assert summary.actions == 8
    assert summary.files_modified == ("main.py", "util.py")
    assert summary.files_modified_count == 2
    assert summary.commands_run == 3
    assert (summary.successes, summary.failures) == (6, 2)
    assert summary.checks_passing == ("test_a", "test_b")
    assert summary.checks_failing == ()
    assert summary.text == (
        "8 tool calls: 2 files modified, 3 commands run, 6 succeeded, 2 failed, 2/2 checks passing"
    )


def test_commands_run_lists_each_command_with_its_count() -> None:
    tracker = ProgressTracker()
    feed(tracker, [bash("pytest -q", "ok"), bash("ls", "a b"), bash("pytest -q", "ok 2")])

    assert dict(tracker.commands_run) == {"pytest -q": 2, "ls": 1}
    assert list(tracker.commands_run) == ["pytest -q", "ls"]


def test_recent_actions_and_errors_are_bounded() -> None:
    tracker = ProgressTracker(ProgressConfig(enabled=False))
    actions = [read(f"r{i}.py") for i in range(30)] + [failed_edit(f"e{i}.py") for i in range(15)]
    feed(tracker, actions)

    assert tracker.recent_actions == tuple(actions[-20:])
    assert tracker.recent_errors == tuple(actions[-10:])


def test_a_reset_keeps_session_totals_but_clears_recent_history() -> None:
    tracker = ProgressTracker()
    feed(tracker, [write("a.py", "1"), failed_edit("a.py"), bash("make", "done")])

    tracker.reset("user message")

    assert tracker.recent_actions == ()
    assert tracker.recent_errors == ()
    assert tracker.phase_actions == 0
    assert tracker.actions == 3
    assert tracker.files_modified == ("a.py",)
    assert tracker.summary().failures == 1


def test_a_disabled_detector_never_flags_but_still_summarises() -> None:
    tracker = ProgressTracker(ProgressConfig(enabled=False))

    results = feed(tracker, [failed_edit("main.py")] * 12)

    assert verdicts(results) == []
    assert tracker.summary().failures == 12


def test_one_rule_can_be_switched_off_without_the_others() -> None:
    config = ProgressConfig(disabled_rules=frozenset({"same_error", "identical_call"}))

    results = feed(ProgressTracker(config), [failed_edit("main.py")] * 10)

    found = verdicts(results)
    assert [(i, v.rule) for i, v in found][:1] == [(10, "no_progress")]


def test_thresholds_come_from_config() -> None:
    config = ProgressConfig(same_error_repeats=5)

    attempts = [failed_edit("main.py", old=f"guess {i}") for i in range(5)]

    found = verdicts(feed(ProgressTracker(config), attempts))

    assert [(i, v.rule) for i, v in found] == [(5, "same_error")]


def test_files_whose_content_is_known_before_the_edit_oscillate_sooner() -> None:
    # With the content before each edit, the first undo is already a return.
    def toggle(before: str, after: str) -> Action:
        return Action.from_call(
            "edit_file",
            {"path": "flags.py", "old_string": before, "new_string": after},
            "edited flags.py",
            True,
            file_hashes={"flags.py": stable_hash(after)},
            file_hashes_before={"flags.py": stable_hash(before)},
        )

    on, off = toggle("DEBUG = False", "DEBUG = True"), toggle("DEBUG = True", "DEBUG = False")

    found = verdicts(feed(ProgressTracker(), [on, off, on]))

    assert [(i, v.rule) for i, v in found] == [(3, "oscillation")]
    assert "flags.py" in found[0][1].evidence


def test_the_latest_report_of_a_check_wins_across_sources() -> None:
    tracker = ProgressTracker()
    feed(
        tracker,
        [
            pytest_run({"test_a": False, "test_b": True}),
            bash("pytest tests/test_a.py", "1 passed", checks={"test_a": True}),
        ],
    )

    assert tracker.checks_passing == ("test_a", "test_b")
    assert tracker.summary().checks_failing == ()
    tracker.record(pytest_run({"test_a": False, "test_b": True}))
    assert tracker.summary().checks_failing == ("test_a",)


def test_the_benchmark_runs_and_reports_its_figures() -> None:
    """The script runs and prints its figures; how fast they are is the bench's business, not
    the suite's (``--report-only``: a goal missed on a busy machine does not fail this test)."""
    script = Path(__file__).resolve().parents[2] / "bench" / "progress_tracker.py"
    run = subprocess.run(
        [sys.executable, str(script), "--actions", "200", "--repeats", "1", "--report-only"],
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert run.returncode == 0, run.stdout + run.stderr
    assert "tracker cost per call:" in run.stdout
    assert "µs at 200 actions" in run.stdout
    assert "goal: under 100 µs per call at 200 actions:" in run.stdout
