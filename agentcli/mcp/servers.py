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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentcli.config_mcp import SERVER_NAME, McpServerSettings, McpSettings
from agentcli.config_sources import not_utf8
from agentcli.mcp.budget import MAX_TOOLS

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

    @property
    def written_in(self) -> str:
        """Where its settings are, to point the user at a field: ``[mcp.servers.NAME]`` for config."""
        return self.source.replace("config", f"[mcp.servers.{self.name}]")


@dataclass(frozen=True)
class ServerList:
    """The servers to start, and what was wrong with the configuration (shown as notices)."""

    servers: tuple[ServerSpec, ...]
    problems: tuple[str, ...] = ()
    """Everything to tell the user, errors included (a session shows them all as notices)."""
    disabled: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    """The problems that left a server or the whole `.mcp.json` out, each naming the file and the
    field: `agentcli mcp list` and `mcp call` refuse to go on with them (exit 2), as a mistake in
    `.agentcli.toml` does, while a session warns and goes on without what they cover."""
    max_tools: int | None = MAX_TOOLS
    """The most tools a request carries, the session's own included (`[mcp] max_tools`); None
    for no limit (a tool called by hand with `agentcli mcp call`)."""


@dataclass
class _ProjectFile:
    """What `.mcp.json` holds: entries by (sanitized) name, and what was wrong with it."""

    path: Path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    """Sanitized name -> the name as written, to point at the entry in the file."""
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def resolve_servers(settings: McpSettings, workspace: Path) -> ServerList:
    """The enabled servers, in name order, from `.mcp.json` (when read) and the settings."""
    path = workspace / PROJECT_FILE
    project = read_project_file(path) if settings.project_file else _ProjectFile(path)  # not read
    base = project.entries
    errors = list(project.errors)
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
            # The config's own values were validated with the settings: a field that fails here
            # is one `.mcp.json` wrote.
            where, message = _first_error(error)
            field_path = f"mcpServers.{project.names.get(name, name)}" + (f".{where}" if where else "")
            errors.append(f"{project.path}: {field_path}: {message}; "
                          f"the MCP server '{name}' is ignored")
            continue
        if not spec.enabled:
            disabled.append(name)
            continue
        unreachable = spec.unreachable()
        if unreachable is not None:
            if name not in base:
                entry = f"{_config_files(name, workspace)}mcp.servers.{name}"
            elif configured is None:
                entry = f"{project.path}: mcpServers.{project.names[name]}"
            else:
                entry = f"{project.path}: mcpServers.{project.names[name]} with mcp.servers.{name}"
            errors.append(f"{entry}: {unreachable}; the MCP server '{name}' is ignored")
            continue
        servers.append(ServerSpec(name, spec, source))
    return ServerList(tuple(servers), (*project.warnings, *errors), tuple(disabled), tuple(errors),
                      settings.max_tools)


def read_project_file(path: Path) -> _ProjectFile:
    """The server entries of a `.mcp.json`, by (sanitized) name, and its problems."""
    found = _ProjectFile(path)
    if not path.is_file():
        return found
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        found.errors.append(f"{not_utf8(path, error)}; the file is ignored")
        return found
    except json.JSONDecodeError as error:
        found.errors.append(f"{path}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno}); "
                            "the file is ignored")
        return found
    except OSError as error:
        found.errors.append(f"{path}: cannot be read ({error.strerror or error}); the file is ignored")
        return found
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        what = "it has none" if servers is None else f"found a {_json_type(servers)}"
        found.errors.append(f"{path}: mcpServers: must be an object of servers by name "
                            f"({{\"mcpServers\": {{\"NAME\": {{...}}}}}}), {what}; the file is ignored")
        return found
    for raw_name, entry in servers.items():
        name = sanitize_server_name(str(raw_name))
        if not isinstance(entry, dict):
            found.errors.append(f"{path}: mcpServers.{raw_name}: must be an object, found a {_json_type(entry)}; "
                                f"the MCP server '{name}' is ignored")
            continue
        if name in found.names:
            # Two names made fit for tool names alike (`my.server`, `my_server`): the second would
            # silently replace the first, so it is refused instead, naming both.
            found.errors.append(f"{path}: mcpServers.{raw_name}: named like '{found.names[name]}' once made fit "
                                f"for tool names (both become '{name}', as in mcp__{name}__TOOL); rename one; "
                                f"the MCP server '{raw_name}' is ignored")
            continue
        found.names[name] = str(raw_name)
        found.entries[name] = {key: value for key, value in entry.items() if key in McpServerSettings.model_fields}
        unknown = sorted(set(entry) - set(McpServerSettings.model_fields))
        if unknown and unknown != ["disabled"]:
            # Keys Claude Code itself uses for other things are skipped, not refused.
            found.warnings.append(f"{path}: server '{raw_name}': ignored keys {', '.join(unknown)}")
        if entry.get("disabled") is True:
            found.entries[name]["enabled"] = False
        if found.entries[name].get("type") == "streamable-http":
            found.entries[name]["type"] = "http"
    return found


def _config_files(name: str, workspace: Path) -> str:
    """``FILE: `` for the config files that set ``[mcp.servers.NAME]`` (the settings, merged,
    no longer say where a field came from), or nothing when none of them does."""
    from agentcli.config_sources import ConfigError, read_layers

    try:
        layers = read_layers(workspace, environ={})
    except ConfigError:
        return ""  # already reported when the settings were loaded
    files = [layer.source for layer in layers
             if isinstance(servers := layer.values.get("mcp", {}).get("servers"), dict) and name in servers]
    return f"{', '.join(files)}: " if files else ""


def _json_type(value: object) -> str:
    names = {list: "list", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def sanitize_server_name(name: str) -> str:
    """A `.mcp.json` name made fit for tool names (``my.server`` -> ``my_server``)."""
    cleaned = "".join(char if SERVER_NAME.fullmatch(char) else "_" for char in name)
    while "__" in cleaned:
        cleaned = cleaned.replace("__", "_")
    return cleaned.strip("_") or "server"


def expand(text: str, environ: Mapping[str, str] | None = None, *, where: str = "") -> str:
    """``text`` with ``${VAR}`` and ``${VAR:-default}`` filled from the environment.

    Args:
        where: The field ``text`` came from (``env.GITHUB_TOKEN of .mcp.json``), named when a
            variable is missing so the user knows which line to look at.

    Raises:
        MissingVariable: naming the variable that is unset and has no default.
    """
    env = os.environ if environ is None else environ

    def fill(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                used = f"used as ${{{name}}}" + (f" in {where}" if where else "")
                raise MissingVariable(f"the environment variable {name} is not set ({used}); "
                                      f"set it, or write ${{{name}:-default}}")
            return default
        return value

    return _REFERENCE.sub(fill, text)


def expand_all(values: Mapping[str, str], environ: Mapping[str, str] | None = None, *,
               where: str = "", source: str = "") -> dict[str, str]:
    """Each value expanded; ``where`` names the table (``env``) and ``source`` its file."""
    return {key: expand(value, environ, where=f"{where}.{key}{source}") for key, value in values.items()}


def _first_error(error: ValidationError) -> tuple[str, str]:
    """The first problem's field (``command``, ``args.0``) and message."""
    item = error.errors()[0]
    where = ".".join(str(part) for part in item["loc"])
    message = str(item["msg"]).removeprefix("Value error, ")
    if "input" in item and not isinstance(item["input"], dict | list):
        message += f" (found {json.dumps(item['input'])})"
    return where, message
