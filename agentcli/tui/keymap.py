"""User key bindings: ``~/.config/agentcli/keymap.toml`` maps binding ids to keys.

    # keymap.toml
    "agentcli.pause" = "f5"
    "agentcli.pane.graph" = "ctrl+y,f6"

Every binding of the TUI has an ``agentcli.*`` id (the footer and ``f1`` show them); Textual's
``App.set_keymap`` swaps the keys. An unknown id or a bad file is reported, never fatal.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from agentcli.config_sources import config_home, not_utf8


class KeymapError(Exception):
    """The keymap file cannot be read or is not a table of strings; the message names the file."""


def keymap_file() -> Path:
    return config_home() / "keymap.toml"


def load_keymap(path: Path | None = None, known_ids: set[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The keymap, and warnings about entries that were skipped.

    Raises:
        KeymapError: the file is unreadable or not valid TOML.
    """
    path = path or keymap_file()
    if not path.is_file():
        return {}, []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise KeymapError(f"cannot read the keymap {path}: {error}") from None
    except UnicodeDecodeError as error:
        raise KeymapError(not_utf8(path, error)) from None
    keymap: dict[str, str] = {}
    warnings: list[str] = []
    for binding_id, keys in data.items():
        if not isinstance(keys, str) or not keys.strip():
            warnings.append(f"{path}: {binding_id!r} must be a key string such as \"ctrl+k\"; skipped")
        elif known_ids is not None and binding_id not in known_ids:
            warnings.append(f"{path}: no binding has the id {binding_id!r}; skipped")
        else:
            keymap[binding_id] = keys
    return keymap, warnings
