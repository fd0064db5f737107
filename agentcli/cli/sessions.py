"""``agentcli sessions``: list, show and remove recorded sessions."""

from __future__ import annotations

from typing import Annotated

import typer

from agentcli.cli.common import find_session, workspace
from agentcli.cli.options import CommonOptions, shared_options

app = typer.Typer(help="List, show and remove recorded sessions.", no_args_is_help=False)


@app.callback(invoke_without_command=True)
@shared_options("sessions")
def sessions_list(
    ctx: typer.Context,
    all_workspaces: Annotated[bool, typer.Option("--all", help="Every workspace, not just this one.")] = False,
    *,
    options: CommonOptions,
) -> None:
    """List the sessions of this workspace (or all), newest first."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.console import Console
    from rich.table import Table

    from agentcli.config import data_home
    from agentcli.headless import format_age, format_cost
    from agentcli.session.log import list_sessions, status

    entries = list_sessions(data_home(), None if all_workspaces else workspace(options.cwd))
    if not entries:
        typer.echo("No sessions yet." + ("" if all_workspaces else " (`--all` lists every workspace.)"))
        return
    table = Table(box=None, header_style="bold")
    columns = ("id", "age", "title", "state", "steps", "tokens", "cost", *(["workspace"] if all_workspaces else []))
    for column in columns:
        # Ids, states and figures never shrink; the title and the workspace give way instead.
        flexible = column in ("title", "workspace")
        table.add_column(column, no_wrap=True, overflow="ellipsis", min_width=None if flexible else len(column),
                         ratio=1 if flexible else None)
    table.columns[0].min_width = 12
    for entry in entries:
        meta = entry.meta
        row = [meta.id, format_age(meta.updated), meta.title or "—", status(meta), str(meta.steps),
               f"{meta.input_tokens + meta.output_tokens:,}", format_cost(meta.cost)]
        table.add_row(*row, *([meta.workspace] if all_workspaces else []))
    Console().print(table)


@app.command("show")
@shared_options("sessions show")
def sessions_show(session_ref: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Print a session's transcript from its log."""
    from agentcli.headless import TextPrinter
    from agentcli.session.log import read_events

    entry = find_session(session_ref)
    printer = TextPrinter()
    for event in read_events(entry.directory):
        printer(event)


@app.command("rm")
@shared_options("sessions rm")
def sessions_rm(session_ref: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Delete a session's log."""
    from agentcli.session.log import remove_session

    entry = find_session(session_ref)
    remove_session(entry)
    typer.echo(f"Removed session {entry.meta.id}")
