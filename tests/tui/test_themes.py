"""Themes are TOML files checked field by field; a bad one falls back; the choice is remembered."""

from __future__ import annotations

import subprocess
import sys
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
from tests.tui.helpers import drain, make_app, palette_highlights, wait_for


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


MINIMAL = 'name = "mine"\n[colors]\nprimary = "#123456"\n'


def write_theme(folder: Path, text: str) -> Path:
    path = folder / "theme.toml"
    path.write_text(text, encoding="utf-8")
    return path


def problems_in(folder: Path, text: str) -> str:
    """The message of the error raised for a theme file with this text."""
    path = write_theme(folder, text)
    with pytest.raises(ThemeFileError) as raised:
        load_theme_file(path)
    message = str(raised.value)
    assert message.startswith(f"invalid theme {path}: ")
    return message.removeprefix(f"invalid theme {path}: ")


def test_a_minimal_theme_gets_the_defaults(tmp_path: Path) -> None:
    spec = load_theme_file(write_theme(tmp_path, MINIMAL))
    assert (spec.name, spec.dark, spec.luminosity_spread, spec.text_alpha) == ("mine", True, 0.15, 0.95)
    assert spec.colors == {"primary": "#123456"}
    assert spec.variables == {}
    theme = spec.to_theme()
    assert (theme.name, theme.primary, theme.secondary, theme.dark) == ("mine", "#123456", None, True)
    assert theme.variables == ROLE_DEFAULTS


def test_every_field_of_a_full_theme_reaches_the_textual_theme(tmp_path: Path) -> None:
    colours = ("secondary", "accent", "foreground", "background", "surface", "panel", "boost",
               "success", "warning", "error")
    text = (
        'name = "full-1"\ndark = false\nluminosity_spread = 0\ntext_alpha = 1\n'
        '[colors]\nprimary = "red"\n' + "".join(f'{key} = "#010203"\n' for key in colours)
        + '[variables]\ngraph-active = "rgb(1,2,3)"\nscrollbar-size = "2"\n'
    )
    spec = load_theme_file(write_theme(tmp_path, text))
    assert isinstance(spec.luminosity_spread, float) and spec.luminosity_spread == 0.0
    theme = spec.to_theme()
    assert (theme.dark, theme.luminosity_spread, theme.text_alpha, theme.primary) == (False, 0.0, 1.0, "red")
    assert all(getattr(theme, key) == "#010203" for key in colours)
    assert theme.variables == {**ROLE_DEFAULTS, "graph-active": "rgb(1,2,3)", "scrollbar-size": "2"}


@pytest.mark.parametrize("path", sorted(BUNDLED_THEMES_DIR.glob("*.toml")), ids=lambda path: path.stem)
def test_each_bundled_theme_file_loads(path: Path) -> None:
    spec = load_theme_file(path)
    assert spec.name == path.stem
    assert spec.to_theme().variables.keys() == ROLE_DEFAULTS.keys()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (MINIMAL + "[extra]\na = 1\n", "extra: unknown key"),
        ('mood = "calm"\n' + MINIMAL, "mood: unknown key"),
        (MINIMAL + 'tertiary = "red"\n', "colors.tertiary: unknown key"),
        ('name = "mine"\n', "colors: required"),
        ('name = "mine"\ncolors = "red"\n', "colors: expected a table, got a string"),
        ('name = "mine"\n[colors]\naccent = "red"\n', "colors.primary: required"),
        ('[colors]\nprimary = "red"\n', "name: required"),
        ('name = "mine"\n[colors]\nprimary = "#zz"\n',
         "colors.primary: '#zz' is not a colour; use #rrggbb or a CSS colour name"),
        ('name = "mine"\n[colors]\nprimary = "red"\npanel = "not-a-colour"\n',
         "colors.panel: 'not-a-colour' is not a colour; use #rrggbb or a CSS colour name"),
        ('name = "mine"\n[colors]\nprimary = 123\n', "colors.primary: expected a string, got an integer"),
        (MINIMAL + '[variables]\ntool-ok = "greenish"\n',
         "variables.tool-ok: 'greenish' is not a colour; use #rrggbb or a CSS colour name"),
        (MINIMAL + "[variables]\nscrollbar-size = 2\n", "variables.scrollbar-size: expected a string, got an integer"),
        (MINIMAL.replace("mine", "My Theme"),
         "name: 'My Theme' is not a theme name; use lowercase letters, digits and dashes"),
        (MINIMAL.replace("mine", "-mine"),
         "name: '-mine' is not a theme name; use lowercase letters, digits and dashes"),
        (MINIMAL.replace('"mine"', "7"), "name: expected a string, got an integer"),
        ("luminosity_spread = 1.5\n" + MINIMAL, "luminosity_spread: 1.5 is not from 0 to 1"),
        ("text_alpha = -1\n" + MINIMAL, "text_alpha: -1 is not from 0 to 1"),
        ("text_alpha = true\n" + MINIMAL, "text_alpha: expected a number from 0 to 1, got a boolean"),
        ('luminosity_spread = "x"\n' + MINIMAL, "luminosity_spread: expected a number from 0 to 1, got a string"),
        ('dark = "yes"\n' + MINIMAL, "dark: expected true or false, got a string"),
        ("dark = 1\n" + MINIMAL, "dark: expected true or false, got an integer"),
    ],
)
def test_each_kind_of_mistake_is_named_with_its_field(tmp_path: Path, text: str, problem: str) -> None:
    assert problems_in(tmp_path, text) == problem


def test_variables_that_are_not_app_roles_are_not_checked_as_colours(tmp_path: Path) -> None:
    spec = load_theme_file(write_theme(tmp_path, MINIMAL + '[variables]\nblock-cursor-text-style = "bold"\n'))
    assert spec.variables == {"block-cursor-text-style": "bold"}


def test_every_problem_in_a_file_is_reported_at_once(tmp_path: Path) -> None:
    text = (
        'name = "Bad"\ndark = "yes"\nluminosity_spread = true\ntext_alpha = 2\nbogus = 1\n'
        '[colors]\nprimary = "#zz"\nnope = "red"\n'
        '[variables]\ngraph-active = "zz"\nanything = "goes"\n'
    )
    assert problems_in(tmp_path, text) == "; ".join([
        "name: 'Bad' is not a theme name; use lowercase letters, digits and dashes",
        "dark: expected true or false, got a string",
        "luminosity_spread: expected a number from 0 to 1, got a boolean",
        "text_alpha: 2 is not from 0 to 1",
        "colors.primary: '#zz' is not a colour; use #rrggbb or a CSS colour name",
        "colors.nope: unknown key",
        "variables.graph-active: 'zz' is not a colour; use #rrggbb or a CSS colour name",
        "bogus: unknown key",
    ])


def test_a_missing_theme_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ThemeFileError, match=r"cannot read theme .*absent\.toml"):
        load_theme_file(tmp_path / "absent.toml")


def test_a_broken_file_is_skipped_and_the_others_still_load(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text(MINIMAL)
    (tmp_path / "bad.toml").write_text('name = "bad"\n')
    loaded = load_themes([tmp_path])
    assert list(loaded.themes) == ["mine"]
    assert len(loaded.errors) == 1 and "bad.toml: colors: required" in loaded.errors[0]


def test_importing_the_themes_module_does_not_import_pydantic() -> None:
    # A theme is loaded before the first frame; pydantic's import alone costs ~40 ms.
    code = "import sys, agentcli.tui.themes; print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    )
    assert result.stdout.strip() == "[]"


def test_user_themes_are_added_and_override_bundled_ones() -> None:
    folder = user_themes_dir()
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text('name = "mine"\ndark = false\n[colors]\nprimary = "#123456"\n')
    (folder / "dark.toml").write_text('name = "agentcli-dark"\n[colors]\nprimary = "#ff0000"\n')
    loaded = load_themes()
    assert loaded.themes["mine"].colors["primary"] == "#123456"
    assert loaded.themes["agentcli-dark"].colors["primary"] == "#ff0000"


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
        await wait_for(pilot, lambda: palette_highlights(app, "agentcli-light"), what="the palette to find the theme")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == "agentcli-light", what="the theme to change")
        # The change is announced to the app after the theme is set, and remembered then.
        config = config_home() / "config.toml"
        await wait_for(pilot, lambda: config.exists() and "agentcli-light" in config.read_text(),
                       what="the theme to be remembered")
    assert 'theme = "agentcli-light"' in (config_home() / "config.toml").read_text()


async def test_the_theme_flag_wins_and_is_not_written(project: Path) -> None:
    app = make_app(project, None, theme="agentcli-high-contrast")
    async with app.run_test(size=(100, 30)) as pilot:
        await drain(pilot)  # the start-up theme's announcement handled: it must not be written
        assert app.theme == "agentcli-high-contrast"
    assert not (config_home() / "config.toml").exists()


async def test_an_unknown_theme_falls_back_with_a_notification(project: Path) -> None:
    app = make_app(project, None, theme="no-such-theme")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: any("no-such-theme" in n.message for n in app._notifications),
                       what="the notification")
        assert app.theme == "agentcli-dark"
        assert any("no-such-theme" in n.message for n in app._notifications)


async def test_a_broken_user_theme_is_skipped_with_a_notification(project: Path) -> None:
    folder = user_themes_dir()
    folder.mkdir(parents=True)
    (folder / "bad.toml").write_text('name = "bad"\n[colors]\nprimary = "nope"\n')
    app = make_app(project, None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: any("bad.toml" in n.message for n in app._notifications),
                       what="the notification")
        assert "bad" not in app.available_themes
        assert any("bad.toml" in n.message for n in app._notifications)


async def test_a_user_theme_that_is_not_utf8_is_skipped_with_a_notification(project: Path) -> None:
    folder = user_themes_dir()
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_bytes(b"\xff\xfe" + 'name = "mine"\n'.encode("utf-16-le"))
    app = make_app(project, None)
    wanted = f"{folder / 'mine.toml'}: not UTF-8 (byte 0xff at offset 0)"
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: any(wanted in n.message for n in app._notifications), what="the notification")
        assert app.theme == "agentcli-dark"  # the app runs on, with the default theme
        assert "agentcli-light" in app.available_themes  # the other themes still load
