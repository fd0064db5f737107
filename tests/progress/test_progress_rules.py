"""Each stuck rule, seen as a user would: which call is flagged, and what the evidence says."""

from __future__ import annotations

import pytest

from agentcli.progress import Action, ProgressConfig, ProgressTracker
from tests.progress.factories import bash, edit, failed_edit, feed, pytest_run, read, verdicts, write


# --- same error on the same target ---------------------------------------------------------


def test_the_same_failing_edit_is_caught_on_the_third_attempt_not_before() -> None:
    results = feed(ProgressTracker(), [failed_edit("main.py")] * 3)

    assert results[:2] == [None, None]
    verdict = results[2]
    assert verdict is not None
    assert verdict.rule == "same_error"
    assert verdict.severity == "recover"
    assert verdict.evidence == (
        "edit_file main.py failed 3 times in a row with the same error: "
        "old_string not found in main.py"
    )


def test_a_failing_edit_retried_between_other_calls_is_still_the_same_error() -> None:
    # Reading other files and grepping in between changes nothing about the failing edit.
    results = feed(
        ProgressTracker(),
        [
            failed_edit("main.py", old="a"),
            read("util.py"),
            failed_edit("main.py", old="b"),
            Action.from_call("grep", {"pattern": "helper"}, "main.py:3: def helper", True),
            failed_edit("main.py", old="c"),
        ],
    )

    assert verdicts(results)[0][0] == 5
    assert verdicts(results)[0][1].rule == "same_error"


def test_failing_test_runs_after_each_new_edit_are_attempts_not_a_loop() -> None:
    tracker = ProgressTracker(ProgressConfig(disabled_rules=frozenset({"checks_stalled"})))
    actions: list[Action] = []
    for attempt in range(8):
        actions.append(edit("calc.py", f"v{attempt}", f"v{attempt + 1}", f"version {attempt + 1}"))
        actions.append(bash("pytest -q", "1 failed", ok=False, error="exit status 1"))

    assert verdicts(feed(tracker, actions)) == []


def test_a_test_command_that_fails_differently_each_time_is_not_the_same_error() -> None:
    outputs = ["FAILED test_a\n1 failed", "FAILED test_b\n1 failed", "FAILED test_c\n1 failed"]
    actions = [bash("pytest -q", out, ok=False, error="exit status 1") for out in outputs]

    assert verdicts(feed(ProgressTracker(), actions)) == []


def test_different_errors_on_one_file_are_not_the_same_error() -> None:
    actions = [
        Action.from_call("edit_file", {"path": "main.py", "old_string": "x"}, "e1", False, "old_string not found"),
        Action.from_call("edit_file", {"path": "main.py", "old_string": "y"}, "e2", False, "old_string is not unique"),
        Action.from_call("edit_file", {"path": "main.py", "old_string": "z"}, "e3", False, "permission denied"),
    ]

    assert verdicts(feed(ProgressTracker(), actions)) == []


def test_the_same_error_on_different_files_is_not_flagged() -> None:
    actions = [failed_edit("a.py"), failed_edit("b.py"), failed_edit("c.py")]

    assert verdicts(feed(ProgressTracker(), actions)) == []


def test_errors_that_differ_only_in_timing_are_the_same_error() -> None:
    actions = [
        bash("npm run build", f"building... killed after {s}s", ok=False, error=f"timed out after {s}s")
        for s in ("30.02", "30.11", "30.07")
    ]

    found = verdicts(feed(ProgressTracker(), actions))

    assert [(i, v.rule) for i, v in found] == [(3, "same_error")]
    assert "npm run build" in found[0][1].evidence


def test_recovering_by_switching_approach_after_errors_is_not_stuck() -> None:
    # Seed 003: two failed edits, then a write that works, then the work goes on.
    actions = [failed_edit("main.py"), failed_edit("main.py"), write("main.py", "fixed = True\n")]
    actions += [write(f"pkg/mod{i}.py", f"x = {i}\n") for i in range(30)]

    assert verdicts(feed(ProgressTracker(), actions)) == []


# --- identical call, identical output ------------------------------------------------------


def test_an_identical_call_with_identical_output_is_caught_on_the_third_repeat() -> None:
    status = bash("git status --short", " M main.py\n")

    results = feed(ProgressTracker(), [status, read("main.py"), status, status])

    found = verdicts(results)
    assert [(i, v.rule) for i, v in found] == [(4, "identical_call")]
    assert found[0][1].evidence == (
        "bash `git status --short` was called 3 times with the same arguments and returned "
        "the same output each time"
    )


def test_polling_with_changing_output_is_not_flagged() -> None:
    polls = [bash("gh run view 42 --json status", f'{{"status": "in_progress", "done": {i}}}') for i in range(25)]

    assert verdicts(feed(ProgressTracker(), polls)) == []


def test_polling_whose_output_only_changes_in_timestamps_is_a_repeat() -> None:
    polls = [
        bash("curl -s localhost:8000/health", f"2024-05-01T10:00:{s:02d}Z status=starting")
        for s in (1, 6, 11)
    ]

    found = verdicts(feed(ProgressTracker(), polls))

    assert [(i, v.rule) for i, v in found] == [(3, "identical_call")]


def test_rerunning_passing_tests_after_each_new_edit_is_not_flagged() -> None:
    actions: list[Action] = []
    for i in range(20):
        actions.append(write(f"src/feature{i}.py", f"def f{i}(): ...\n"))
        actions.append(pytest_run({"test_all": True}))

    assert verdicts(feed(ProgressTracker(), actions)) == []


# --- cycles --------------------------------------------------------------------------------


def test_a_two_call_cycle_is_caught_on_the_fourth_call() -> None:
    a, b = read("config.py"), bash("python -c 'import config'", "ImportError", ok=False, error="exit status 1")

    results = feed(ProgressTracker(), [a, b, a, b])

    found = verdicts(results)
    assert [(i, v.rule) for i, v in found] == [(4, "cycle")]
    assert "read_file config.py -> bash `python -c 'import config'` (failed: exit status 1)" in found[0][1].evidence


@pytest.mark.parametrize("length", [2, 3, 4, 5])
def test_a_cycle_of_length_two_to_five_is_caught_after_two_rounds(length: int) -> None:
    block = [read(f"file{i}.py") for i in range(length)]

    results = feed(ProgressTracker(), block * 3)

    found = verdicts(results)
    assert found[0][0] == 2 * length
    assert found[0][1].rule == "cycle"
    assert f"cycle of {length} calls" in found[0][1].evidence


def test_a_cycle_whose_outputs_change_is_not_flagged() -> None:
    # Waiting on a job: look at its log, check its status, and the status moves each round.
    actions: list[Action] = []
    for i in range(10):
        actions.append(read("build.log", f"step {i}"))
        actions.append(bash("make status", f"progress {i * 10}%"))

    assert verdicts(feed(ProgressTracker(), actions)) == []


def test_an_edit_test_rhythm_with_new_content_is_not_a_cycle() -> None:
    actions: list[Action] = []
    for i in range(30):
        actions.append(read("app.py", f"content {i}"))
        actions.append(edit("app.py", f"step {i}", f"step {i + 1}", f"content {i + 1}"))
        actions.append(pytest_run({"test_app": True}))

    assert verdicts(feed(ProgressTracker(), actions)) == []


# --- oscillating file content --------------------------------------------------------------


def test_edit_undo_edit_undo_is_oscillation() -> None:
    actions = [
        edit("main.py", "x = 1", "x = 2", "x = 2\n"),
        edit("main.py", "x = 2", "x = 1", "x = 1\n"),
        edit("main.py", "x = 1", "x = 2", "x = 2\n"),
        edit("main.py", "x = 2", "x = 1", "x = 1\n"),
    ]

    found = verdicts(feed(ProgressTracker(), actions))

    assert [(i, v.rule) for i, v in found] == [(4, "oscillation")]
    assert found[0][1].evidence.startswith("main.py went back to an earlier version 2 times")


def test_oscillating_between_two_files_is_caught() -> None:
    # Seed 003's example: a.go and b.go each changed and changed back, in turn.
    rounds = [
        edit("a.go", "X0", "X1", "a1"),
        edit("b.go", "Y0", "Y1", "b1"),
        edit("a.go", "X1", "X0", "a0"),
        edit("b.go", "Y1", "Y0", "b0"),
    ]

    found = verdicts(feed(ProgressTracker(), rounds * 2))

    assert found, "alternating edits of a.go and b.go were never flagged"
    index, verdict = found[0]
    assert index <= 7
    assert verdict.rule == "oscillation"
    assert "a.go" in verdict.evidence


def test_reverting_several_files_once_each_is_not_oscillation() -> None:
    actions = [write(name, "v1") for name in ("a.py", "b.py", "c.py")]
    actions += [write(name, "v2") for name in ("a.py", "b.py", "c.py")]
    actions += [write(name, "v1") for name in ("a.py", "b.py", "c.py")]  # undo the second round

    assert verdicts(feed(ProgressTracker(), actions)) == []


def test_removing_a_debug_print_twice_with_work_in_between_is_not_oscillation() -> None:
    actions = [
        write("app.py", "base"),
        write("app.py", "base + print(1)"),
        write("app.py", "base"),
        write("other.py", "new work"),
        write("app.py", "base + print(2)"),
        write("app.py", "base"),
    ]

    assert verdicts(feed(ProgressTracker(), actions)) == []


# --- implement and validate without converging ---------------------------------------------


def test_fix_attempts_that_never_reduce_failing_checks_are_caught() -> None:
    actions: list[Action] = []
    for attempt in range(6):
        actions.append(edit("parser.py", f"try {attempt}", f"try {attempt + 1}", f"parser v{attempt}"))
        actions.append(pytest_run({"test_parse_empty": False, "test_parse_list": True}))

    found = verdicts(feed(ProgressTracker(), actions))

    index, verdict = found[0]
    assert index == 10  # the 5th test run: the first failing run, then 4 without improvement
    assert verdict.rule == "checks_stalled"
    assert "bash `pytest -q`" in verdict.evidence
    assert "test_parse_empty" in verdict.evidence


def test_fix_attempts_that_reduce_failures_are_progress() -> None:
    names = [f"test_{i}" for i in range(6)]
    actions: list[Action] = []
    for fixed in range(7):
        actions.append(edit("lib.py", f"v{fixed}", f"v{fixed + 1}", f"lib v{fixed}"))
        actions.append(pytest_run({name: i < fixed for i, name in enumerate(names)}))

    assert verdicts(feed(ProgressTracker(), actions)) == []


# --- no unique progress --------------------------------------------------------------------


def test_reading_many_distinct_files_at_the_start_is_exploring_not_stuck() -> None:
    actions = [read(f"src/module_{i}.py") for i in range(40)]
    actions += [Action.from_call("grep", {"pattern": f"def f{i}"}, f"src/x.py:{i}", True) for i in range(20)]

    assert verdicts(feed(ProgressTracker(), actions)) == []


def test_rereading_the_same_few_files_is_caught_within_a_few_calls() -> None:
    order = ["a.py", "b.py", "a.py", "c.py", "b.py", "a.py", "c.py", "b.py", "c.py", "a.py"]

    found = verdicts(feed(ProgressTracker(), [read(name) for name in order]))

    assert found and found[0][0] <= 6
    assert found[0][1].rule in {"identical_call", "cycle"}


def test_ten_actions_without_anything_new_are_caught_on_the_tenth() -> None:
    # Guessing file names that do not exist: each call differs, none brings anything.
    guesses = [
        Action.from_call("read_file", {"path": f"src/guess{i}.py"}, f"no such file: src/guess{i}.py", False, f"no such file: src/guess{i}.py")
        for i in range(10)
    ]

    results = feed(ProgressTracker(), guesses)

    assert results[:9] == [None] * 9
    verdict = results[9]
    assert verdict is not None and verdict.rule == "no_progress"
    assert "last 10 actions" in verdict.evidence
    assert "read_file src/guess0.py" in verdict.evidence


def test_trying_different_commands_is_switching_approach_not_stuck() -> None:
    commands = [f"pip install {name}" for name in ("yaml", "pyyaml", "PyYAML==6.0", "ruamel.yaml")]
    commands += [f"python{v} -m pip install pyyaml" for v in ("", "3", "3.11", "3.12")]
    commands += ["uv pip install pyyaml", "pipx install pyyaml", "apt-get install -y python3-yaml"]
    actions = [bash(c, f"error: {c} failed", ok=False, error=f"{c}: exit status 1") for c in commands]

    assert verdicts(feed(ProgressTracker(), actions)) == []


def test_writing_the_same_content_again_is_not_progress() -> None:
    same = [write("notes.md", "TODO") for _ in range(2)]
    stale = [Action.from_call("write_file", {"path": "notes.md", "content": "TODO", "n": i}, "ok", True, file_hashes={"notes.md": "h"}) for i in range(12)]

    found = verdicts(feed(ProgressTracker(), same + stale))

    assert found and found[0][1].rule == "no_progress"


def test_the_no_progress_evidence_counts_one_other_call_in_the_singular() -> None:
    # Five different failed reads, each twice (never three times, never in a cycle): four are
    # listed by name and the fifth is "1 other call", not "1 other calls".
    guesses = [
        Action.from_call("read_file", {"path": f"src/g{i}.py"}, f"no such file: src/g{i}.py", False,
                         f"no such file: src/g{i}.py")
        for i in range(5) for _ in range(2)
    ]

    verdict = feed(ProgressTracker(), guesses)[-1]

    assert verdict is not None and verdict.rule == "no_progress", verdict
    assert verdict.evidence.endswith(" and 1 other call"), verdict.evidence
