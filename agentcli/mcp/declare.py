"""MCP tools as declarations, like every built-in tool (``agentcli/tools/base.py``).

Each tool a server lists becomes a :class:`McpTool` subclass built at run time: its name
(``mcp__SERVER__TOOL``), the server's schema (adapted), and its facts — a tool the server marks
read-only is judged as a read (it runs without asking) and changes no files; any other asks in
the ``ask`` and ``edits`` modes and is followed by a snapshot, unless the server's settings say
its tools never write files. Permissions, the progress watchdog, snapshots and the front ends
read these facts as they read a built-in tool's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict

from agentcli.mcp.naming import marked, tool_name
from agentcli.mcp.results import convert_result
from agentcli.mcp.schema import UnusableSchema, adapt_schema
from agentcli.tools.base import Arguments, ChangesFiles, Permission, Tool, ToolContext, ToolError, ToolResult, one_line

if TYPE_CHECKING:
    from mcp_types import Tool as ServerTool

    from agentcli.mcp.connection import Connection

MAX_DESCRIPTION = 2000
"""A server's description is cut here: some run to pages, and every request carries them."""


class McpArguments(Arguments):
    """Whatever the server's schema describes: the server checks the arguments itself."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool[McpArguments]):
    """A tool of an MCP server; one subclass per server tool, made by :func:`declare`."""

    arguments = McpArguments
    server: ClassVar[str] = ""
    remote_name: ClassVar[str] = ""
    """The tool's name on its server."""
    parameters: ClassVar[dict[str, Any]] = {}
    read_only: ClassVar[bool] = False
    """The server marked the tool read-only (``readOnlyHint``)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def run(self, args: McpArguments, ctx: ToolContext) -> ToolResult:
        from mcp.shared.exceptions import MCPError

        from agentcli.mcp.connection import ServerUnavailable

        arguments = dict(args.model_extra or {})
        try:
            result = await self.connection.call(self.remote_name, arguments)
        except ServerUnavailable as error:
            raise ToolError(str(error)) from None
        except TimeoutError:
            limit = self.connection.spec.settings.call_timeout_s
            raise ToolError(f"the MCP server '{self.server}' did not answer within {limit:g} s "
                            f"(call_timeout_s of [mcp.servers.{self.server}])") from None
        except MCPError as error:
            raise ToolError(f"the MCP server '{self.server}' refused the call: {error.message}") from None
        return convert_result(result, ctx.settings.max_output_chars, server=self.server)

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        preview = cls.preview(args)
        what = f"Call {cls.remote_name} on the MCP server '{cls.server}'"
        return what + (f" ({preview})" if preview else "")

    @classmethod
    def preview(cls, args: Mapping[str, object]) -> str:
        if not args:
            return ""
        return super().preview(args)

    @classmethod
    def _build_schema(cls) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": cls.name, "description": cls.description, "parameters": cls.parameters}}


def declare(server: str, tool: ServerTool, *, research: bool | list[str] = False,
            writes_files: bool | None = None) -> type[McpTool]:
    """The declaration of one server tool.

    Raises:
        UnusableSchema: its input schema cannot be offered to a model (the message says why).
    """
    parameters = adapt_schema(tool.input_schema)
    read_only = bool(tool.annotations and tool.annotations.read_only_hint)
    permission: Permission = "read" if read_only else "command"
    changes: ChangesFiles = "never" if read_only or writes_files is False else "always"
    title = tool.annotations.title if tool.annotations and tool.annotations.title else None
    description = (tool.description or title or f"The {tool.name} tool of the MCP server '{server}'.").strip()
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    attributes: dict[str, Any] = {
        "name": tool_name(server, tool.name),
        "description": f"[MCP server {server}] {description}",
        "server": server,
        "remote_name": tool.name,
        "parameters": parameters,
        "read_only": read_only,
        "permission": permission,
        "changes_files": changes,
        "research": marked(tool.name, research),
        "__doc__": one_line(description),
        "__module__": __name__,
    }
    return type(f"Mcp_{server}_{tool.name}", (McpTool,), attributes)


__all__ = ["McpArguments", "McpTool", "UnusableSchema", "declare"]
