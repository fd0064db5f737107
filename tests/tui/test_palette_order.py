"""The command palette with nothing typed: the app's actions first, then sessions, snapshots,
themes and races, whichever provider answers first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette
from textual.system_commands import SystemCommandsProvider

from agentcli.llm.replay import ReplayModel
from agentcli.tui.commands import SnapshotsProvider, ThemesProvider
from tests.tui.helpers import make_app, make_session, wait_for, wait_idle
from tests.tui.test_restore import EDITS


def palette_done(app: Any) -> bool:
    return isinstance(app.screen, CommandPalette) and not any(
        w.group == CommandPalette._GATHER_COMMANDS_GROUP and not w.is_finished for w in app.workers)


async def test_actions_come_first_however_late_their_provider_answers(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The actions' provider answers last: after the snapshots and the themes have all been listed.
    others_done = {SnapshotsProvider: asyncio.Event(), ThemesProvider: asyncio.Event()}

    def finishing(cls: type[Any]) -> Any:
        original = cls.discover

        async def discover(self: Any) -> AsyncIterator[Any]:
            async for hit in original(self):
                yield hit
            others_done[cls].set()
        return discover

    for cls in others_done:
        monkeypatch.setattr(cls, "discover", finishing(cls))
    system_discover = SystemCommandsProvider.discover

    async def late_discover(self: Any) -> AsyncIterator[Any]:
        for event in others_done.values():
            await event.wait()
        async for hit in system_discover(self):
            yield hit
    monkeypatch.setattr(SystemCommandsProvider, "discover", late_discover)

    session = make_session(project, ReplayModel(EDITS), snapshots=True)
    app = make_app(project, session, initial_prompt="fix it")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot, app)
        await wait_for(pilot, lambda: len(app.timeline.entries) >= 2, what="snapshots to list")
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: palette_done(app), what="the palette's list")
        titles = [option.prompt.plain.splitlines()[0] for option in app.screen.query_one(CommandList).options]
        actions = [i for i, title in enumerate(titles) if title.startswith(("agent:", "view:", "focus:"))]
        others = [i for i, title in enumerate(titles) if title.startswith(("snapshot: show", "theme:"))]
        assert actions and others, titles
        assert max(actions) < min(others), f"the actions first: {titles}"
        last_show = max(i for i, title in enumerate(titles) if title.startswith("snapshot: show"))
        first_theme = min(i for i, title in enumerate(titles) if title.startswith("theme:"))
        assert last_show < first_theme, f"snapshots, then themes: {titles}"
