"""A missing API key is said at start-up, before the user types a task into a session that
cannot answer it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.tui.key_check import TITLE
from tests.tui.helpers import recording, wait_for, write_recording
from tests.tui.test_startup import app_for

KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_BASE", "OPENAI_BASE_URL")


async def test_no_key_is_said_at_start_with_what_to_do(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    app = app_for(project, model="anthropic/claude-sonnet-4-5")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: any(n.title == TITLE for n in app._notifications), what="the key notice")
        [notice] = [n for n in app._notifications if n.title == TITLE]
        assert "ANTHROPIC_API_KEY is not set" in notice.message and "anthropic/claude-sonnet-4-5" in notice.message
        assert "/model" in notice.message and "agentcli demo" in notice.message
        assert notice.severity == "warning" and app.session is not None  # the session is there to switch models


async def test_a_model_that_needs_no_key_starts_quietly(project: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    model = write_recording(tmp_path / "rec.json", recording(("Done.", [("complete", {"summary": "ok"})])))
    app = app_for(project, model=model)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        await pilot.pause()
        assert not [n for n in app._notifications if n.title == TITLE]
