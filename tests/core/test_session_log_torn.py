"""A log torn by a crash: the next event written after reopening it is never lost."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from pathlib import Path

from agentcli.events import UserMessage, event_to_json
from agentcli.session.log import SessionLog, SessionLogWarning, SessionMeta, read_events


def _reopen(directory: Path) -> SessionLog:
    now = datetime.now(UTC)
    return SessionLog(directory, SessionMeta(id="s", workspace="/w", created=now, updated=now))


def test_an_event_appended_after_a_torn_line_survives(tmp_path: Path) -> None:
    first = event_to_json(UserMessage(text="before the crash"))
    # SIGKILL in the middle of a write: half a JSON line, no newline.
    (tmp_path / "events.jsonl").write_text(first + "\n" + '{"type": "user_message", "te')
    log = _reopen(tmp_path)
    log(UserMessage(text="after the crash"))
    log.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        texts = [event.text for event in read_events(tmp_path) if isinstance(event, UserMessage)]
    assert texts == ["before the crash", "after the crash"]
    torn = [str(w.message) for w in caught if issubclass(w.category, SessionLogWarning)]
    assert len(torn) == 1 and "line 2" in torn[0]


def test_a_clean_log_gets_no_blank_line_on_reopen(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text(event_to_json(UserMessage(text="one")) + "\n")
    log = _reopen(tmp_path)
    log(UserMessage(text="two"))
    log.close()
    lines = (tmp_path / "events.jsonl").read_text().split("\n")
    assert len(lines) == 3 and lines[-1] == "" and all(lines[:2])
