"""The prompt history: what the user sent in this workspace, across sessions, newest last.

One JSON string per line in the data folder, keyed by the workspace path (the same folder the
sessions use). JSON lines rather than plain lines: a message may span lines.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from agentcli.config_sources import data_home

MAX_ENTRIES = 1000
"""Kept per workspace; older ones are dropped when the file is rewritten."""
MAX_ENTRY_CHARS = 50_000
"""A message longer than this (a huge paste) is not kept: recalling it is rarely wanted, and a few
would make the file slow to read at start-up."""


def history_path(workspace: Path, data_dir: Path | None = None) -> Path:
    key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
    return (data_dir or data_home()) / "history" / f"{key}.jsonl"


class PromptHistory:
    """Entries oldest first; ``add`` appends to the file at once (a crash loses nothing)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[str] = []
        self.problem: str | None = None
        """Why the file could not be read or written, if it could not (the history still works
        for this run)."""
        self._load()

    def _load(self) -> None:
        try:
            raw = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return
        except OSError as error:
            self.problem = f"cannot read the prompt history {self.path}: {error}"
            return
        for line in raw:
            try:
                value = json.loads(line.decode("utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                # A torn line from a crash, or one not UTF-8 (edited by hand): that line only is
                # skipped, rather than the whole history being unreadable.
                continue
            if isinstance(value, str) and value:
                self.entries.append(value)
        if len(self.entries) > MAX_ENTRIES:
            self.entries = self.entries[-MAX_ENTRIES:]
            self._rewrite()

    def _rewrite(self) -> None:
        try:
            self.path.write_text("".join(json.dumps(e) + "\n" for e in self.entries), encoding="utf-8")
        except OSError as error:
            self.problem = f"cannot write the prompt history {self.path}: {error}"

    def add(self, text: str) -> None:
        """Remember a sent message (the same as the last one is not repeated)."""
        text = text.strip()
        if not text or len(text) > MAX_ENTRY_CHARS or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(text) + "\n")
        except OSError as error:
            self.problem = f"cannot write the prompt history {self.path}: {error}"

    def search(self, needle: str, limit: int = 50) -> list[str]:
        """Entries containing ``needle`` (case-insensitive), newest first, without repeats."""
        needle = needle.lower()
        seen: set[str] = set()
        found: list[str] = []
        for entry in reversed(self.entries):
            if entry in seen or needle not in entry.lower():
                continue
            seen.add(entry)
            found.append(entry)
            if len(found) >= limit:
                break
        return found
