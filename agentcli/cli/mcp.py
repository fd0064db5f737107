"""``agentcli mcp``: the MCP servers a session here would start, and calling one by hand."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common import EXIT_ERROR, fail, load_settings, workspace
from agentcli.cli.options import CommonOptions, PlainUsage, shared_options

if TYPE_CHECKING:
    from agentcli.session.mcp_servers import McpConfigError

app = typer.Typer(help="List the MCP servers and their tools; call a tool by hand.", no_args_is_help=False)

_MARKS = {"ready": "✓", "failed": "✗", "starting": "…"}


@app.callback(invoke_without_command=True)
@shared_options("mcp")
def mcp_root(ctx: typer.Context, *, options: CommonOptions) -> None:
    """List the MCP servers (as `agentcli mcp list`)."""
    if ctx.invoked_subcommand is None:
        _list(options)


@app.command("list", cls=PlainUsage)
@shared_options("mcp list")
def mcp_list(*, options: CommonOptions) -> None:
    """Start each configured MCP server, show its status and tools, and stop it again.

    Exit 0 when every server started, 1 when one failed, 2 for a usage or configuration error
    (a `.mcp.json` that cannot be read, an entry with a wrong field).
    """
    _list(options)


def _list(options: CommonOptions) -> None:
    from agentcli.session.mcp_servers import McpConfigError, list_servers

    folder = workspace(options.cwd)
    settings = load_settings(folder, options.settings_overrides())
    try:
        listing = asyncio.run(list_servers(folder, settings))
    except McpConfigError as error:
        raise _config_failure(error) from None
    for problem in listing.problems:
        typer.echo(f"warning: {problem}", err=True)
    if not listing.servers and not listing.disabled:
        typer.echo("No MCP servers configured: add [mcp.servers.NAME] to .agentcli.toml or a .mcp.json.")
        return
    failed = False
    for report in listing.servers:
        status = report.status
        mark = _MARKS.get(status.state, "?")
        counted = f"{status.tools} tools"
        typer.echo(f"{mark} {status.name:<16} {status.transport:<6} {status.state:<8} {counted:<10} ({status.source})")
        if status.error:
            failed = True
            typer.echo(f"    error: {status.error}")
            if status.log:
                typer.echo(f"    its stderr: {status.log}")
        for skipped in status.skipped:
            typer.echo(f"    left out: {skipped}")
        if status.cut:
            typer.echo(f"    left out: {status.cut} more tools (a request carries at most {listing.max_tools} "
                       "tools, agentcli's own included; choose with allow_tools or deny_tools in "
                       f"[mcp.servers.{status.name}])")
        for tool in report.tools:
            flags = "read-only" if tool.read_only else "asks"
            if tool.research:
                flags += ", research"
            typer.echo(f"    {tool.name}  [{flags}]  {tool.description}")
    for name in listing.disabled:
        typer.echo(f"- {name:<16} disabled")
    if failed:
        raise typer.Exit(EXIT_ERROR)


@app.command("call", cls=PlainUsage)
@shared_options("mcp call")
def mcp_call(
    server: Annotated[str, typer.Argument(metavar="SERVER", help="The server's name.")],
    tool: Annotated[str, typer.Argument(metavar="TOOL", help="The tool's name on the server (or its mcp__ name).")],
    arguments: Annotated[str, typer.Argument(metavar="ARGUMENTS", help="The arguments as a JSON object.")] = "{}",
    *,
    options: CommonOptions,
) -> None:
    """Start one server, call one tool with JSON arguments, print the result as the model reads it.

    Exit 0 when the tool succeeded, 1 when it answered with an error or the server did not start,
    2 for a usage or configuration error.
    """
    from agentcli.session.mcp_servers import McpCommandError, McpConfigError, McpServerFailed, call_tool

    folder = workspace(options.cwd)
    settings = load_settings(folder, options.settings_overrides())
    try:
        result = asyncio.run(call_tool(folder, settings, server, tool, arguments))
    except McpConfigError as error:
        raise _config_failure(error) from None
    except McpServerFailed as error:
        raise fail(str(error), EXIT_ERROR) from None
    except McpCommandError as error:
        raise fail(str(error)) from None
    typer.echo(result.output)
    if not result.ok:
        raise typer.Exit(EXIT_ERROR)


def _config_failure(error: McpConfigError) -> typer.Exit:
    """Each problem on a line of its own, then exit 2: a configuration error, as one in
    `.agentcli.toml` is (a session would warn and go on without the servers it covers)."""
    for problem in error.errors[:-1]:
        fail(problem)
    return fail(error.errors[-1])
