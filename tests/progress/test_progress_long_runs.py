"""The promise both ways: long productive runs are never flagged, true loops always are, fast."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.progress import Action, ProgressTracker
from tests.progress.factories import bash, edit, failed_edit, feed, pytest_run, read, verdicts, write


def _productive_task(i: int, rng: random.Random, tests: dict[str, bool]) -> list[Action]:
    """One small realistic task: look around, change a file, test it, sometimes stumble once."""
    path = f"pkg{i % 12}/module{i}.py"
    steps: list[Action] = [read(path, f"1: def f{i}():\n2:     return {i}\n")]
    if rng.random() < 0.3:
        steps.append(Action.from_call("grep", {"pattern": f"f{i}\\("}, f"pkg/use{i}.py:3: f{i}()", True))
    if rng.random() < 0.15:
        # A stale edit fails once; the model re-reads and gets it right.
        steps.append(failed_edit(path, old=f"return {i - 1}"))
        steps.append(read(path, f"1: def f{i}():\n2:     return {i}  # checked\n"))
    steps.append(edit(path, f"return {i}", f"return {i + 1}", f"def f{i}(): return {i + 1}"))
    tests[f"test_f{i}"] = True
    if rng.random() < 0.2:
        # The new test fails first, then the fix makes it pass.
        steps.append(pytest_run({**tests, f"test_f{i}": False}))
        steps.append(edit(path, f"return {i + 1}", f"return {i + 2}", f"def f{i}(): return {i + 2}"))
    steps.append(pytest_run(dict(tests)))
    if rng.random() < 0.1:
        steps.append(bash("git diff --stat", f"{i} files changed"))
    return steps


def _productive_run(length: int, seed: int) -> list[Action]:
    rng = random.Random(seed)
    tests: dict[str, bool] = {}
    actions: list[Action] = []
    task = 0
    while len(actions) < length:
        actions.extend(_productive_task(task, rng, tests))
        task += 1
    return actions[:length]


def test_a_thousand_step_productive_run_is_never_flagged() -> None:
    tracker = ProgressTracker()

    results = feed(tracker, _productive_run(1000, seed=3))

    assert verdicts(results) == []
    assert tracker.actions == 1000
    assert tracker.summary().files_modified_count > 200


def test_a_thousand_step_run_across_ten_phases_is_never_flagged() -> None:
    # Seed 003's 10-phase refactor: 100 edits of distinct files per phase, tests after each.
    tracker = ProgressTracker()
    found = []
    for phase in range(10):
        tracker.reset(f"phase {phase + 1}")
        for i in range(50):
            found += verdicts([tracker.record(write(f"pkg{phase}/file{i}.go", f"package p{phase} // {i}"))])
            found += verdicts([tracker.record(bash("go test ./...", "ok", checks={f"pkg{phase}": True}))])

    assert found == []
    assert tracker.actions == 1000


def test_three_hundred_distinct_edits_with_checks_passing_complete() -> None:
    actions = []
    for i in range(300):
        actions.append(edit("app.py", f"step {i}", f"step {i + 1}", f"app at step {i + 1}"))
        if i % 3 == 0:
            actions.append(bash("python -m pytest -q", f"{i} passed", checks={"test_app": True}))

    assert verdicts(feed(ProgressTracker(), actions)) == []


# --- properties ----------------------------------------------------------------------------

_move = st.sampled_from(["write_new", "edit_existing", "read_new", "grep_new", "test_new", "stumble"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_move, min_size=1, max_size=400))
def test_any_mix_of_productive_moves_is_never_flagged(moves: list[str]) -> None:
    tracker = ProgressTracker()
    files: list[str] = []
    tests: dict[str, bool] = {}
    for n, move in enumerate(moves):
        if move == "write_new" or not files:
            files.append(f"new/file{n}.py")
            actions = [write(files[-1], f"content {n}")]
        elif move == "edit_existing":
            actions = [edit(files[n % len(files)], "a", "b", f"content {n}")]
        elif move == "read_new":
            actions = [read(f"docs/page{n}.md")]
        elif move == "grep_new":
            actions = [Action.from_call("grep", {"pattern": f"name{n}"}, f"hit {n}", True)]
        elif move == "test_new":
            tests[f"test_{n}"] = True
            actions = [pytest_run(dict(tests))]
        else:
            # One failed attempt, then the same file rewritten: a stumble, not a loop.
            actions = [failed_edit(files[-1]), write(files[-1], f"rewritten {n}")]
        for action in actions:
            assert tracker.record(action) is None, f"flagged a productive run at move {n}: {move}"


_loop_call = st.one_of(
    st.builds(read, st.sampled_from(["a.py", "b.py", "c.py", "d.py"])),
    st.builds(failed_edit, st.sampled_from(["a.py", "b.py"]), st.sampled_from(["x", "y"])),
    st.builds(
        lambda cmd, ok: bash(cmd, f"output of {cmd}", ok=ok, error=None if ok else "exit status 1"),
        st.sampled_from(["make", "pytest -q", "git status"]),
        st.booleans(),
    ),
    st.builds(write, st.sampled_from(["a.py", "b.py"]), st.sampled_from(["v1", "v2", "v3"])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_loop_call, min_size=1, max_size=5))
def test_any_short_block_repeated_forever_is_hinted_promptly_then_halted(block: list[Action]) -> None:
    results = feed(ProgressTracker(), block * 8)

    found = verdicts(results)
    assert found, f"a repeated block of {len(block)} calls was never flagged"
    first, verdict = found[0]
    assert verdict.severity == "recover"
    # Two rounds are enough evidence. When the first round wrote new content, that was real
    # progress, and the two rounds are counted from after it.
    wrote = any(action.file_hashes for action in block)
    assert first <= max(3, (3 if wrote else 2) * len(block))
    halts = [i for i, v in found if v.severity == "halt"]
    # One round after the hint; two when the block's first write of new content came after the
    # hint: that was real work, and re-reads after real work are a hint again (issue 18: three
    # reads, an edit, three reads must not halt a productive run).
    assert halts and halts[0] <= first + (2 if wrote else 1) * len(block)
