"""``agentcli sessions``: list, show and remove recorded sessions."""

from __future__ import annotations

from typing import Annotated

import typer

from agentcli.cli.common import fail, find_session, workspace
from agentcli.cli.options import CommonOptions, PlainUsage, shared_options

app = typer.Typer(help="List, show and remove recorded sessions.", no_args_is_help=False, rich_markup_mode=None)


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
    from agentcli.headless import cache_ratio, format_age, format_cost, printable
    from agentcli.session.log import list_sessions, status

    entries = list_sessions(data_home(), None if all_workspaces else workspace(options.cwd))
    if not entries:
        typer.echo("No sessions yet." + ("" if all_workspaces else " (`--all` lists every workspace.)"))
        return
    columns = ("id", "age", "title", "state", "steps", "tokens", "cache", "peak", "cost",
               *(["workspace"] if all_workspaces else []))
    rows: list[list[str]] = []
    for entry in entries:
        meta = entry.meta
        # Nothing before a call has reported its usage, as in the TUI: never a $0.0000 no price backs.
        cost = format_cost(meta.cost) if meta.input_tokens or meta.output_tokens else "—"
        # The share of input read from the prompt cache; "—" when nothing was (no cache, or none hit).
        cached = cache_ratio(meta.cache_read_tokens, meta.input_tokens) if meta.cache_read_tokens else "—"
        # The largest request sent, in tokens: how close the session came to the model's window.
        peak = f"{meta.peak_context / 1000:.0f}k" if meta.peak_context >= 1000 else str(meta.peak_context or "—")
        rows.append([meta.id, format_age(meta.updated), meta.title or "—", status(meta), str(meta.steps),
                     f"{meta.input_tokens + meta.output_tokens:,}", cached, peak,
                     cost, *([meta.workspace] if all_workspaces else [])])
    console = Console()
    widths = [max(len(column), *(len(row[index]) for row in rows)) for index, column in enumerate(columns)]
    # Ids, ages, states and figures (the cache share too) are shown whole; the title and the
    # workspace share what is left, down to their headings' width. When even that does not fit,
    # the least telling figures go, in this order.
    flexible_names = ("title", "workspace")
    least = {"title": min(16, widths[columns.index("title")]), "workspace": len("workspace")}
    for optional in ("peak", "steps", "cache"):
        needed = sum(least[c] if c in flexible_names else w for c, w in zip(columns, widths, strict=True))
        if needed + 2 * (len(columns) - 1) <= console.width:
            break
        index = columns.index(optional)
        columns = columns[:index] + columns[index + 1:]
        widths.pop(index)
        for row in rows:
            row.pop(index)
    flexible = [index for index, column in enumerate(columns) if column in flexible_names]
    left = console.width - sum(w for i, w in enumerate(widths) if i not in flexible) - 2 * (len(columns) - 1)
    if all_workspaces:
        workspace_index = columns.index("workspace")
        widths[workspace_index] = min(widths[workspace_index], max(len("workspace"), left * 2 // 5))
        left -= widths[workspace_index]
    title_index = columns.index("title")
    widths[title_index] = min(widths[title_index], max(len("title"), left))
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column, width in zip(columns, widths, strict=True):
        # A path keeps its end (the project's name); a title its start.
        table.add_column(column, no_wrap=True, width=width, overflow="ellipsis" if column != "workspace" else "fold")
    for row in rows:
        if all_workspaces:
            row[-1] = _tail(row[-1], widths[-1])
        # A title is the user's words: "[/]" in it is text, not Rich markup (it broke every listing).
        table.add_row(*(printable(cell) for cell in row))
    console.print(table)


def _tail(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1):]


@app.command("show", cls=PlainUsage)
@shared_options("sessions show")
def sessions_show(session_ref: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Print a session's transcript from its log."""
    from agentcli.headless import TextPrinter
    from agentcli.session.log import read_events

    entry = find_session(session_ref)
    printer = TextPrinter(echo_user=True)
    for event in read_events(entry.directory):
        printer(event)
    printer.finish()


@app.command("rm", cls=PlainUsage)
@shared_options("sessions rm")
def sessions_rm(session_ref: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Delete a session's log (not while another agentcli has it open: exit 2)."""
    from agentcli.session.lock import SessionInUse
    from agentcli.session.log import remove_session

    entry = find_session(session_ref)
    try:
        remove_session(entry)
    except SessionInUse as error:
        raise fail(str(error)) from None
    except FileNotFoundError:
        raise fail(f"session {entry.meta.id} was already removed") from None
    typer.echo(f"Removed session {entry.meta.id}")
