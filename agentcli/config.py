"""Configuration: user file, then workspace file, then ``AGENTCLI_*`` variables, then flags.

Every layer is validated by the same pydantic model, so a mistake is reported with the file (or
variable) it came from and the field that is wrong. This module imports nothing of agentcli's.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

WORKSPACE_CONFIG = ".agentcli.toml"
ENV_PREFIX = "AGENTCLI_"
DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"


class ConfigError(Exception):
    """A configuration source is unreadable or invalid. The message names source and field."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelRoles(_Section):
    """litellm model strings per role; an unset role uses the default model."""

    plan: str | None = None
    build: str | None = None
    explore: str | None = None


class RetrySettings(_Section):
    """How model calls that fail with 429 or 5xx are retried."""

    attempts: int = Field(4, ge=1, le=20)
    """Total tries, the first included."""
    base_delay_s: float = Field(1.0, ge=0)
    """Delay before the second try; doubled for each later one."""
    max_delay_s: float = Field(30.0, ge=0)


class ToolSettings(_Section):
    """Limits that keep tool results readable and the machine safe."""

    bash_timeout_s: float = Field(120.0, gt=0)
    bash_max_timeout_s: float = Field(600.0, gt=0)
    max_output_chars: int = Field(30_000, ge=1000)
    """Longer output keeps its head and tail and marks the cut."""
    max_read_bytes: int = Field(10 * 1024 * 1024, ge=1024)
    """Files larger than this are not read whole; the model is told to page with offset/limit."""
    max_matches: int = Field(500, ge=1)
    """Caps the lines grep and glob return."""


class Settings(_Section):
    """Everything agentcli can be configured with."""

    model: str = DEFAULT_MODEL
    """The default model role, a litellm model string such as ``openai/gpt-4o``."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible (or other) server, passed to litellm."""
    max_steps: int = Field(100, ge=1)
    """Model calls allowed per turn before the run halts."""
    workflow: str = "single"
    models: ModelRoles = Field(default_factory=ModelRoles)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)

    def model_for(self, role: str) -> str:
        """The litellm model string for a role (``default``, ``plan``, ``build``, ``explore``)."""
        return getattr(self.models, role, None) or self.model


def config_home() -> Path:
    """``$XDG_CONFIG_HOME/agentcli`` (``~/.config/agentcli`` by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentcli"


def data_home() -> Path:
    """``$XDG_DATA_HOME/agentcli`` (``~/.local/share/agentcli`` by default): sessions, snapshots."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentcli"


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _describe(error: ValidationError, source: str) -> str:
    lines = [f"invalid configuration in {source}:"]
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "(top level)"
        lines.append(f"  {field}: {item['msg']}")
    return "\n".join(lines)


def _validate_layer(layer: Mapping[str, Any], source: str) -> None:
    """Check one source on its own so an error names the source it came from."""
    try:
        Settings.model_validate(layer)
    except ValidationError as error:
        raise ConfigError(_describe(error, source)) from None


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML config file; a syntax error names the file and the line."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"invalid TOML in {path}: {error}") from None
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


# Variables with the prefix that are not settings: they must not be read as unknown fields.
_NOT_SETTINGS = frozenset({"AGENTCLI_DATA_DIR", "AGENTCLI_NO_WARMUP"})


def load_settings(
    workspace: Path,
    *,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    user_file: Path | None = None,
) -> Settings:
    """Merge every source, lowest precedence first, validating each on its own.

    Args:
        workspace: The directory whose ``.agentcli.toml`` applies.
        overrides: Values from command-line flags (``None`` values are ignored).
        environ: The environment to read ``AGENTCLI_*`` from (``os.environ`` by default).
        user_file: The user config file (``~/.config/agentcli/config.toml`` by default).

    Raises:
        ConfigError: naming the file, variable or flag and the field that is wrong.
    """
    environ = os.environ if environ is None else environ
    user_file = user_file or config_home() / "config.toml"
    merged: dict[str, Any] = {}
    for path in (user_file, workspace / WORKSPACE_CONFIG):
        if path.is_file():
            layer = read_toml(path)
            _validate_layer(layer, str(path))
            merged = _deep_merge(merged, layer)
    env = env_layer(environ)
    if env:
        _validate_layer(env, "environment variables (AGENTCLI_*)")
        merged = _deep_merge(merged, env)
    flags = {key: value for key, value in (overrides or {}).items() if value is not None}
    if flags:
        _validate_layer(flags, "command-line options")
        merged = _deep_merge(merged, flags)
    return Settings.model_validate(merged)

