"""Feeding the progress tracker from tool calls: content hashes, checks, and the verdicts.

The tracker itself (``progress/``) is pure; this module reads the files a call touched so the
tracker can tell new content from an edit that was undone, and recognises test and lint commands
so a newly passing check counts as progress.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from agentcli.config import ProgressConfig
from agentcli.events import ToolCallRequest
from agentcli.progress import Action, ProgressSummary, ProgressTracker, StuckVerdict
from agentcli.tools.base import ToolResult

_CHECK_COMMAND = re.compile(
    r"(^|[\s;&|(])(pytest|py\.test|unittest|tox|nox|ruff|mypy|pyright|flake8|pylint|eslint|tsc|jest|vitest|"
    r"npm (run )?test|yarn test|pnpm test|cargo (test|check|clippy)|go (test|vet)|make (test|check)|ctest|"
    r"mvn test|gradle test|rspec|phpunit)\b"
)
_MAX_HASHED_FILES = 64


def _hash_file(path: Path) -> str:
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    except FileNotFoundError:
        return "deleted"
    except OSError:
        return "unreadable"


def parse_arguments(raw: str) -> Mapping[str, object] | str:
    try:
        parsed = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw
    return parsed if isinstance(parsed, dict) else raw


class Watchdog:
    """One session's progress tracker, with what it needs from the workspace."""

    def __init__(self, workspace: Path, config: ProgressConfig) -> None:
        self.workspace = workspace
        self.tracker = ProgressTracker(config)
        self._before: dict[str, str] = {}

    def before(self, call: ToolCallRequest, modifies_files: bool) -> None:
        """Remember the content of the file an edit is about to change (to spot an undo)."""
        self._before = {}
        arguments = parse_arguments(call.arguments)
        if modifies_files and isinstance(arguments, Mapping) and isinstance(arguments.get("path"), str):
            rel = str(arguments["path"])
            self._before = {rel: _hash_file(self.workspace / rel)}

    def after(self, call: ToolCallRequest, result: ToolResult, changed: Iterable[str]) -> StuckVerdict | None:
        """Record the finished call; returns a verdict when the tracker sees a loop."""
        arguments = parse_arguments(call.arguments)
        paths = list(dict.fromkeys([*result.files_changed, *changed]))[:_MAX_HASHED_FILES]
        hashes = {rel: _hash_file(self.workspace / rel) for rel in paths}
        action = Action.from_call(
            call.name,
            arguments,
            result.output,
            result.ok,
            result.error,
            file_hashes=hashes,
            checks=self._checks(call, arguments, result),
            file_hashes_before={k: v for k, v in self._before.items() if k in hashes} or None,
        )
        self._before = {}
        return self.tracker.record(action)

    @staticmethod
    def _checks(call: ToolCallRequest, arguments: Mapping[str, object] | str, result: ToolResult) -> dict[str, bool] | None:
        if isinstance(result.data.get("results"), list):  # run_checks reports each command
            return {str(r.get("command")): bool(r.get("passed")) for r in result.data["results"] if isinstance(r, dict)}
        if call.name == "bash" and isinstance(arguments, Mapping):
            command = str(arguments.get("command", ""))
            if _CHECK_COMMAND.search(command) and "timed out" not in (result.error or ""):
                return {command: result.ok}
        return None

    def summary_due(self) -> bool:
        return self.tracker.summary_due()

    def summary(self) -> ProgressSummary:
        return self.tracker.summary()

    def reset(self, reason: str) -> None:
        self.tracker.reset(reason)
