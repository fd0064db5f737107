"""Themes are TOML files validated by pydantic; a bad one falls back; the choice is remembered."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from textual.widgets import Input

from agentcli.config import config_home, load_settings
from agentcli.tui.themes import (
    BUNDLED_THEMES_DIR,
    ROLE_DEFAULTS,
    ThemeFileError,
    load_theme_file,
    load_themes,
    remember_theme,
    user_themes_dir,
)
from tests.tui.helpers import make_app, wait_for


def test_the_bundled_themes_are_valid_and_fill_every_role() -> None:
    loaded = load_themes([BUNDLED_THEMES_DIR])
    assert loaded.errors == []
    assert {"agentcli-dark", "agentcli-light", "agentcli-high-contrast"} <= set(loaded.themes)
    assert loaded.themes["agentcli-light"].dark is False
    for theme in loaded.themes.values():
        assert set(ROLE_DEFAULTS) <= set(theme.to_theme().variables)


def test_a_bad_theme_file_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "broken"\n[colors]\nprimary = "not-a-colour"\n')
    with pytest.raises(ThemeFileError, match=r"broken\.toml.*colors\.primary"):
        load_theme_file(path)
    path.write_text("name = [")
    with pytest.raises(ThemeFileError, match="invalid TOML"):
        load_theme_file(path)


def test_user_themes_are_added_and_override_bundled_ones() -> None:
    folder = user_themes_dir()
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text('name = "mine"\ndark = false\n[colors]\nprimary = "#123456"\n')
    (folder / "dark.toml").write_text('name = "agentcli-dark"\n[colors]\nprimary = "#ff0000"\n')
    loaded = load_themes()
    assert loaded.themes["mine"].colors.primary == "#123456"
    assert loaded.themes["agentcli-dark"].colors.primary == "#ff0000"


def test_remembering_a_theme_keeps_the_rest_of_the_config(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('# my settings\nmodel = "openai/gpt-4o"\n\n[retry]\nattempts = 2\n')
    remember_theme("agentcli-light", config)
    assert config.read_text() == (
        '# my settings\nmodel = "openai/gpt-4o"\n\ntheme = "agentcli-light"\n[retry]\nattempts = 2\n'
    )
    remember_theme("agentcli-dark", config)
    data = tomllib.loads(config.read_text())
    assert data == {"model": "openai/gpt-4o", "theme": "agentcli-dark", "retry": {"attempts": 2}}
    assert config.read_text().count("theme =") == 1


def test_remembering_creates_the_config_file() -> None:
    path = remember_theme("agentcli-high-contrast")
    assert path == config_home() / "config.toml"
    assert load_settings(Path.cwd(), environ={}).theme == "agentcli-high-contrast"


async def test_switching_theme_from_the_palette_is_remembered(project: Path) -> None:
    app = make_app(project, None)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.theme == "agentcli-dark"
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: app.screen.query(Input).first() is not None and app.screen is not app.screen_stack[0])
        await pilot.press(*"theme: agentcli-light")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == "agentcli-light", what="the theme to change")
        await pilot.pause(0.1)
    assert 'theme = "agentcli-light"' in (config_home() / "config.toml").read_text()


async def test_the_theme_flag_wins_and_is_not_written(project: Path) -> None:
    app = make_app(project, None, theme="agentcli-high-contrast")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "agentcli-high-contrast"
    assert not (config_home() / "config.toml").exists()


async def test_an_unknown_theme_falls_back_with_a_notification(project: Path) -> None:
    app = make_app(project, None, theme="no-such-theme")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "agentcli-dark"
        assert any("no-such-theme" in n.message for n in app._notifications)


async def test_a_broken_user_theme_is_skipped_with_a_notification(project: Path) -> None:
    folder = user_themes_dir()
    folder.mkdir(parents=True)
    (folder / "bad.toml").write_text('name = "bad"\n[colors]\nprimary = "nope"\n')
    app = make_app(project, None)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert "bad" not in app.available_themes
        assert any("bad.toml" in n.message for n in app._notifications)
