"""The snapshot timeline: ``agentcli snapshots`` (list, gc), ``agentcli diff`` and ``agentcli restore``.

Each command opens the session whose timeline it reads, runs nothing, and closes it again; the
Session's snapshot commands do the work.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from agentcli.cli.common import fail, find_session, load_settings, workspace
from agentcli.cli.options import CommonOptions, PlainUsage, shared_options

if TYPE_CHECKING:
    from agentcli.session import Session

T = TypeVar("T")

app = typer.Typer(help="The snapshot timeline: every change the agent made.", no_args_is_help=False,
                  rich_markup_mode=None)

SessionOpt = Annotated[
    str | None, typer.Option("--session", "-s", help="Session id (default: the newest of this workspace).")
]


@contextmanager
def _snapshot_session(session_ref: str | None, cwd: Path | None, *, writes: bool = True) -> Iterator[Session]:
    """The session whose timeline a snapshot command works on, opened without running anything
    and closed (its log flushed) when the command ends, however it ends. A command that only
    looks (not ``writes``) leaves the log alone, so it works on a session another agentcli runs."""
    from agentcli.config import data_home
    from agentcli.session.factory import SessionSetupError, resume_session, resume_settings_overrides
    from agentcli.session.log import list_sessions

    folder = workspace(cwd)
    if session_ref is not None:
        entry = find_session(session_ref)
    else:
        entries = list_sessions(data_home(), folder)
        if not entries:
            raise fail(f"no sessions in {folder}; snapshots are taken by `agentcli run` sessions")
        entry = entries[0]
    settings = load_settings(Path(entry.meta.workspace), resume_settings_overrides(entry, {}))
    try:
        session = resume_session(entry, settings, record=writes)
    except SessionSetupError as error:
        raise fail(str(error)) from None
    try:
        if not session.snapshots_enabled:
            raise fail("snapshots are off ([snapshots] enabled = false)")
        yield session
    finally:
        session.close()


def _snapshot_call(call: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run one snapshot command of the Session; its errors exit 2 with their own message."""
    from agentcli.session import SessionStateError

    try:
        return asyncio.run(call())
    except SessionStateError as error:
        raise fail(str(error)) from None
    except Exception as error:  # the store's own errors name the snapshot and what to do
        if type(error).__module__.startswith("agentcli.snapshots"):
            raise fail(str(error)) from None
        raise


@app.callback(invoke_without_command=True)
@shared_options("snapshots")
def snapshots_list(ctx: typer.Context, session: SessionOpt = None, *, options: CommonOptions) -> None:
    """Show a session's snapshot timeline, oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    from datetime import datetime

    from rich.console import Console
    from rich.table import Table

    from agentcli.events import FileChange
    from agentcli.headless import format_age, format_changes, printable

    with _snapshot_session(session, options.cwd, writes=False) as opened:
        timeline = _snapshot_call(opened.timeline)
    table = Table(box=None, header_style="bold", title=f"session {opened.id}", title_justify="left")
    for column in ("#", "id", "age", "tool", "reason", "changes"):
        flexible = column in ("reason", "changes")
        table.add_column(column, no_wrap=not flexible, overflow="fold", ratio=1 if flexible else None,
                         min_width=None if flexible else max(len(column), {"id": 10, "age": 7}.get(column, 0)))
    for snap in timeline:
        files = [FileChange(path=f.path, status=f.status, added=f.added, removed=f.removed) for f in snap.files]
        # File names are anyone's ("[/]x" is a name, not Rich markup) and may hold control characters.
        table.add_row(str(snap.seq), snap.id, format_age(datetime.fromisoformat(snap.created_at)),
                      printable(snap.tool_name or "—"), printable(snap.reason),
                      printable(format_changes(files, first=snap.seq == 1)))
    Console().print(table)


@app.command("gc", cls=PlainUsage)
@shared_options("snapshots gc")
def snapshots_gc(*, options: CommonOptions) -> None:
    """Repack this workspace's snapshot store and keep it within its size budget."""
    from agentcli.session.factory import SessionSetupError, collect_garbage

    folder = workspace(options.cwd)
    try:
        result = collect_garbage(folder, load_settings(folder))
    except SessionSetupError as error:
        raise fail(str(error)) from None
    mib = 1024 * 1024
    typer.echo(f"store: {result.size_before / mib:.1f} MiB → {result.size_after / mib:.1f} MiB "
               f"(budget {result.budget_bytes / mib:.0f} MiB) in {result.duration_s:.2f}s")
    for dropped in result.dropped:
        typer.echo(f"  dropped snapshot {dropped.session_id}:{dropped.seq} ({dropped.id}) to stay within budget")


@shared_options("diff")
def diff(
    a: Annotated[str, typer.Argument(help="Snapshot: sequence number or short hash.")],
    b: Annotated[str | None, typer.Argument(help="Second snapshot (default: the working tree).")] = None,
    session: SessionOpt = None,
    stat: Annotated[bool, typer.Option("--stat", help="Only the per-file line counts.")] = False,
    *,
    options: CommonOptions,
) -> None:
    """Show what changed between snapshot A and B, or between A and the files now."""
    from rich.console import Console
    from rich.syntax import Syntax

    from agentcli.headless import printable

    with _snapshot_session(session, options.cwd, writes=False) as opened:
        result = _snapshot_call(lambda: opened.diff(a, b))
    console = Console(highlight=False)
    for change in result.files:
        counts = f"[green]+{change.added}[/] [red]−{change.removed}[/]"
        console.print(f"[bold]{change.status:<10}[/] {printable(change.path)}  {counts}")
    totals = result.totals
    if not totals.files:
        console.print("no changes: the files are the same")
    else:
        console.print(f"{totals.files:,} file{'' if totals.files == 1 else 's'}, +{totals.added:,} −{totals.removed:,}")
    if not stat:
        for change in result.files:
            if change.patch:
                console.print(Syntax(change.patch, "diff", theme="ansi_dark", background_color="default"))


@shared_options("restore")
def restore(
    snapshot: Annotated[str, typer.Argument(help="Snapshot: sequence number or short hash.")],
    session: SessionOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list the paths it would change.")] = False,
    # Not the shared --yes (approve every tool call): this one confirms the restore.
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Restore without asking.")] = False,
    *,
    options: CommonOptions,
) -> None:
    """Make the files match a snapshot. The current state is snapshotted first, so it can be undone."""
    with _snapshot_session(session, options.cwd) as opened:
        plan = _snapshot_call(lambda: opened.plan_restore(snapshot))
        target = plan.target
        typer.echo(f"restore snapshot {target.seq} ({target.id}, {target.reason}):")
        for path in plan.writes:
            typer.echo(f"  write   {path}")
        for path in plan.chmods:
            typer.echo(f"  mode    {path}")
        for path in plan.deletes:
            typer.echo(f"  delete  {path}")
        for conflict in plan.conflicts:
            typer.echo(f"  cannot  {conflict.path}: {conflict.reason}")
        if plan.is_noop:
            typer.echo("  nothing to do: the files already match")
            return
        if dry_run:
            return
        if not yes:
            if not sys.stdin.isatty():
                raise fail("restoring changes files; confirm with --yes (or look first with --dry-run)")
            if not typer.confirm("Restore these paths?"):
                raise typer.Exit(1)
        result = _snapshot_call(lambda: opened.restore(snapshot))
    undo = result.undo
    typer.echo(f"restored in {result.duration_s:.2f}s; undo with: agentcli restore {undo.seq} --session {opened.id}")
