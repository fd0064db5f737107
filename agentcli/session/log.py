"""The session log: a directory per session with an append-only ``events.jsonl`` and ``meta.json``.

Every event is written as one line as it happens and flushed at once; the file is fsynced at turn
boundaries. ``meta.json`` is small and rewritten atomically, so listing thousands of sessions
reads only these files.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from agentcli.events import (
    EVENT_TYPES,
    SCHEMA_VERSION,
    AssistantMessage,
    ClarificationAnswered,
    Event,
    ModelChanged,
    SessionStarted,
    StateChanged,
    ToolCallFinished,
    TurnEnded,
    UsageReported,
    UserMessage,
    event_from_dict,
    event_to_dict,
)
from agentcli.pids import alive
from agentcli.secrets import Redactor
from agentcli.session.lock import SessionLock
from agentcli.tools.text import valid_text, valid_values

TITLE_CHARS = 80


class SessionNotFound(Exception):
    """No session has that id (or id prefix) in the data directory."""


class SessionLogWarning(UserWarning):
    """A log line could not be read (torn by a crash, or written by a newer version)."""


class SessionMeta(BaseModel):
    """The summary of a session that ``agentcli sessions`` lists."""

    id: str
    workspace: str
    created: datetime
    updated: datetime
    title: str = ""
    model: str = ""
    models: dict[str, str] = Field(default_factory=dict)
    """Models the user chose for a role (``/model plan …``), kept when the session is resumed."""
    api_base: str | None = None
    workflow: str = "single"
    sandbox: bool = False
    """Started (or last resumed) with ``bash`` under bubblewrap: resumed so too."""
    permission_mode: str | None = None
    """The permission mode it started (or was last resumed) in."""
    state: str = "idle"
    """The control state the session was last in."""
    outcome: str | None = None
    """How the last turn ended; None while a turn is running (or after a crash mid-turn)."""
    steps: int = 0
    """Model calls over the whole session."""
    tool_calls: int = 0
    input_tokens: int = 0
    """Every input token, read from the prompt cache or not."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache (a share of ``input_tokens``)."""
    peak_context: int = 0
    """The largest request the session sent, in input tokens (against the model's window)."""
    cost: float | None = 0.0
    pid: int | None = None
    """The process writing the session, while one is; with no outcome and a dead pid, the run was cut off."""
    schema_version: int = Field(SCHEMA_VERSION, alias="v")

    model_config = {"populate_by_name": True}


def sessions_dir(data_dir: Path) -> Path:
    return data_dir / "sessions"


class SessionLog:
    """Appends a session's events and keeps its ``meta.json`` current."""

    def __init__(self, directory: Path, meta: SessionMeta, redactor: Redactor | None = None,
                 lock: SessionLock | None = None) -> None:
        """Open the log for appending, holding the session's lock (``lock``, or taken here: raises
        :class:`~agentcli.session.lock.SessionInUse` when another process writes the session)
        until :meth:`close`."""
        self.directory = directory
        self.meta = meta
        self.redact = redactor or Redactor()
        directory.mkdir(parents=True, exist_ok=True)
        self.lock = lock or SessionLock.acquire(directory)
        try:
            path = directory / "events.jsonl"
            _set_torn_line_aside(path)
            self._file = path.open("a", encoding="utf-8")
            self.meta.pid = os.getpid()
            self._write_meta()
        except BaseException:
            self.lock.release()
            raise

    @classmethod
    def create(cls, data_dir: Path, session_id: str, workspace: Path, **fields: object) -> SessionLog:
        now = datetime.now(UTC)
        meta = SessionMeta(id=session_id, workspace=str(workspace), created=now, updated=now, **fields)  # type: ignore[arg-type]
        return cls(sessions_dir(data_dir) / session_id, meta)

    @classmethod
    def reopen(cls, directory: Path, lock: SessionLock | None = None) -> SessionLog:
        return cls(directory, read_meta(directory), lock=lock)

    def __call__(self, event: Event) -> None:
        """Subscriber: append one event, and fold it into the meta."""
        payload = {"v": SCHEMA_VERSION, **event_to_dict(event)}
        line = self.redact(json.dumps(payload, ensure_ascii=False))
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (bytes that are not UTF-8, from a file name or an argument) that
            # got past the entry points: kept as its escaped bytes rather than losing the event.
            line = self.redact(json.dumps(valid_values(payload), ensure_ascii=False))
        self._file.write(line + "\n")
        self._file.flush()
        self._fold(event)
        if isinstance(event, (TurnEnded, SessionStarted)):
            os.fsync(self._file.fileno())
            self._write_meta()
        elif isinstance(event, (UserMessage, ClarificationAnswered, AssistantMessage, ModelChanged)):
            # Fresh enough after a crash for a listing to show the task and how far it got.
            self._write_meta()

    def _fold(self, event: Event) -> None:
        meta = self.meta
        meta.updated = event.ts
        if isinstance(event, UserMessage) and not meta.title:
            meta.title = valid_text(self.redact(" ".join(event.text.split())))[:TITLE_CHARS]
        elif isinstance(event, StateChanged):
            meta.state = next((s for s in reversed(event.configuration) if not s.startswith("phase")), meta.state)
            if event.event in ("user_message", "answer", "resume"):
                meta.outcome = None
        elif isinstance(event, AssistantMessage):
            meta.steps += 1  # one model call (one cut off by a pause too)
        elif isinstance(event, ToolCallFinished):
            meta.tool_calls += 1
        elif isinstance(event, UsageReported):
            meta.input_tokens += event.input_tokens
            meta.output_tokens += event.output_tokens
            meta.cache_read_tokens += event.cache_read_tokens
            meta.peak_context = max(meta.peak_context, event.input_tokens)
            meta.cost = None if event.cost is None or meta.cost is None else meta.cost + event.cost
        elif isinstance(event, TurnEnded):
            meta.outcome = event.outcome
        elif isinstance(event, SessionStarted):
            meta.model, meta.api_base, meta.workflow = event.model, event.api_base, event.workflow
            meta.sandbox, meta.permission_mode = event.sandbox, event.permission_mode
        elif isinstance(event, ModelChanged):
            if event.role == "default":
                meta.model = event.model
            else:
                meta.models[event.role] = event.model

    def _write_meta(self) -> None:
        target = self.directory / "meta.json"
        temporary = target.with_suffix(".json.tmp")
        temporary.write_text(self.meta.model_dump_json(by_alias=True, indent=2), encoding="utf-8")
        os.replace(temporary, target)

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self.meta.pid = None
            self._write_meta()
        self.lock.release()


TORN_SUFFIX = ".torn"


def _set_torn_line_aside(path: Path) -> None:
    """Cut a last line a crash left unfinished off the log, keeping its bytes in ``events.jsonl.torn``.

    Appended onto the torn half, the next event would be unreadable too; and a torn line left in
    the middle of the log would be warned about on every later read. Cut off, it is warned about
    by the read that resumes the session and never again; its bytes stay at hand to look at.
    """
    try:
        with path.open("rb+") as log:
            size = log.seek(0, os.SEEK_END)
            if size == 0:
                return
            log.seek(size - 1)
            if log.read(1) == b"\n":
                return
            # The start of the torn line: just after the last newline (a torn line is one write,
            # far shorter than the whole log, so reading back in blocks finds it quickly).
            start = 0
            at = size
            while at > 0:
                step = min(at, 65536)
                at -= step
                log.seek(at)
                newline = log.read(step).rfind(b"\n")
                if newline >= 0:
                    start = at + newline + 1
                    break
            log.seek(start)
            torn = log.read()
            with path.with_name(path.name + TORN_SUFFIX).open("ab") as aside:
                aside.write(torn + b"\n")
                aside.flush()
                os.fsync(aside.fileno())
            log.truncate(start)
            log.flush()
            os.fsync(log.fileno())
    except FileNotFoundError:
        return


def status(meta: SessionMeta) -> str:
    """What a listing shows: how the last turn ended, or running / interrupted."""
    if meta.outcome is not None:
        return meta.outcome
    if meta.pid is not None and alive(meta.pid):
        return "running"
    return "interrupted" if meta.title else "new"


def read_meta(directory: Path) -> SessionMeta:
    try:
        return SessionMeta.model_validate_json((directory / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValidationError) as error:
        raise SessionNotFound(f"session at {directory} has no readable meta.json: {error}") from None


def read_events(directory: Path) -> Iterator[Event]:
    """Every event of a session, skipping (with a warning) a torn last line or unknown types."""
    path = directory / "events.jsonl"
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        lines = handle.readlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            where = "last line" if number == len(lines) else f"line {number}"
            warnings.warn(
                f"{path}: {where} is incomplete (torn by a crash?) and was skipped", SessionLogWarning, stacklevel=2
            )
            continue
        if data.get("type") not in EVENT_TYPES:
            warnings.warn(
                f"{path}: line {number} has unknown event type {data.get('type')!r} (newer version?); skipped",
                SessionLogWarning,
                stacklevel=2,
            )
            continue
        data.pop("v", None)
        try:
            yield event_from_dict(data)
        except ValidationError as error:
            count = error.error_count()
            warnings.warn(f"{path}: line {number} is not a valid event ({count} error{'s' if count > 1 else ''}); "
                          "skipped", SessionLogWarning, stacklevel=2)


@dataclass(frozen=True)
class SessionEntry:
    directory: Path
    meta: SessionMeta


def list_sessions(data_dir: Path, workspace: Path | None = None) -> list[SessionEntry]:
    """Sessions newest first, of one workspace or of all. Reads only the meta files."""
    root = sessions_dir(data_dir)
    if not root.is_dir():
        return []
    entries = []
    wanted = str(workspace) if workspace else None
    for directory in root.iterdir():
        try:
            meta = read_meta(directory)
        except SessionNotFound:
            continue
        if wanted is None or meta.workspace == wanted:
            entries.append(SessionEntry(directory, meta))
    entries.sort(key=lambda entry: entry.meta.updated, reverse=True)
    return entries


def find_session(data_dir: Path, ref: str) -> SessionEntry:
    """A session by full id or unique id prefix."""
    root = sessions_dir(data_dir)
    if (root / ref / "meta.json").is_file():
        return SessionEntry(root / ref, read_meta(root / ref))
    matches = [d for d in root.iterdir() if d.name.startswith(ref)] if root.is_dir() and ref else []
    if not matches:
        raise SessionNotFound(f"no session '{ref}'; `agentcli sessions --all` lists them")
    if len(matches) > 1:
        names = ", ".join(sorted(d.name for d in matches)[:5])
        raise SessionNotFound(f"'{ref}' matches several sessions ({names}); give more of the id")
    return SessionEntry(matches[0], read_meta(matches[0]))


def remove_session(entry: SessionEntry) -> None:
    """Delete a session's folder; raises ``SessionInUse`` while another process writes it.

    The lock is held while the folder goes, so no process can open the session half-removed.
    """
    lock = SessionLock.acquire(entry.directory)
    try:
        shutil.rmtree(entry.directory)
    finally:
        lock.release()
