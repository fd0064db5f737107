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
    # Reopening cut the torn line off (the read that resumed the session warned about it), so
    # later reads do not warn again; its bytes are kept aside.
    assert [w for w in caught if issubclass(w.category, SessionLogWarning)] == []
    assert (tmp_path / "events.jsonl.torn").read_text() == '{"type": "user_message", "te\n'


def test_reopening_a_torn_log_warns_on_the_next_read_only(tmp_path: Path) -> None:
    lines = [event_to_json(UserMessage(text=f"message {n}")) for n in range(3)]
    (tmp_path / "events.jsonl").write_text("\n".join(lines) + "\n" + lines[0][:17])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(list(read_events(tmp_path))) == 3
        _reopen(tmp_path).close()
        for _ in range(2):
            assert len(list(read_events(tmp_path))) == 3
    torn = [str(w.message) for w in caught if issubclass(w.category, SessionLogWarning)]
    assert len(torn) == 1 and "last line is incomplete" in torn[0]
    assert (tmp_path / "events.jsonl").read_text() == "\n".join(lines) + "\n"
    assert (tmp_path / "events.jsonl.torn").read_text() == lines[0][:17] + "\n"


def test_a_clean_log_gets_no_blank_line_on_reopen(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text(event_to_json(UserMessage(text="one")) + "\n")
    log = _reopen(tmp_path)
    log(UserMessage(text="two"))
    log.close()
    lines = (tmp_path / "events.jsonl").read_text().split("\n")
    assert len(lines) == 3 and lines[-1] == "" and all(lines[:2])
