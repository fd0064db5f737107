"""Themes are data: TOML files checked against a small field table, turned into Textual themes.

The check is done by hand rather than with pydantic because a theme is loaded before the TUI's
first frame, and importing pydantic alone would add about 40 ms to that.

Bundled themes live in ``themes/`` at the repository root; a user adds their own in
``~/.config/agentcli/themes/`` (a user file with a bundled name replaces the bundled theme).
A bad file never stops the app: it is reported and skipped, and the app falls back to the
default theme. The chosen theme is remembered as ``theme = "..."`` in the user config file.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, Required, TypedDict

from textual.color import Color, ColorParseError
from textual.theme import Theme

from agentcli.config_sources import Layer, config_home, merge_layers, not_utf8

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


class ThemeColors(TypedDict, total=False):
    """A theme file's ``[colors]``: the base colours Textual derives every shade from."""

    primary: Required[str]
    secondary: str
    accent: str
    foreground: str
    background: str
    surface: str
    panel: str
    boost: str
    success: str
    warning: str
    error: str


@dataclass(frozen=True)
class ThemeSpec:
    """One valid ``themes/*.toml`` file (the defaults are in ``_check_theme`` below)."""

    name: str
    """The name shown in the palette and written to the config; lowercase words and dashes."""
    dark: bool
    luminosity_spread: float
    text_alpha: float
    colors: ThemeColors
    """The base colours Textual derives every shade from (``[colors]``); only those given."""
    variables: Mapping[str, str]
    """Values for the app roles (``graph-active``...) and any Textual variable to override."""

    def to_theme(self) -> Theme:
        """The Textual theme, with every app role filled (from the file or the defaults)."""
        return Theme(
            name=self.name,
            dark=self.dark,
            luminosity_spread=self.luminosity_spread,
            text_alpha=self.text_alpha,
            variables={**ROLE_DEFAULTS, **self.variables},
            **self.colors,
        )


class ThemeFileError(Exception):
    """A theme file cannot be read or is invalid; the message names the file and the field."""


# -- checking a file -------------------------------------------------------------------------


class _Invalid(Exception):
    """Problems inside a table, each as (path relative to the table, message)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__(problems)
        self.problems = problems


def _kind(value: Any) -> str:
    # Named in TOML's words, since that is what the user wrote.
    kinds: list[tuple[type | tuple[type, ...], str]] = [
        (bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
        (dict, "a table"), (list, "an array"), ((datetime, date, time), "a date or time")]
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {_kind(value)}")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {_kind(value)}")
    return value


def _fraction(value: Any) -> float:
    # bool is an int subclass, but `luminosity_spread = true` is a mistake, not 1.0.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number from 0 to 1, got {_kind(value)}")
    if not 0 <= value <= 1:
        raise ValueError(f"{value} is not from 0 to 1")
    return float(value)


_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def _name(value: Any) -> str:
    name = _string(value)
    if not _NAME.match(name):
        raise ValueError(f"{value!r} is not a theme name; use lowercase letters, digits and dashes")
    return name


def _colour(value: Any) -> str:
    colour = _string(value)
    try:
        Color.parse(colour)
    except ColorParseError:
        raise ValueError(f"{value!r} is not a colour; use #rrggbb or a CSS colour name") from None
    return colour


def _variables(value: Any) -> dict[str, str]:
    # Any Textual variable may be overridden, so keys are open; only the app's roles are known
    # to be colours (Textual's own variables also hold things like scrollbar sizes).
    if not isinstance(value, dict):
        raise TypeError(f"expected a table, got {_kind(value)}")
    problems: list[tuple[str, str]] = []
    for key, item in value.items():
        try:
            (_colour if key in ROLE_DEFAULTS else _string)(item)
        except (TypeError, ValueError) as error:
            problems.append((key, str(error)))
    if problems:
        raise _Invalid(problems)
    return dict(value)


_REQUIRED = object()
"""A field default meaning the field must be in the file."""
_ABSENT = object()
"""A field default meaning an absent field is left out (for colours: Textual derives them)."""

_Check = Callable[[Any], Any]


def _table(fields: dict[str, tuple[_Check, Any]]) -> _Check:
    """A check for a TOML table with exactly these keys: ``{key: (check, default)}``.

    Every field is checked even after a failure, so one message lists all the problems.
    """

    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise TypeError(f"expected a table, got {_kind(value)}")
        result: dict[str, Any] = {}
        problems: list[tuple[str, str]] = []
        for key, (check_field, default) in fields.items():
            if key in value:
                try:
                    result[key] = check_field(value[key])
                except (TypeError, ValueError) as error:
                    problems.append((key, str(error)))
                except _Invalid as inner:
                    problems += [(f"{key}.{path}", message) for path, message in inner.problems]
            elif default is _REQUIRED:
                problems.append((key, "required"))
            elif default is not _ABSENT:
                result[key] = default
        problems += [(key, "unknown key") for key in value if key not in fields]
        if problems:
            raise _Invalid(problems)
        return result

    return check


_check_colors = _table({
    "primary": (_colour, _REQUIRED),
    **dict.fromkeys((
        "secondary", "accent", "foreground", "background", "surface", "panel", "boost",
        "success", "warning", "error"), (_colour, _ABSENT)),
})

_check_theme = _table({
    "name": (_name, _REQUIRED),
    "dark": (_boolean, True),
    "luminosity_spread": (_fraction, 0.15),
    "text_alpha": (_fraction, 0.95),
    "colors": (_check_colors, _REQUIRED),
    "variables": (_variables, {}),
})


def load_theme_file(path: Path) -> ThemeSpec:
    """Read and validate one theme file.

    Raises:
        ThemeFileError: naming the file, the field and what is wrong.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ThemeFileError(f"cannot read theme {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise ThemeFileError(not_utf8(path, error)) from None
    except tomllib.TOMLDecodeError as error:
        raise ThemeFileError(f"invalid TOML in theme {path}: {error}") from None
    try:
        return ThemeSpec(**_check_theme(data))
    except _Invalid as error:
        problems = "; ".join(f"{where}: {message}" for where, message in error.problems)
        raise ThemeFileError(f"invalid theme {path}: {problems}") from None


def configured_theme(layers: list[Layer]) -> str | None:
    """The ``theme`` the config layers name, before they are validated.

    The app picks its theme before the first frame, while the settings are validated after it;
    a value of the wrong type is reported then, so here it only means "no theme named".
    """
    theme = merge_layers(layers).get("theme")
    return theme if isinstance(theme, str) else None


def user_themes_dir() -> Path:
    """``~/.config/agentcli/themes`` (honours ``XDG_CONFIG_HOME``)."""
    return config_home() / "themes"


@dataclass(frozen=True)
class LoadedThemes:
    """Every theme found, and the problems met on the way (shown as notifications)."""

    themes: dict[str, ThemeSpec]
    errors: list[str]


def load_themes(directories: Iterable[Path] | None = None) -> LoadedThemes:
    """Themes from the bundled folder, then the user folder (later files win on a name clash)."""
    bundled = BUNDLED_THEMES_DIR if BUNDLED_THEMES_DIR.is_dir() else INSTALLED_THEMES_DIR
    folders = list(directories) if directories is not None else [bundled, user_themes_dir()]
    themes: dict[str, ThemeSpec] = {}
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
