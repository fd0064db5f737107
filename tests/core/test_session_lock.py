"""The session lock against a real second process: refused while it holds the log, free once it dies."""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentcli.events import UserMessage
from agentcli.session.lock import SessionInUse
from agentcli.session.log import SessionEntry, SessionLog, SessionMeta, read_events, read_meta, remove_session

HOLD = """
import sys
from pathlib import Path
from agentcli.session.log import SessionLog
log = SessionLog.reopen(Path(sys.argv[1]))
print("open", flush=True)
sys.stdin.read()
"""


def _logged(directory: Path) -> None:
    now = datetime.now(UTC)
    log = SessionLog(directory, SessionMeta(id=directory.name, workspace="/w", created=now, updated=now))
    log(UserMessage(text="hello"))
    log.close()


def test_a_log_held_by_another_process_is_refused_until_it_is_killed(tmp_path: Path) -> None:
    directory = tmp_path / "5e55100c0000"
    _logged(directory)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(directory)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        before = (directory / "events.jsonl").read_bytes()
        with pytest.raises(SessionInUse) as refused:
            SessionLog.reopen(directory)
        assert str(refused.value) == f"session 5e55100c0000 is in use by another agentcli (pid {holder.pid})"
        with pytest.raises(SessionInUse):
            remove_session(SessionEntry(directory, read_meta(directory)))
        assert (directory / "events.jsonl").read_bytes() == before
        assert read_meta(directory).pid == holder.pid
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=60)
    # The kernel let the lock go with the process: nothing to clean up.
    log = SessionLog.reopen(directory)
    log(UserMessage(text="after the crash"))
    log.close()
    assert [e.text for e in read_events(directory) if isinstance(e, UserMessage)] == ["hello", "after the crash"]
    remove_session(SessionEntry(directory, read_meta(directory)))
    assert not directory.exists()


def test_a_closed_log_frees_the_session_in_the_same_process(tmp_path: Path) -> None:
    directory = tmp_path / "5e55100c0001"
    _logged(directory)
    first = SessionLog.reopen(directory)
    with pytest.raises(SessionInUse):
        SessionLog.reopen(directory)  # one writer, even within a process
    first.close()
    SessionLog.reopen(directory).close()
    assert read_meta(directory).pid is None
