"""The ``agentcli`` command line.

Keep this module's imports light: ``agentcli --help`` must not import litellm (or pygit2); the
commands import what they need when they run.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from enum import Enum
from pathlib import Path
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from agentcli import __version__

app = typer.Typer(
    name="agentcli",
    help="A terminal coding agent you can watch, stop, answer and undo.",
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_USAGE = 2


class OutputFormat(str, Enum):
    text = "text"
    jsonl = "jsonl"


ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="litellm model string, e.g. openai/gpt-4o, or replay:FILE.")
]
ApiBaseOpt = Annotated[str | None, typer.Option("--api-base", help="Base URL of the model server.")]
CwdOpt = Annotated[Path | None, typer.Option("--cwd", help="Workspace folder (default: the current folder).")]
MaxStepsOpt = Annotated[int | None, typer.Option("--max-steps", min=1, help="Model calls allowed before halting.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Approve every tool call: --permission-mode all.")]


class ScopeOpt(str, Enum):
    once = "once"
    session = "session"
    always = "always"


class PermissionModeOpt(str, Enum):
    ask = "ask"
    edits = "edits"
    all = "all"


ModeOpt = Annotated[
    PermissionModeOpt | None,
    typer.Option("--permission-mode", help="ask: approve commands and unusual writes; edits (default headless): "
                 "file edits run, commands ask; all: everything runs."),
]
SandboxOpt = Annotated[
    bool | None, typer.Option("--sandbox/--no-sandbox", help="Run bash under bubblewrap: workspace writable, no network.")
]


def _permission_flags(yes: bool, mode: PermissionModeOpt | None, sandbox: bool | None) -> dict[str, Any]:
    chosen = "all" if yes else (mode.value if mode else None)
    flags: dict[str, Any] = {"sandbox": sandbox}
    if chosen:
        flags["permissions"] = {"mode": chosen}
    return flags
WorkflowOpt = Annotated[
    str | None, typer.Option("--workflow", "-w", help="single (default), plan-build, or a workflow file's name.")
]
OutputOpt = Annotated[OutputFormat, typer.Option("--output", "-o", help="text for people, jsonl for programs.")]


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    typer.echo(f"agentcli: {message}", err=True)
    return typer.Exit(code)


def _workspace(cwd: Path | None) -> Path:
    workspace = (cwd or Path.cwd()).expanduser()
    if not workspace.is_dir():
        raise _fail(f"workspace '{workspace}' is not a folder")
    return workspace.resolve()


def _settings(workspace: Path, **flags: Any) -> Any:
    from agentcli.config import ConfigError, load_settings

    try:
        return load_settings(workspace, overrides=flags)
    except ConfigError as error:
        raise _fail(str(error)) from None


def _find_session(ref: str) -> Any:
    """A recorded session by id or unique id prefix, or exit 2 saying why not."""
    from agentcli.config import data_home
    from agentcli.session.log import SessionNotFound, find_session

    try:
        return find_session(data_home(), ref)
    except SessionNotFound as error:
        raise _fail(str(error)) from None


async def _drive(session: Any, start: Callable[[], Awaitable[None]], output: OutputFormat) -> int:
    """Run one turn headless, with Ctrl-C pausing cleanly (a second Ctrl-C quits at once)."""
    from agentcli.headless import EXIT_CODES, JsonLinesPrinter, TextPrinter

    printer = JsonLinesPrinter() if output is OutputFormat.jsonl else TextPrinter()
    session.subscribe(printer)
    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_interrupt() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:
            session.close()
            os._exit(130)
        loop.create_task(session.pause("interrupted with Ctrl-C"))

    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        await start()
        ended = await session.wait_turn()
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        session.close()
    return EXIT_CODES[ended.outcome]


@app.command()
def run(
    prompt: Annotated[str, typer.Argument(help="The task for the agent.")],
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    cwd: CwdOpt = None,
    max_steps: MaxStepsOpt = None,
    yes: YesOpt = False,
    output: OutputOpt = OutputFormat.text,
    workflow: WorkflowOpt = None,
    permission_mode: ModeOpt = None,
    sandbox: SandboxOpt = None,
) -> None:
    """Run the agent on PROMPT headless until it completes, asks, pauses or halts.

    Exit codes: 0 completed, 1 error, 2 usage or configuration error, 3 awaiting
    clarification, 4 halted, 5 paused.
    """
    workspace = _workspace(cwd)
    settings = _settings(workspace, model=model, api_base=api_base, max_steps=max_steps, workflow=workflow,
                         **_permission_flags(yes, permission_mode, sandbox))
    from agentcli.session.factory import SessionSetupError, new_session, unsafe_workspace, warm_up

    warm_up(settings)
    broad = unsafe_workspace(workspace) if settings.snapshots.enabled else None
    if broad and not yes:
        raise _fail(f"{broad}\nRun in a project folder, or pass --yes to snapshot it anyway.")
    try:
        session = new_session(workspace, settings)
    except SessionSetupError as error:
        raise _fail(str(error)) from None
    raise typer.Exit(asyncio.run(_drive(session, lambda: session.send_user_message(prompt), output)))


@app.command()
def demo(
    delay: Annotated[float, typer.Option(help="Seconds between streamed text pieces.")] = 0.02,
    output: OutputOpt = OutputFormat.text,
    keep: Annotated[bool, typer.Option(help="Keep the demo folder and print its path.")] = False,
    headless: Annotated[bool, typer.Option("--headless", help="Print to the terminal instead of the TUI.")] = False,
    theme: ThemeOpt = None,
) -> None:
    """Watch the agent fix a bug in a small sample project: offline, no key needed.

    In a terminal it opens the TUI; piped, or with --headless, it prints like `agentcli run`.
    """
    import shutil
    import tempfile

    from agentcli.config import Settings
    from agentcli.session.factory import model_client_for, new_session

    bundled = Path(__file__).parent / "data" / "demo"
    workspace = Path(tempfile.mkdtemp(prefix="agentcli-demo-")).resolve()
    shutil.copytree(bundled / "project", workspace, dirs_exist_ok=True)
    settings = Settings(model=f"replay:{bundled / 'recording.json'}")
    # The demo's recording runs in a throwaway copy of the sample project: nothing to approve.
    session = new_session(workspace, settings, model_client=model_client_for(settings, replay_delay_s=delay),
                          default_permission_mode="all")
    task = _demo_task(bundled)
    if _interactive() and not headless and output is OutputFormat.text:
        try:
            _open_tui(workspace, settings, session=session, prompt=task, theme=theme)
        finally:
            if not keep:
                shutil.rmtree(workspace, ignore_errors=True)
    if output is OutputFormat.text:
        typer.echo(f"Demo workspace: {workspace}")
    code = asyncio.run(_drive(session, lambda: session.send_user_message(task), output))
    if keep:
        typer.echo(f"Demo files kept in {workspace}")
    else:
        shutil.rmtree(workspace, ignore_errors=True)
    raise typer.Exit(code)


@app.command()
def resume(
    session_ref: Annotated[str | None, typer.Argument(metavar="ID", help="Session id (or a unique prefix).")] = None,
    prompt: Annotated[str | None, typer.Argument(help="Guidance, a follow-up task, or the answer to a question.")] = None,
    answer: Annotated[str | None, typer.Option("--answer", help="Answer the question the agent asked.")] = None,
    last: Annotated[bool, typer.Option("--last", help="The newest session of this workspace.")] = False,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    cwd: CwdOpt = None,
    max_steps: MaxStepsOpt = None,
    yes: YesOpt = False,
    output: OutputOpt = OutputFormat.text,
    permission_mode: ModeOpt = None,
    sandbox: SandboxOpt = None,
    approve: Annotated[bool, typer.Option("--approve", help="Run the tool call waiting for approval.")] = False,
    deny: Annotated[bool, typer.Option("--deny", help="Refuse the tool call waiting for approval.")] = False,
    scope: Annotated[
        ScopeOpt, typer.Option("--scope", help="once, session (remember its rule), or always (.agentcli.toml).")
    ] = ScopeOpt.once,
    headless: Annotated[bool, typer.Option("--headless", help="Never open the TUI.")] = False,
    theme: ThemeOpt = None,
) -> None:
    """Continue a session after an exit, a pause, a question or a crash. Nothing is re-run.

    With --last, the first argument is the PROMPT. A session waiting for an answer takes it from
    --answer (or PROMPT); a paused or halted one continues, with PROMPT as guidance; a completed
    one needs a PROMPT: the next task. In a terminal, with none of PROMPT, --answer, --approve
    or --deny, it opens the session in the TUI with its history.
    """
    from agentcli.config import data_home
    from agentcli.session.factory import SessionSetupError, resume_session, resume_settings_overrides, warm_up
    from agentcli.session.log import list_sessions

    if last:
        prompt, session_ref = session_ref, None
        entries = list_sessions(data_home(), _workspace(cwd))
        if not entries:
            raise _fail(f"no sessions in {_workspace(cwd)}; `agentcli sessions --all` lists every workspace")
        entry = entries[0]
    elif session_ref is None:
        raise _fail("give a session ID or --last")
    else:
        entry = _find_session(session_ref)
    workspace = Path(entry.meta.workspace)
    if not workspace.is_dir():
        raise _fail(f"the session's workspace {workspace} no longer exists")
    flags = {"model": model, "api_base": api_base, "max_steps": max_steps, **_permission_flags(yes, permission_mode, sandbox)}
    settings = _settings(workspace, **resume_settings_overrides(entry, flags))
    in_tui = (_interactive() and not headless and output is OutputFormat.text
              and prompt is None and answer is None and not approve and not deny)
    if not in_tui:
        warm_up(settings)  # the TUI starts it after its first frame
    try:
        session = resume_session(entry, settings, default_permission_mode="ask" if in_tui else "edits")
    except SessionSetupError as error:
        raise _fail(str(error)) from None
    if in_tui:
        _open_tui(workspace, settings, session=session, theme=theme)
    state = session.view.control
    if approve and deny:
        raise _fail("--approve and --deny exclude each other")
    if (approve or deny) and state != "awaitingPermission":
        raise _fail(f"no tool call is waiting for approval (the session is {state})")
    if state == "awaitingPermission":
        if not (approve or deny):
            request = session.pending_permission
            what = request.summary if request else "(unknown)"
            raise _fail(f"the session waits for approval of: {what}\nuse --approve or --deny (with --scope)")
        start: Callable[[], Awaitable[None]] = (
            (lambda: session.approve(scope.value)) if approve else (lambda: session.deny(scope.value))
        )
    elif state == "awaitingClarification":
        reply = answer if answer is not None else prompt
        if reply is None:
            question = session.pending_question.question if session.pending_question else "(unknown)"
            raise _fail(f"the session waits for an answer to: {question}\nuse --answer TEXT")
        start = lambda: session.answer(reply)  # noqa: E731
    elif answer is not None:
        raise _fail(f"the session is not waiting for an answer (it is {state})")
    elif state in ("paused", "halted"):
        start = lambda: session.resume(prompt)  # noqa: E731
    elif prompt is None:
        raise _fail("the session's last turn completed; give a PROMPT for the next task")
    else:
        start = lambda: session.send_user_message(prompt)  # noqa: E731
    raise typer.Exit(asyncio.run(_drive(session, start, output)))


sessions_app = typer.Typer(help="List, show and remove recorded sessions.", no_args_is_help=False)
app.add_typer(sessions_app, name="sessions")


@sessions_app.callback(invoke_without_command=True)
def sessions_list(
    ctx: typer.Context,
    all_workspaces: Annotated[bool, typer.Option("--all", help="Every workspace, not just this one.")] = False,
    cwd: CwdOpt = None,
) -> None:
    """List the sessions of this workspace (or all), newest first."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.console import Console
    from rich.table import Table

    from agentcli.config import data_home
    from agentcli.headless import format_age, format_cost
    from agentcli.session.log import list_sessions, status

    entries = list_sessions(data_home(), None if all_workspaces else _workspace(cwd))
    if not entries:
        typer.echo("No sessions yet." + ("" if all_workspaces else " (`--all` lists every workspace.)"))
        return
    table = Table(box=None, header_style="bold")
    for column in ("id", "age", "title", "state", "steps", "tokens", "cost", *(["workspace"] if all_workspaces else [])):
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


@sessions_app.command("show")
def sessions_show(session_ref: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Print a session's transcript from its log."""
    from agentcli.headless import TextPrinter
    from agentcli.session.log import read_events

    entry = _find_session(session_ref)
    printer = TextPrinter()
    for event in read_events(entry.directory):
        printer(event)


@sessions_app.command("rm")
def sessions_rm(session_ref: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Delete a session's log."""
    from agentcli.session.log import remove_session

    entry = _find_session(session_ref)
    remove_session(entry)
    typer.echo(f"Removed session {entry.meta.id}")


workflows_app = typer.Typer(help="List, check and draw workflows.", no_args_is_help=False)
app.add_typer(workflows_app, name="workflows")


@workflows_app.callback(invoke_without_command=True)
def workflows_list(ctx: typer.Context, cwd: CwdOpt = None) -> None:
    """List the workflows that apply here, where each comes from, and any errors in their files."""
    if ctx.invoked_subcommand is not None:
        return
    from agentcli.session.factory import workflow_catalog

    catalog = workflow_catalog(_workspace(cwd))
    broken = False
    for entry in catalog.active:
        description = entry.workflow.description if entry.workflow else ""
        mark = "✓" if entry.valid else "✗"
        typer.echo(f"{mark} {entry.name:<16} {entry.origin}")
        if description:
            typer.echo(f"    {description}")
        hidden = catalog.overridden(entry)
        if hidden is not None:
            typer.echo(f"    overrides {hidden.origin}")
        for problem in entry.errors:
            broken = True
            typer.echo(f"    error: {problem}")
        for problem in entry.warnings:
            typer.echo(f"    warning: {problem}")
    for entry in catalog.invalid:
        if catalog.get(entry.name) is not entry:  # an invalid file hidden by another definition
            broken = True
            typer.echo(f"✗ {entry.name:<16} {entry.origin} (overridden)")
            for problem in entry.errors:
                typer.echo(f"    error: {problem}")
    if broken:
        raise typer.Exit(EXIT_USAGE)


@workflows_app.command("show")
def workflows_show(name: Annotated[str, typer.Argument(help="The workflow's name.")], cwd: CwdOpt = None) -> None:
    """Draw a workflow's phases and transitions, from the chart it compiles to."""
    from agentcli.session.chart import chart_class, chart_graph
    from agentcli.session.factory import SessionSetupError, workflow_for
    from agentcli.workflow.render import render_workflow

    try:
        workflow = workflow_for(name, _workspace(cwd))
    except SessionSetupError as error:
        raise _fail(str(error)) from None
    typer.echo(render_workflow(chart_graph(chart_class(workflow)), workflow), nl=False)


SessionOpt = Annotated[
    str | None, typer.Option("--session", "-s", help="Session id (default: the newest of this workspace).")
]


@contextmanager
def _snapshot_session(session_ref: str | None, cwd: Path | None) -> Iterator[Any]:
    """The session whose timeline a snapshot command works on, opened without running anything
    and closed (its log flushed) when the command ends, however it ends."""
    from agentcli.config import data_home
    from agentcli.session.factory import SessionSetupError, resume_session, resume_settings_overrides
    from agentcli.session.log import list_sessions

    workspace = _workspace(cwd)
    if session_ref is not None:
        entry = _find_session(session_ref)
    else:
        entries = list_sessions(data_home(), workspace)
        if not entries:
            raise _fail(f"no sessions in {workspace}; snapshots are taken by `agentcli run` sessions")
        entry = entries[0]
    settings = _settings(Path(entry.meta.workspace), **resume_settings_overrides(entry, {}))
    try:
        session = resume_session(entry, settings)
    except SessionSetupError as error:
        raise _fail(str(error)) from None
    try:
        if not session.snapshots_enabled:
            raise _fail("snapshots are off ([snapshots] enabled = false)")
        yield session
    finally:
        session.close()


def _snapshot_call(call: Callable[[], Awaitable[Any]]) -> Any:
    """Run one snapshot command of the Session; its errors exit 2 with their own message."""
    from agentcli.session import SessionStateError

    try:
        return asyncio.run(call())
    except SessionStateError as error:
        raise _fail(str(error)) from None
    except Exception as error:  # the store's own errors name the snapshot and what to do
        if type(error).__module__.startswith("agentcli.snapshots"):
            raise _fail(str(error)) from None
        raise


snapshots_app = typer.Typer(help="The snapshot timeline: every change the agent made.", no_args_is_help=False)
app.add_typer(snapshots_app, name="snapshots")


@snapshots_app.callback(invoke_without_command=True)
def snapshots_list(ctx: typer.Context, session: SessionOpt = None, cwd: CwdOpt = None) -> None:
    """Show a session's snapshot timeline, oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.console import Console
    from rich.table import Table

    from agentcli.headless import format_age, format_changes

    with _snapshot_session(session, cwd) as opened:
        timeline = _snapshot_call(opened.timeline)
    table = Table(box=None, header_style="bold", title=f"session {opened.id}", title_justify="left")
    for column in ("#", "id", "age", "tool", "reason", "changes"):
        flexible = column in ("reason", "changes")
        table.add_column(column, no_wrap=not flexible, overflow="fold", ratio=1 if flexible else None,
                         min_width=None if flexible else max(len(column), {"id": 10, "age": 7}.get(column, 0)))
    from datetime import datetime

    from agentcli.events import FileChange

    for snap in timeline:
        files = [FileChange(path=f.path, status=f.status, added=f.added, removed=f.removed) for f in snap.files]
        table.add_row(str(snap.seq), snap.id, format_age(datetime.fromisoformat(snap.created_at)),
                      snap.tool_name or "—", snap.reason, format_changes(files))
    Console().print(table)


@snapshots_app.command("gc")
def snapshots_gc(cwd: CwdOpt = None) -> None:
    """Repack this workspace's snapshot store and keep it within its size budget."""
    from agentcli.session.factory import SessionSetupError, collect_garbage

    workspace = _workspace(cwd)
    try:
        result = collect_garbage(workspace, _settings(workspace))
    except SessionSetupError as error:
        raise _fail(str(error)) from None
    mib = 1024 * 1024
    typer.echo(f"store: {result.size_before / mib:.1f} MiB → {result.size_after / mib:.1f} MiB "
               f"(budget {result.budget_bytes / mib:.0f} MiB) in {result.duration_s:.2f}s")
    for dropped in result.dropped:
        typer.echo(f"  dropped snapshot {dropped.session_id}:{dropped.seq} ({dropped.id}) to stay within budget")


@app.command()
def diff(
    a: Annotated[str, typer.Argument(help="Snapshot: sequence number or short hash.")],
    b: Annotated[str | None, typer.Argument(help="Second snapshot (default: the working tree).")] = None,
    session: SessionOpt = None,
    stat: Annotated[bool, typer.Option("--stat", help="Only the per-file line counts.")] = False,
    cwd: CwdOpt = None,
) -> None:
    """Show what changed between snapshot A and B, or between A and the files now."""
    from rich.console import Console
    from rich.syntax import Syntax

    with _snapshot_session(session, cwd) as opened:
        result = _snapshot_call(lambda: opened.diff(a, b))
    console = Console(highlight=False)
    for change in result.files:
        console.print(f"[bold]{change.status:<10}[/] {change.path}  [green]+{change.added}[/] [red]−{change.removed}[/]")
    totals = result.totals
    console.print(f"{totals.files} files, +{totals.added} −{totals.removed}")
    if not stat:
        for change in result.files:
            if change.patch:
                console.print(Syntax(change.patch, "diff", theme="ansi_dark", background_color="default"))


@app.command()
def restore(
    snapshot: Annotated[str, typer.Argument(help="Snapshot: sequence number or short hash.")],
    session: SessionOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list the paths it would change.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Restore without asking.")] = False,
    cwd: CwdOpt = None,
) -> None:
    """Make the files match a snapshot. The current state is snapshotted first, so it can be undone."""
    with _snapshot_session(session, cwd) as opened:
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
                raise _fail("restoring changes files; confirm with --yes (or look first with --dry-run)")
            if not typer.confirm("Restore these paths?"):
                raise typer.Exit(1)
        result = _snapshot_call(lambda: opened.restore(snapshot))
    undo = result.undo
    typer.echo(f"restored in {result.duration_s:.2f}s; undo with: agentcli restore {undo.seq} --session {opened.id}")


def _demo_task(bundled: Path) -> str:
    return (bundled / "task.txt").read_text(encoding="utf-8").strip()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentcli {__version__}")
        raise typer.Exit()


ThemeOpt = Annotated[str | None, typer.Option("--theme", help="TUI theme: agentcli-dark, agentcli-light, …")]


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _open_tui(workspace: Path, settings: Any = None, *, overrides: dict[str, Any] | None = None,
              session: Any = None, prompt: str | None = None, theme: str | None = None) -> None:
    """Run the TUI and exit with its code; without ``settings`` the app loads them (with the flags in
    ``overrides``) and asks about a home folder after its first frame."""
    from agentcli.tui import run_tui

    raise typer.Exit(run_tui(workspace=workspace, settings=settings, overrides=overrides, session=session,
                             initial_prompt=prompt, theme=theme))


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    cwd: CwdOpt = None,
    workflow: WorkflowOpt = None,
    permission_mode: ModeOpt = None,
    sandbox: SandboxOpt = None,
    theme: ThemeOpt = None,
) -> None:
    """A terminal coding agent you can watch, stop, answer and undo.

    With no command, opens the TUI on a new session in the workspace.
    """
    if ctx.invoked_subcommand is not None:
        return
    if not _interactive():
        typer.echo(ctx.get_help())
        raise typer.Exit(EXIT_USAGE)
    overrides = {"model": model, "api_base": api_base, "workflow": workflow,
                 **_permission_flags(False, permission_mode, sandbox)}
    _open_tui(_workspace(cwd), overrides=overrides, theme=theme)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
