"""Fixtures for the TUI tests: a home folder with a project in it, so paths print the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.helpers import demo_project


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$HOME for the test: the workspace then shows as ``~/project`` on every machine."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(home: Path) -> Path:
    """The demo project (a small Python package with a failing test) in ``~/project``."""
    return demo_project(home / "project").resolve()


@pytest.fixture(autouse=True)
def graph_fade_frozen(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots show the transition just taken bright however long a loaded machine took to get
    there: its fade (seconds, on Textual's timers) is frozen for them, as the clock is."""
    if "snap_compare" in request.fixturenames:
        from agentcli.tui.widgets._state_graph import StateGraph

        monkeypatch.setattr(StateGraph, "fade_s", None)
