"""A command of the app's that raises (a bug) is said on screen and logged, not swallowed: the
app's command workers do not end the app, and before this a failing one did nothing, silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config import data_home
from agentcli.llm.replay import ReplayModel
from tests.tui.helpers import make_app, make_session, recording, wait_for


async def test_a_command_that_raises_is_a_notice_and_a_logged_traceback(project: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    session = make_session(project, ReplayModel(recording(("Done.", []))), record=True, data_dir=data_home())
    app = make_app(project, session)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")

        async def broken(*args: object) -> None:
            raise RuntimeError("the controller\nbroke")

        monkeypatch.setattr(app.commands, "submit", broken)
        app.send_prompt("hello")
        await wait_for(pilot, lambda: any(n.title == "Internal error" for n in app._notifications),
                       what="the failure said")
        [shown] = [n for n in app._notifications if n.title == "Internal error"]
        assert shown.message == "RuntimeError: the controller broke (details in the session log)"
        assert shown.severity == "error" and app.is_running
        assert session.log is not None
        logged = [json.loads(line) for line in (session.log.directory / "events.jsonl").read_text().splitlines()]
        [error] = [e for e in logged if e["type"] == "error" and e.get("exception") == "RuntimeError"]
        assert "Traceback" in error["traceback"] and "broken" in error["traceback"]
