"""The set of tools offered to the model, and turning a raw tool call into a result.

Whatever the model sends — an unknown name, broken JSON, arguments that do not fit the schema —
comes back as an error result it can read; nothing a model says can crash the loop.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult, one_line
from agentcli.tools.control import CONTROL_TOOLS, Clarify, Complete, Pause
from agentcli.tools.files import EditFile, ListFiles, ReadFile, WriteFile
from agentcli.tools.search import Glob, Grep
from agentcli.tools.shell import Bash
from agentcli.tools.text import first_invalid_text, valid_text

__all__ = ["CONTROL_TOOLS", "ToolRegistry", "builtin_declarations", "default_registry", "parse_arguments"]


class ToolRegistry:
    """Tools by name, in the order they are offered to the model.

    Tools may join after the session starts (MCP servers list theirs in the background): the
    session awaits :meth:`ready` before each model call, so a first request waits for servers
    still starting, within their own timeouts.
    """

    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        self._tools: dict[str, Tool[Any]] = {tool.name: tool for tool in tools}
        self._waiters: list[Callable[[], Awaitable[None]]] = []

    def add(self, tool: Tool[Any]) -> None:
        """Offer ``tool`` from the next model call on (replacing one of the same name)."""
        self._tools[tool.name] = tool

    def remove(self, name: str) -> None:
        self._tools.pop(name, None)

    def wait_for(self, waiter: Callable[[], Awaitable[None]]) -> None:
        """Have :meth:`ready` await ``waiter`` (tools still being listed)."""
        self._waiters.append(waiter)

    async def ready(self) -> None:
        """Wait for tools still joining (bounded by their sources' own timeouts)."""
        for waiter in list(self._waiters):
            await waiter()

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> Tool[Any]:
        return self._tools[name]

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """OpenAI tool descriptions, for all tools or for ``names`` only."""
        chosen = self._tools if names is None else {n: self._tools[n] for n in names if n in self._tools}
        return [tool.schema() for tool in chosen.values()]

    @property
    def declarations(self) -> Mapping[str, type[Tool[Any]]]:
        """Every tool's declaration by name (the facts permissions and the watchdog read); a
        live view, so tools that join later are judged by their own facts too."""
        return _Declarations(self._tools)

    def declaration(self, name: str) -> type[Tool[Any]]:
        """The declaration of the tool called ``name``; an unknown name gets the defaults of
        :class:`Tool` (it asks before running, changes no files, previews its first argument)."""
        tool = self._tools.get(name)
        return type(tool) if tool is not None else Tool

    def preview(self, name: str, raw_arguments: str) -> str:
        """A call on one line, as its tool declares it; malformed arguments are shown as sent."""
        args = parse_arguments(raw_arguments)
        if not isinstance(args, Mapping):
            return one_line(raw_arguments)
        return self.declaration(name).preview(args)

    def _why_unknown(self, name: str) -> str:
        """For an MCP tool's name, whether its server is here at all: a resumed session's history
        holds calls to servers since removed from the config or not started this time."""
        server, sep, _ = name.removeprefix("mcp__").partition("__")
        if not name.startswith("mcp__") or not sep:
            return ""
        if any(other.startswith(f"mcp__{server}__") for other in self._tools):
            return f" (the MCP server '{server}' has no such tool now)"
        return f" (no MCP server '{server}' is connected in this session: it is not configured or did not start)"

    async def call(self, name: str, raw_arguments: str, ctx: ToolContext) -> ToolResult:
        """Run one call as the model sent it; every failure becomes an error result."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.failure(f"unknown tool '{name}'{self._why_unknown(name)}. "
                                      f"Available tools: {', '.join(self._tools)}")
        try:
            parsed = json.loads(raw_arguments) if raw_arguments.strip() else {}
        except json.JSONDecodeError as error:
            return ToolResult.failure(
                f"the arguments for {name} are not valid JSON ({error.msg} at position {error.pos}). "
                "Send a JSON object matching the tool's schema."
            )
        if not isinstance(parsed, dict):
            return ToolResult.failure(
                f"the arguments for {name} must be a JSON object, not {type(parsed).__name__}"
            )
        invalid = first_invalid_text(parsed)
        if invalid is not None:
            return ToolResult.failure(
                f"the arguments for {name} hold text that is not valid Unicode (a lone surrogate escape "
                f"such as \\udcff in {invalid}); send plain UTF-8 text"
            )
        try:
            args = tool.arguments.model_validate(parsed)
        except ValidationError as error:
            return ToolResult.failure(f"invalid arguments for {name}: {_describe(error)}")
        try:
            result = await tool.run(args, ctx)
        except ToolError as error:
            return ToolResult.failure(str(error))
        except PermissionError as error:
            return ToolResult.failure(f"permission denied: {error.filename or error}")
        except OSError as error:
            return ToolResult.failure(f"{error.strerror or error} ({error.filename or name})")
        return replace(result, output=valid_text(result.output))


class _Declarations(Mapping[str, "type[Tool[Any]]"]):
    def __init__(self, tools: dict[str, Tool[Any]]) -> None:
        self._tools = tools

    def __getitem__(self, name: str) -> type[Tool[Any]]:
        return type(self._tools[name])

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._tools))

    def __len__(self) -> int:
        return len(self._tools)


def parse_arguments(raw: str) -> Mapping[str, object] | str:
    """A call's arguments as a mapping, or the raw text when they are not a JSON object."""
    try:
        parsed = json.loads(raw or "{}")
    except (json.JSONDecodeError, RecursionError):
        return raw
    return parsed if isinstance(parsed, dict) else raw


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "extra_forbidden":
            problems.append(f"unexpected field '{field}'")
        else:
            problems.append(f"{field}: {item['msg']}")
    return "; ".join(problems)


def default_registry() -> ToolRegistry:
    """Every built-in tool of the core agent."""
    return ToolRegistry(
        [ReadFile(), WriteFile(), EditFile(), ListFiles(), Glob(), Grep(), Bash(), Complete(), Clarify(), Pause()]
    )


def builtin_declarations() -> dict[str, type[Tool[Any]]]:
    """The declarations of every built-in tool, core and workflow tools alike, by name."""
    from agentcli.tools.workflow_tools import CreatePlan, FinishPhase, RunChecks, Think, UpdatePlan

    core = dict(default_registry().declarations)
    return {**core, **{tool.name: tool for tool in (Think, CreatePlan, UpdatePlan, RunChecks, FinishPhase)}}
