"""The headless driver: however a turn ends or breaks, one line for the user, the session closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli import app
from agentcli.config import data_home
from agentcli.events import ErrorOccurred
from agentcli.session import Session, SessionStateError
from agentcli.session.log import list_sessions, read_events

runner = CliRunner()


def _model(tmp_path: Path) -> str:
    path = tmp_path / "rec.json"
    path.write_text(json.dumps({"turns": [{"tool_calls": [{"name": "complete", "arguments": {"summary": "done"}}]}]}))
    return f"replay:{path}"


async def _crash(self: Session, *args: object, **kwargs: object) -> None:
    raise RuntimeError("the registry\nfell over")


@pytest.mark.parametrize("method", ["send_user_message", "wait_turn"])
def test_an_unexpected_error_is_one_line_exit_1_and_its_traceback_is_in_the_session_log(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    monkeypatch.setattr(Session, method, _crash)
    result = runner.invoke(app, ["run", "go", "--model", _model(tmp_path), "--cwd", str(workspace)])
    assert result.exit_code == 1, result.output
    assert result.stderr == ("agentcli: internal error: RuntimeError: the registry fell over "
                             "(details in the session log)\n")
    assert "Traceback" not in result.output
    [entry] = list_sessions(data_home(), workspace)
    assert entry.meta.pid is None  # closed: the log flushed, the session resumable
    [error] = [event for event in read_events(entry.directory) if isinstance(event, ErrorOccurred)]
    assert error.kind == "internal" and error.exception == "RuntimeError" and error.fatal
    assert error.traceback is not None and "_crash" in error.traceback


def test_a_command_the_session_refuses_exits_2_with_its_message(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(self: Session, text: str, **kwargs: object) -> None:
        raise SessionStateError("cannot take a new message while thinking; pause first")

    monkeypatch.setattr(Session, "send_user_message", refuse)
    result = runner.invoke(app, ["run", "go", "--model", _model(tmp_path), "--cwd", str(workspace)])
    assert result.exit_code == 2
    assert result.stderr == "agentcli: cannot take a new message while thinking; pause first\n"
    [entry] = list_sessions(data_home(), workspace)
    assert entry.meta.pid is None


def test_a_turn_that_ends_gives_its_outcomes_exit_code(workspace: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "go", "--model", _model(tmp_path), "--cwd", str(workspace), "-o", "jsonl"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.splitlines()[-1])["outcome"] == "completed"
