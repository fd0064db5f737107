"""Themes are data: TOML files validated by pydantic, turned into Textual themes.

Bundled themes live in ``themes/`` at the repository root; a user adds their own in
``~/.config/agentcli/themes/`` (a user file with a bundled name replaces the bundled theme).
A bad file never stops the app: it is reported and skipped, and the app falls back to the
default theme. The chosen theme is remembered as ``theme = "..."`` in the user config file.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentcli.config_sources import config_home

DEFAULT_THEME = "agentcli-dark"
"""Used when the configured theme is unknown or its file is broken."""

BUNDLED_THEMES_DIR = Path(__file__).resolve().parents[2] / "themes"
"""``themes/`` at the repository root (next to the ``agentcli`` package in a checkout)."""
INSTALLED_THEMES_DIR = Path(sys.prefix) / "share" / "agentcli" / "themes"
"""Where an installed wheel puts ``themes/`` (as setuptools data-files), when it is not a checkout."""

ROLE_DEFAULTS: dict[str, str] = {
    "graph-active": "#ffa62b",
    "graph-visited": "#61afef",
    "graph-edge": "#5c6370",
    "tool-running": "#e5c07b",
    "tool-ok": "#98c379",
    "tool-error": "#e06c75",
    "timeline-tick": "#56b6c2",
    "diff-added": "#98c379",
    "diff-removed": "#e06c75",
}
"""The app's own colour roles and their literal defaults.

TCSS is parsed against the startup theme before any of ours is registered, so every custom
``$variable`` needs a literal default (``App.get_theme_variable_defaults``); a ``$accent``
reference is not accepted there.
"""

_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def _check_colour(value: str) -> str:
    from textual.color import Color, ColorParseError

    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"{value!r} is not a colour; use #rrggbb or a CSS colour name") from None
    return value


class ThemeColors(BaseModel):
    """The base colours Textual derives every shade from (``[colors]``)."""

    model_config = ConfigDict(extra="forbid")

    primary: str
    secondary: str | None = None
    accent: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    success: str | None = None
    warning: str | None = None
    error: str | None = None

    @field_validator("*")
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        return None if value is None else _check_colour(value)


class ThemeFile(BaseModel):
    """One ``themes/*.toml`` file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """The name shown in the palette and written to the config; lowercase words and dashes."""
    dark: bool = True
    luminosity_spread: float = Field(0.15, ge=0, le=1)
    text_alpha: float = Field(0.95, ge=0, le=1)
    colors: ThemeColors
    variables: dict[str, str] = Field(default_factory=dict)
    """Values for the app roles (``graph-active``...) and any Textual variable to override."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"{value!r} is not a theme name; use lowercase letters, digits and dashes")
        return value

    @field_validator("variables")
    @classmethod
    def _variables(cls, value: dict[str, str]) -> dict[str, str]:
        for key, colour in value.items():
            if key in ROLE_DEFAULTS:
                _check_colour(colour)
        return value

    def to_theme(self):  # -> textual.theme.Theme (imported lazily: this module loads before the app)
        """The Textual theme, with every app role filled (from the file or the defaults)."""
        from textual.theme import Theme

        return Theme(
            name=self.name,
            dark=self.dark,
            luminosity_spread=self.luminosity_spread,
            text_alpha=self.text_alpha,
            variables={**ROLE_DEFAULTS, **self.variables},
            **self.colors.model_dump(),
        )


class ThemeFileError(Exception):
    """A theme file cannot be read or is invalid; the message names the file and the field."""


def load_theme_file(path: Path) -> ThemeFile:
    """Read and validate one theme file.

    Raises:
        ThemeFileError: naming the file, the field and what is wrong.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ThemeFileError(f"cannot read theme {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ThemeFileError(f"invalid TOML in theme {path}: {error}") from None
    try:
        return ThemeFile.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc']) or '(top level)'}: {item['msg']}" for item in error.errors()
        )
        raise ThemeFileError(f"invalid theme {path}: {problems}") from None


def user_themes_dir() -> Path:
    """``~/.config/agentcli/themes`` (honours ``XDG_CONFIG_HOME``)."""
    return config_home() / "themes"


@dataclass(frozen=True)
class LoadedThemes:
    """Every theme found, and the problems met on the way (shown as notifications)."""

    themes: dict[str, ThemeFile]
    errors: list[str]


def load_themes(directories: Iterable[Path] | None = None) -> LoadedThemes:
    """Themes from the bundled folder, then the user folder (later files win on a name clash)."""
    bundled = BUNDLED_THEMES_DIR if BUNDLED_THEMES_DIR.is_dir() else INSTALLED_THEMES_DIR
    folders = list(directories) if directories is not None else [bundled, user_themes_dir()]
    themes: dict[str, ThemeFile] = {}
    errors: list[str] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ThemeFileError as error:
                errors.append(str(error))
                continue
            themes[theme.name] = theme
    return LoadedThemes(themes, errors)


# -- remembering the choice ------------------------------------------------------------------

_TABLE = re.compile(r"^\s*\[")
_THEME_LINE = re.compile(r"^\s*theme\s*=")


def remember_theme(name: str, config_file: Path | None = None) -> Path:
    """Write ``theme = "name"`` into the user config file, keeping everything else as it was.

    Only the top-level ``theme`` line is touched (added before the first table when missing),
    so comments and the user's formatting survive; a TOML writer would rewrite the whole file.

    Returns:
        The config file written.
    """
    path = config_file or config_home() / "config.toml"
    line = f'theme = "{name}"\n'
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    lines = text.splitlines(keepends=True)
    first_table = next((i for i, current in enumerate(lines) if _TABLE.match(current)), len(lines))
    for index in range(first_table):
        if _THEME_LINE.match(lines[index]):
            lines[index] = line
            break
    else:
        if first_table and not lines[first_table - 1].endswith("\n"):
            lines[first_table - 1] += "\n"
        lines.insert(first_table, line)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".toml.tmp")
    temporary.write_text("".join(lines), encoding="utf-8")
    temporary.replace(path)
    return path
