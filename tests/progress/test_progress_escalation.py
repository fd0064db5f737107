"""From recovery hint to halt: what the user sees when the agent stays stuck, and when it recovers."""

from __future__ import annotations


from agentcli.progress import Action, ProgressConfig, ProgressTracker
from tests.progress.factories import bash, failed_edit, feed, read, verdicts, write


def test_a_model_repeating_a_failing_edit_forever_is_halted_by_its_fifth_call() -> None:
    results = feed(ProgressTracker(), [failed_edit("main.py")] * 5)

    found = verdicts(results)
    assert [(i, v.severity) for i, v in found[:2]] == [(3, "recover"), (4, "halt")]
    assert found[1][1].rule == "same_error"
    assert found[1][1].evidence.startswith("edit_file main.py failed 4 times in a row")


def test_the_recovery_message_names_the_rule_and_the_evidence() -> None:
    verdict = feed(ProgressTracker(), [failed_edit("main.py")] * 3)[-1]

    assert verdict is not None
    message = verdict.recovery_message
    assert "same_error" in message
    assert "edit_file main.py failed 3 times in a row with the same error: old_string not found in main.py" in message
    assert "halted" in message
    assert verdict.reason.startswith("same_error: edit_file main.py failed 3 times")


def test_the_next_repeat_of_a_cycle_after_the_hint_halts() -> None:
    a, b = read("a.py"), read("b.py")

    found = verdicts(feed(ProgressTracker(), [a, b, a, b, a]))

    assert [(i, v.rule, v.severity) for i, v in found] == [(4, "cycle", "recover"), (5, "cycle", "halt")]


def test_a_second_different_rule_in_the_same_phase_halts() -> None:
    # Stuck on an edit and hinted; it reads the file (fine), then keeps asking for the same
    # unchanged diff: a different loop before it has made any progress.
    diff = bash("git diff main.py", "(no changes)")
    actions = [failed_edit("main.py")] * 3 + [read("main.py"), diff, diff, diff]

    found = verdicts(feed(ProgressTracker(), actions))

    assert [(i, v.rule, v.severity) for i, v in found] == [
        (3, "same_error", "recover"),
        (7, "identical_call", "halt"),
    ]
    assert "git diff main.py" in found[1][1].evidence


def test_the_same_rule_on_another_target_right_after_a_hint_halts() -> None:
    run = bash("python main.py", "SyntaxError: invalid syntax", ok=False, error="exit status 1")
    actions = [failed_edit("main.py")] * 3 + [read("main.py"), run, run, run]

    found = verdicts(feed(ProgressTracker(), actions))

    assert [(i, v.rule, v.severity) for i, v in found] == [
        (3, "same_error", "recover"),
        (7, "same_error", "halt"),
    ]
    assert "python main.py" in found[1][1].evidence


def test_a_model_that_recovers_and_works_then_hits_an_unrelated_snag_gets_a_hint_not_a_halt() -> None:
    actions = [failed_edit("main.py")] * 3
    actions += [write(f"src/part{i}.py", f"part = {i}\n") for i in range(50)]
    actions += [failed_edit("docs/index.md")] * 3

    found = verdicts(feed(ProgressTracker(), actions))

    assert [(i, v.severity) for i, v in found] == [(3, "recover"), (56, "recover")]
    assert "docs/index.md" in found[1][1].evidence


def test_progress_shorter_than_the_decay_keeps_the_phase_on_notice() -> None:
    tracker = ProgressTracker(ProgressConfig(escalation_decay=5))
    feed(tracker, [failed_edit("main.py")] * 3)
    feed(tracker, [write(f"f{i}.py", "x") for i in range(4)])

    assert tracker.on_notice
    verdict = feed(tracker, [failed_edit("other.py")] * 3)[-1]
    assert verdict is not None and verdict.severity == "halt"


def test_a_phase_change_resets_error_tracking() -> None:
    tracker = ProgressTracker()
    feed(tracker, [failed_edit("main.py")] * 2)

    tracker.reset("entered build.validate")

    assert tracker.record(failed_edit("main.py")) is None
    assert tracker.record(failed_edit("main.py")) is None
    assert tracker.last_reset_reason == "entered build.validate"


def test_a_phase_change_after_a_hint_makes_the_next_detection_a_hint_again() -> None:
    tracker = ProgressTracker()
    feed(tracker, [failed_edit("main.py")] * 3)
    assert tracker.on_notice

    tracker.reset("entered build.implement")

    assert not tracker.on_notice
    verdict = feed(tracker, [failed_edit("main.py")] * 3)[-1]
    assert verdict is not None and verdict.severity == "recover"


def test_a_user_message_after_a_halt_lets_the_agent_resume() -> None:
    tracker = ProgressTracker()
    halted = feed(tracker, [failed_edit("main.py")] * 4)[-1]
    assert halted is not None and halted.severity == "halt"
    assert tracker.last_verdict == halted

    tracker.reset("user message")

    assert tracker.last_verdict is None
    assert tracker.record(write("main.py", "rewritten by the user's guidance")) is None
    assert tracker.record(failed_edit("main.py")) is None


def test_no_progress_gives_a_full_window_after_the_hint() -> None:
    guesses = [
        Action.from_call("read_file", {"path": f"g{i}.py"}, "missing", False, f"no such file: g{i}.py")
        for i in range(25)
    ]

    found = verdicts(feed(ProgressTracker(), guesses))

    assert [(i, v.rule, v.severity) for i, v in found[:2]] == [
        (10, "no_progress", "recover"),
        (20, "no_progress", "halt"),
    ]


def test_phases_bouncing_with_nothing_written_do_not_reset_tracking() -> None:
    # a → b → a → b …, one identical read per phase: the bounce back to a phase already
    # entered since the work last moved keeps the rules' memory, so the loop is caught.
    tracker = ProgressTracker()
    found: list[tuple[int, str]] = []
    for i in range(12):
        tracker.enter_phase("a" if i % 2 == 0 else "b")
        verdict = tracker.record(read("main.py", "print('hello')\n"))
        if verdict is not None:
            found.append((i, verdict.severity))
    assert [severity for _, severity in found[:2]] == ["recover", "halt"]
    assert found[1][0] <= 5


def test_a_phase_entered_after_real_work_starts_afresh() -> None:
    # implement ⇄ validate with an edit each round is progress: re-entering a phase after new
    # file content is a fresh start, as a first entry is.
    tracker = ProgressTracker()
    tracker.enter_phase("build.implement")
    feed(tracker, [failed_edit("main.py")] * 2)
    tracker.record(write("main.py", "version 1"))
    assert tracker.enter_phase("build.validate")
    assert tracker.enter_phase("build.implement")
    assert tracker.last_reset_reason == "entered phase build.implement"
    assert tracker.record(failed_edit("main.py")) is None
    assert tracker.record(failed_edit("main.py")) is None
    # With nothing written since, going back to validate and on to implement is a bounce
    # through phases of this stretch of work, and resets nothing.
    assert not tracker.enter_phase("build.validate")
    assert not tracker.enter_phase("build.implement")
    verdict = tracker.record(failed_edit("main.py"))
    assert verdict is not None and verdict.rule == "same_error"


def test_a_user_message_forgets_the_phases_of_the_bounce() -> None:
    tracker = ProgressTracker()
    tracker.enter_phase("a")
    tracker.enter_phase("b")
    assert not tracker.enter_phase("a")
    tracker.reset("user message")
    assert tracker.enter_phase("a")
