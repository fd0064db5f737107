"""Turning a tool call into an Action: what counts as the same call, and what it acted on."""

from __future__ import annotations

import pytest

from agentcli.progress import Action, normalise_volatile


def test_argument_order_does_not_change_the_call() -> None:
    a = Action.from_call("edit_file", {"path": "a.py", "old_string": "x", "new_string": "y"}, "ok", True)
    b = Action.from_call("edit_file", {"new_string": "y", "old_string": "x", "path": "a.py"}, "ok", True)

    assert a.args_hash == b.args_hash


def test_different_arguments_are_different_calls() -> None:
    a = Action.from_call("read_file", {"path": "a.py", "offset": 0}, "", True)
    b = Action.from_call("read_file", {"path": "a.py", "offset": 100}, "", True)

    assert a.args_hash != b.args_hash


@pytest.mark.parametrize(
    ("tool", "arguments", "target", "kind"),
    [
        ("bash", {"command": "  pytest -q  "}, "pytest -q", "command"),
        ("read_file", {"path": "./src/../src/app.py"}, "src/app.py", "path"),
        ("edit_file", {"file_path": "main.py", "old_string": "a"}, "main.py", "path"),
        ("grep", {"pattern": "TODO", "path": "src"}, "src", "path"),
        ("glob", {"pattern": "**/*.py"}, "**/*.py", "query"),
        ("complete", {"summary": "done"}, None, "none"),
    ],
)
def test_the_target_is_the_command_else_the_path_else_the_pattern(
    tool: str, arguments: dict[str, object], target: str | None, kind: str
) -> None:
    action = Action.from_call(tool, arguments, "", True)

    assert (action.target, action.target_kind) == (target, kind)


def test_malformed_arguments_from_the_model_are_still_comparable() -> None:
    a = Action.from_call("edit_file", '{"path": "main.py", "old_str', "Error: bad JSON", False, "bad JSON")
    b = Action.from_call("edit_file", '{"path": "main.py", "old_str', "Error: bad JSON", False, "bad JSON")

    assert a.args_hash == b.args_hash
    assert a.target is None


def test_arguments_json_cannot_express_are_hashed_anyway() -> None:
    loop: dict[str, object] = {}
    loop["self"] = loop

    action = Action.from_call("odd_tool", {"when": object(), "data": loop}, None, True)

    assert len(action.args_hash) == 32


def test_test_timings_do_not_make_identical_runs_differ() -> None:
    first = Action.from_call("bash", {"command": "pytest"}, "1 failed, 9 passed in 0.53s", False)
    second = Action.from_call("bash", {"command": "pytest"}, "1 failed, 9 passed in 0.61s", False)

    assert first.output_hash == second.output_hash


def test_real_changes_in_output_are_kept() -> None:
    first = Action.from_call("bash", {"command": "pytest"}, "2 failed, 8 passed in 0.53s", False)
    second = Action.from_call("bash", {"command": "pytest"}, "1 failed, 9 passed in 0.53s", False)

    assert first.output_hash != second.output_hash


@pytest.mark.parametrize(
    "text",
    [
        "finished at 2024-05-01T10:00:03.123Z",
        "finished at 2024-05-01 10:00:03",
        "[10:00:03] done",
        "took 120ms",
        "<Foo object at 0x7f3a2b1c9d40>",
    ],
)
def test_timestamps_durations_and_addresses_are_masked(text: str) -> None:
    assert "<~>" in normalise_volatile(text)


def test_the_caller_cannot_change_an_action_after_the_fact() -> None:
    hashes = {"a.py": "h1"}
    checks = {"test_a": False}

    action = Action.from_call("write_file", {"path": "a.py"}, "ok", True, file_hashes=hashes, checks=checks)
    hashes["a.py"] = "h2"
    checks["test_a"] = True

    assert dict(action.file_hashes) == {"a.py": "h1"}
    assert action.checks is not None and dict(action.checks) == {"test_a": False}


def test_describe_names_the_tool_and_target() -> None:
    assert Action.from_call("bash", {"command": "make test"}, "", True).describe() == "bash `make test`"
    assert Action.from_call("read_file", {"path": "a.py"}, "", True).describe() == "read_file a.py"
    assert Action.from_call("complete", {"summary": "x"}, "", True).describe() == "complete"
    long = Action.from_call("bash", {"command": "echo " + "x" * 200}, "", True).describe()
    assert len(long) < 100 and long.endswith("...`")
