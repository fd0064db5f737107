"""`agentcli sessions` in a narrow and a wide terminal: every column is there, figures whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.config import Settings
from agentcli.session.factory import new_session
from tests.support.sessions import replay


@pytest.mark.parametrize("width", [80, 160])
async def test_every_column_shows_and_states_and_figures_are_whole(
    width: int, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.cli import app

    title = "Find out why the tests of the text statistics module fail and fix the bug for good"
    session = new_session(workspace, Settings(), model_client=replay(("", [("complete", {"summary": "s"})])),
                          default_permission_mode="all")
    await session.run_turn(title)
    session.close()
    monkeypatch.setenv("COLUMNS", str(width))
    listing = CliRunner().invoke(app, ["sessions", "--all"]).output
    header, row = listing.splitlines()[:2]
    assert header.split() == ["id", "age", "title", "state", "steps", "tokens", "cost", "workspace"]
    assert session.id in row and "completed" in row and "unknown" in row  # a replay has no price
    assert all(len(line) <= width for line in listing.splitlines())
    assert (title[:50] in row) == (width == 160)  # the title gives way first
