"""Where configuration comes from, read but not validated: the user file, the workspace file,
``AGENTCLI_*`` variables and flags, as plain dicts in precedence order.

Kept apart from :mod:`agentcli.config` (the pydantic models) so code that only needs a path or a
raw value, such as the TUI before its first frame, does not pay for importing pydantic.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORKSPACE_CONFIG = ".agentcli.toml"
ENV_PREFIX = "AGENTCLI_"
ENV_SOURCE = "environment variables (AGENTCLI_*)"
FLAGS_SOURCE = "command-line options"

# Variables with the prefix that are not settings: they must not be read as unknown fields.
_NOT_SETTINGS = frozenset({"AGENTCLI_DATA_DIR", "AGENTCLI_NO_WARMUP"})

# Lists that add up across layers instead of replacing: a workspace's "always" approvals must not
# hide the user's own rules.
_ACCUMULATED = frozenset({("permissions", "allow"), ("permissions", "deny")})


class ConfigError(Exception):
    """A configuration source is unreadable or invalid. The message names source and field."""


@dataclass(frozen=True)
class Layer:
    """One source's values, named as an error message should name it."""

    source: str
    values: dict[str, Any]


def config_home() -> Path:
    """``$XDG_CONFIG_HOME/agentcli`` (``~/.config/agentcli`` by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentcli"


def data_home() -> Path:
    """``$XDG_DATA_HOME/agentcli`` (``~/.local/share/agentcli`` by default): sessions, snapshots."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentcli"


def not_utf8(path: Path | str, error: UnicodeDecodeError) -> str:
    """``FILE: not UTF-8 (byte 0xff at offset 0); …``: what a user file that does not decode is told.

    Every loader of a user-written file (config, workflows, themes, keymap, `.mcp.json`) says it
    the same way: the first byte that fails and where it is are what the user needs to find it.
    """
    return f"{path}: {utf8_problem(error)}"


def utf8_problem(error: UnicodeDecodeError) -> str:
    """``not UTF-8 (byte 0xff at offset 0); save it as UTF-8``, for a message that names the file
    itself; a file saved as UTF-16 (as some Windows editors do) is named as such."""
    data = error.object if isinstance(error.object, bytes | bytearray) else b""
    byte = f"byte 0x{data[error.start]:02x}" if error.start < len(data) else "a byte"
    utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
    hint = "it looks like UTF-16; save it as UTF-8" if utf16 else "save it as UTF-8"
    return f"not UTF-8 ({byte} at offset {error.start}); {hint}"


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML config file; a syntax error names the file and the line."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"invalid TOML in {path}: {error}") from None
    except UnicodeDecodeError as error:
        # tomllib decodes the whole file first; that error is not a TOMLDecodeError.
        raise ConfigError(not_utf8(path, error)) from None
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}") from None


def env_layer(environ: Mapping[str, str]) -> dict[str, Any]:
    """``AGENTCLI_MODEL=x`` sets ``model``; ``AGENTCLI_RETRY__ATTEMPTS=2`` sets ``retry.attempts``.

    Values stay strings; pydantic converts them and reports the variable name on failure.
    """
    layer: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in _NOT_SETTINGS:
            continue
        path = name[len(ENV_PREFIX) :].lower().split("__")
        node = layer
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return layer


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any], path: tuple[str, ...] = ()) -> dict[str, Any]:
    """``extra`` over ``base``: tables merge key by key, permission rule lists add up."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(value, Mapping) and isinstance(old, dict):
            merged[key] = deep_merge(old, value, (*path, key))
        elif (*path, key) in _ACCUMULATED and isinstance(value, list) and isinstance(old, list):
            merged[key] = [*old, *(item for item in value if item not in old)]
        else:
            merged[key] = value
    return merged


def read_layers(
    workspace: Path,
    *,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    user_file: Path | None = None,
) -> list[Layer]:
    """Every source that sets something, lowest precedence first.

    Args:
        workspace: The directory whose ``.agentcli.toml`` applies.
        overrides: Values from command-line flags (``None`` values are ignored).
        environ: The environment to read ``AGENTCLI_*`` from (``os.environ`` by default).
        user_file: The user config file (``~/.config/agentcli/config.toml`` by default).

    Raises:
        ConfigError: a file is unreadable or not TOML.
    """
    environ = os.environ if environ is None else environ
    user_file = user_file or config_home() / "config.toml"
    layers = [Layer(str(path), read_toml(path)) for path in (user_file, workspace / WORKSPACE_CONFIG) if path.is_file()]
    env = env_layer(environ)
    if env:
        layers.append(Layer(ENV_SOURCE, env))
    flags = {key: value for key, value in (overrides or {}).items() if value is not None}
    if flags:
        layers.append(Layer(FLAGS_SOURCE, flags))
    return layers


def merge_layers(layers: list[Layer]) -> dict[str, Any]:
    """The values every layer sets, later layers winning."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = deep_merge(merged, layer.values)
    return merged
