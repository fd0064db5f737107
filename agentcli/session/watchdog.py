"""Feeding the progress tracker from tool calls: content hashes, checks, and the verdicts.

The tracker itself (``progress/``) is pure; this module reads the files a call touched so the
tracker can tell new content from an edit that was undone, and recognises test and lint commands
so a newly passing check counts as progress.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agentcli.config import ProgressConfig
from agentcli.events import ToolCallRequest
from agentcli.progress import Action, ProgressSummary, ProgressTracker, StuckVerdict
from agentcli.tools.base import Tool, ToolError, ToolResult
from agentcli.tools.paths import resolve_in_workspace
from agentcli.tools.registry import parse_arguments

_CHECK_COMMAND = re.compile(
    r"(^|[\s;&|(])(pytest|py\.test|unittest|tox|nox|ruff|mypy|pyright|flake8|pylint|eslint|tsc|jest|vitest|"
    r"npm (run )?test|yarn test|pnpm test|cargo (test|check|clippy)|go (test|vet)|make (test|check)|ctest|"
    r"mvn test|gradle test|rspec|phpunit)\b"
)
_MAX_HASHED_FILES = 64
_MAX_HASHED_BYTES = 4 * 1024 * 1024
"""Larger files are told apart by size and modification time instead of content."""


def _hash_file(workspace: Path, rel: str) -> str:
    """A content hash of a workspace file, read only if it is a regular file inside the workspace.

    The model names these paths, so a FIFO, a device or a link out of the workspace must never
    be opened here (reading ``/dev/zero`` or a FIFO would never end).
    """
    try:
        path = resolve_in_workspace(workspace, rel)
        info = os.stat(path)
    except ToolError:
        return "unusable"
    except FileNotFoundError:
        return "deleted"
    except OSError:
        return "unreadable"
    if not stat.S_ISREG(info.st_mode):
        return "not a file"
    if info.st_size > _MAX_HASHED_BYTES:
        return f"large:{info.st_size}:{info.st_mtime_ns}"
    digest = hashlib.blake2b(digest_size=16)
    try:
        with open(
            path, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK | os.O_NOFOLLOW)
        ) as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return "unreadable"
    return digest.hexdigest()


class Watchdog:
    """One session's progress tracker, with what it needs from the workspace."""

    def __init__(self, workspace: Path, config: ProgressConfig) -> None:
        self.workspace = workspace
        self.tracker = ProgressTracker(config)
        self._before: dict[str, str] = {}

    def before(self, call: ToolCallRequest, tool: type[Tool[Any]]) -> None:
        """Remember the content of the file a write is about to change (to spot an undo).

        Blocking file IO: call it from a worker thread.
        """
        self._before = {}
        arguments = parse_arguments(call.arguments)
        if tool.changes_files == "never" or tool.target_kind != "path" or isinstance(arguments, str):
            return
        rel = tool.target_of(arguments)
        if rel:
            self._before = {rel: _hash_file(self.workspace, rel)}

    def after(
        self, call: ToolCallRequest, tool: type[Tool[Any]], result: ToolResult, changed: Iterable[str]
    ) -> StuckVerdict | None:
        """Record the finished call; returns a verdict when the tracker sees a loop.

        Blocking file IO (it hashes the files the call changed): call it off the event loop
        where that matters.
        """
        arguments = parse_arguments(call.arguments)
        paths = list(dict.fromkeys([*result.files_changed, *changed]))[:_MAX_HASHED_FILES]
        hashes = {rel: _hash_file(self.workspace, rel) for rel in paths}
        action = Action.from_call(
            call.name,
            arguments,
            result.output,
            result.ok,
            result.error,
            file_hashes=hashes,
            checks=self._checks(tool, arguments, result),
            file_hashes_before={k: v for k, v in self._before.items() if k in hashes} or None,
        )
        self._before = {}
        return self.tracker.record(action)

    @staticmethod
    def _checks(
        tool: type[Tool[Any]], arguments: Mapping[str, object] | str, result: ToolResult
    ) -> dict[str, bool] | None:
        """Check results the call reports (run_checks), or a test or lint command it ran."""
        if isinstance(result.data.get("results"), list):
            return {str(r.get("command")): bool(r.get("passed")) for r in result.data["results"] if isinstance(r, dict)}
        if tool.target_kind == "command" and isinstance(arguments, Mapping):
            command = tool.target_of(arguments) or ""
            if _CHECK_COMMAND.search(command) and "timed out" not in (result.error or ""):
                return {command: result.ok}
        return None

    def summary_due(self) -> bool:
        return self.tracker.summary_due()

    def summary(self) -> ProgressSummary:
        return self.tracker.summary()

    def reset(self, reason: str) -> None:
        self.tracker.reset(reason)

    def enter_phase(self, name: str) -> None:
        self.tracker.enter_phase(name)
