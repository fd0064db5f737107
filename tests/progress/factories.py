"""Builders for realistic tool calls, as the session layer would report them to the tracker."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from agentcli.progress import Action, ProgressTracker, StuckVerdict, stable_hash


def read(path: str, content: str | None = None) -> Action:
    """A successful `read_file` whose output is the file's numbered content."""
    text = content if content is not None else f"1: # {path}\n2: pass\n"
    return Action.from_call("read_file", {"path": path}, text, True)


def write(path: str, content: str) -> Action:
    """A successful `write_file`; the file's new content hash is the hash of `content`."""
    return Action.from_call(
        "write_file",
        {"path": path, "content": content},
        f"wrote {len(content)} bytes to {path}",
        True,
        file_hashes={path: stable_hash(content)},
    )


def edit(path: str, old: str, new: str, result: str) -> Action:
    """A successful `edit_file` leaving the file with content `result`."""
    return Action.from_call(
        "edit_file",
        {"path": path, "old_string": old, "new_string": new},
        f"edited {path}",
        True,
        file_hashes={path: stable_hash(result)},
    )


def failed_edit(path: str, old: str = "def helper(:", new: str = "def helper():") -> Action:
    """An `edit_file` whose old_string is not in the file."""
    error = f"old_string not found in {path}"
    return Action.from_call(
        "edit_file", {"path": path, "old_string": old, "new_string": new}, f"Error: {error}", False, error
    )


def bash(
    command: str,
    output: str,
    *,
    ok: bool = True,
    error: str | None = None,
    checks: Mapping[str, bool] | None = None,
    files: Mapping[str, str] | None = None,
) -> Action:
    """A `bash` call; `files` maps changed paths to their new content."""
    return Action.from_call(
        "bash",
        {"command": command},
        output,
        ok,
        error,
        file_hashes={path: stable_hash(text) for path, text in (files or {}).items()},
        checks=checks,
    )


def pytest_run(results: Mapping[str, bool], seconds: float = 0.42) -> Action:
    """`pytest -q` with per-test results; fails when any test fails."""
    failed = [name for name, passed in results.items() if not passed]
    summary = f"{len(results) - len(failed)} passed, {len(failed)} failed in {seconds:.2f}s"
    output = "".join(f"FAILED {name}\n" for name in failed) + summary
    return bash(
        "pytest -q",
        output,
        ok=not failed,
        error="exit status 1" if failed else None,
        checks=results,
    )


def feed(tracker: ProgressTracker, actions: Iterable[Action]) -> list[StuckVerdict | None]:
    """Record every action and collect what the tracker returned for each."""
    return [tracker.record(action) for action in actions]


def verdicts(results: list[StuckVerdict | None]) -> list[tuple[int, StuckVerdict]]:
    """The 1-based positions and verdicts of the non-empty results."""
    return [(i, v) for i, v in enumerate(results, start=1) if v is not None]
