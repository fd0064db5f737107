"""Which MCP servers a session uses: the `[mcp]` settings over the workspace's `.mcp.json`.

`.mcp.json` is read as Claude Code writes it (``{"mcpServers": {"NAME": {...}}}``) so an existing
setup works unchanged; an unreadable file is a problem reported to the user, never a reason for
the session to fail. ``${VAR}`` references are filled in when a server starts
(:func:`expand`), so a missing secret stops that one server only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentcli.config_mcp import SERVER_NAME, McpServerSettings, McpSettings
from agentcli.config_sources import not_utf8

PROJECT_FILE = ".mcp.json"

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MissingVariable(ValueError):
    """A ``${VAR}`` a server's settings use is not set (and has no ``:-default``)."""


@dataclass(frozen=True)
class ServerSpec:
    """One server as a session starts it."""

    name: str
    settings: McpServerSettings
    source: str
    """Where it was configured: ``.mcp.json``, ``config`` or both."""


@dataclass(frozen=True)
class ServerList:
    """The servers to start, and what was wrong with the configuration (shown as notices)."""

    servers: tuple[ServerSpec, ...]
    problems: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()


def resolve_servers(settings: McpSettings, workspace: Path) -> ServerList:
    """The enabled servers, in name order, from `.mcp.json` (when read) and the settings."""
    problems: list[str] = []
    base: dict[str, dict[str, Any]] = {}
    if settings.project_file:
        base, problems = read_project_file(workspace / PROJECT_FILE)
    servers: list[ServerSpec] = []
    disabled: list[str] = []
    for name in sorted({*base, *settings.servers}):
        configured = settings.servers.get(name)
        raw = dict(base.get(name, {}))
        if configured is not None:
            raw.update(configured.model_dump(exclude_unset=True))
        source = " and ".join(s for s, present in ((PROJECT_FILE, name in base), ("config", configured)) if present)
        try:
            spec = McpServerSettings.model_validate(raw)
        except ValidationError as error:
            problems.append(f"MCP server '{name}' ({source}) is ignored: {_first_error(error)}")
            continue
        if not spec.enabled:
            disabled.append(name)
            continue
        unreachable = spec.unreachable()
        if unreachable is not None:
            problems.append(f"MCP server '{name}' ({source}) is ignored: {unreachable}")
            continue
        servers.append(ServerSpec(name, spec, source))
    return ServerList(tuple(servers), tuple(problems), tuple(disabled))


def read_project_file(path: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The server entries of a `.mcp.json`, by (sanitized) name, and its problems."""
    if not path.is_file():
        return {}, []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        return {}, [f"{not_utf8(path, error)}; the file is ignored"]
    except (OSError, json.JSONDecodeError) as error:
        return {}, [f"{path} is ignored: {error}"]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, [f"{path} is ignored: it has no \"mcpServers\" object"]
    entries: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for raw_name, entry in servers.items():
        name = sanitize_server_name(str(raw_name))
        if not isinstance(entry, dict):
            problems.append(f"{path}: server '{raw_name}' is ignored: its entry is not an object")
            continue
        entries[name] = {key: value for key, value in entry.items() if key in McpServerSettings.model_fields}
        unknown = sorted(set(entry) - set(McpServerSettings.model_fields))
        if unknown and unknown != ["disabled"]:
            # Keys Claude Code itself uses for other things are skipped, not refused.
            problems.append(f"{path}: server '{raw_name}': ignored keys {', '.join(unknown)}")
        if entry.get("disabled") is True:
            entries[name]["enabled"] = False
        if entries[name].get("type") == "streamable-http":
            entries[name]["type"] = "http"
    return entries, problems


def sanitize_server_name(name: str) -> str:
    """A `.mcp.json` name made fit for tool names (``my.server`` -> ``my_server``)."""
    cleaned = "".join(char if SERVER_NAME.fullmatch(char) else "_" for char in name)
    while "__" in cleaned:
        cleaned = cleaned.replace("__", "_")
    return cleaned.strip("_") or "server"


def expand(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with ``${VAR}`` and ``${VAR:-default}`` filled from the environment.

    Raises:
        MissingVariable: naming the variable that is unset and has no default.
    """
    env = os.environ if environ is None else environ

    def fill(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise MissingVariable(f"the environment variable {name} is not set (used as ${{{name}}})")
            return default
        return value

    return _REFERENCE.sub(fill, text)


def expand_all(values: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    return {key: expand(value, environ) for key, value in values.items()}


def _first_error(error: ValidationError) -> str:
    item = error.errors()[0]
    where = ".".join(str(part) for part in item["loc"])
    message = str(item["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
