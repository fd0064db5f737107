"""The commands that run the agent: ``run``, ``resume``, ``demo``, and ``agentcli`` alone (the TUI).

Headless, each starts one turn through :func:`agentcli.cli.drive.drive`; in a terminal, the bare
command, ``demo`` and a ``resume`` with nothing to say open the TUI instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn

import typer

import agentcli
from agentcli import startup_gc
from agentcli.cli.common import EXIT_USAGE, fail, find_session, interactive, load_settings, workspace
from agentcli.cli.drive import drive
from agentcli.cli.options import ROOT, CommonOptions, OutputFormat, shared_options

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.session import Session
    from agentcli.session.log import SessionEntry


class Scope(str, Enum):
    once = "once"
    session = "session"
    always = "always"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentcli {agentcli.__version__}")
        raise typer.Exit()


@shared_options(ROOT)
def root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    *,
    options: CommonOptions,
) -> None:
    """With no command, opens the TUI on a new session in the workspace."""
    if ctx.invoked_subcommand is not None:
        startup_gc.resume()  # a command runs: start-up is over (the TUI resumes after its first frame)
        return
    if not interactive():
        typer.echo(ctx.get_help())
        raise typer.Exit(EXIT_USAGE)
    open_tui(workspace(options.cwd), overrides=options.settings_overrides(), theme=options.theme)


@shared_options("run")
def run(
    prompt: Annotated[str, typer.Argument(metavar="PROMPT", help="The task for the agent.")], *, options: CommonOptions
) -> None:
    """Run the agent on PROMPT headless until it completes, asks, pauses or halts.

    Exit codes: 0 completed, 1 error, 2 usage or configuration error, 3 awaiting
    clarification, 4 halted, 5 paused or waiting for approval.
    """
    if not prompt.strip():
        raise fail("the prompt is empty: give the agent a task")
    folder = workspace(options.cwd)
    from agentcli.prompt.custom import CommandError, headless_task

    try:
        task, command = headless_task(folder, prompt)
    except CommandError as error:
        raise fail(str(error)) from None
    overrides = options.settings_overrides()
    if command is not None:  # the command's front matter, unless a flag says otherwise
        overrides["model"] = overrides.get("model") or command.model
        overrides["workflow"] = overrides.get("workflow") or command.workflow
    settings = load_settings(folder, overrides)
    from agentcli.prompt.mentions import attach
    from agentcli.session.factory import SessionSetupError, check_models, new_session, unsafe_workspace, warm_up

    warm_up(settings)
    broad = unsafe_workspace(folder) if settings.snapshots.enabled else None
    if broad and not options.yes:
        raise fail(f"{broad}\nRun in a project folder, or pass --yes to snapshot it anyway.")
    try:
        check_models(settings, folder)
        session = new_session(folder, settings)
    except SessionSetupError as error:
        raise fail(str(error)) from None
    attached = attach(folder, task) if "@" in task else None
    for problem in attached.problems if attached else []:
        typer.echo(f"agentcli: {problem}", err=True)

    def send() -> Awaitable[None]:
        if attached is None or not attached.attachments:
            return session.send_user_message(task)
        return session.send_user_message(task, attached=attached.text, files=attached.paths)

    raise typer.Exit(asyncio.run(drive(session, send, options.output)))


@shared_options("demo")
def demo(
    delay: Annotated[float, typer.Option(help="Seconds between streamed text pieces.")] = 0.02,
    keep: Annotated[bool, typer.Option(help="Keep the demo folder and print its path.")] = False,
    headless: Annotated[bool, typer.Option("--headless", help="Print to the terminal instead of the TUI.")] = False,
    *,
    options: CommonOptions,
) -> None:
    """Watch the agent fix a bug in a small sample project: offline, no key needed.

    In a terminal it opens the TUI; piped, or with --headless, it prints like `agentcli run`.
    """
    import shutil
    import tempfile

    from agentcli import demo as the_demo
    from agentcli.config import Settings
    from agentcli.session.factory import SessionSetupError, model_client_for, new_session

    folder = Path(tempfile.mkdtemp(prefix="agentcli-demo-")).resolve()
    shutil.copytree(the_demo.BUNDLED / "project", folder, dirs_exist_ok=True)
    settings = Settings(model=the_demo.MODEL)
    try:
        session = new_session(folder, settings, model_client=model_client_for(settings, replay_delay_s=delay),
                              default_permission_mode=the_demo.PERMISSION_MODE)
    except SessionSetupError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise fail(str(error)) from None
    task = the_demo.task()
    if interactive() and not headless and options.output is OutputFormat.text:
        try:
            open_tui(folder, settings, session=session, prompt=task, theme=options.theme)
        finally:
            _leave_demo_folder(folder, session, keep=keep, err=False, hint=True)
    if options.output is OutputFormat.text:
        typer.echo(f"Demo workspace: {folder}")
    code = asyncio.run(drive(session, lambda: session.send_user_message(task), options.output))
    _leave_demo_folder(folder, session, keep=keep, err=options.output is not OutputFormat.text, hint=False)
    raise typer.Exit(code)


def _leave_demo_folder(folder: Path, session: Session, *, keep: bool, err: bool, hint: bool) -> None:
    """Remove the demo's folder, unless asked to keep it or its session did not complete: a demo
    quit or stopped half way is resumable (``agentcli resume ID``), and needs its folder for it.
    ``hint`` adds how (after the TUI; the headless printer has said it already)."""
    import shutil

    ended = session.last_turn
    completed = ended is not None and ended.outcome == "completed"
    if keep or not completed:
        resumable = "" if completed or not hint else f"; continue it with: agentcli resume {session.id}"
        typer.echo(f"Demo files kept in {folder}{resumable}", err=err)
    else:
        shutil.rmtree(folder, ignore_errors=True)


@shared_options("resume")
def resume(
    session_ref: Annotated[str | None, typer.Argument(metavar="ID", help="Session id (or a unique prefix).")] = None,
    prompt: Annotated[
        str | None, typer.Argument(metavar="PROMPT", help="Guidance, a follow-up task, or the answer to a question.")
    ] = None,
    answer: Annotated[str | None, typer.Option("--answer", help="Answer the question the agent asked.")] = None,
    last: Annotated[bool, typer.Option("--last", help="The newest session of this workspace.")] = False,
    approve: Annotated[bool, typer.Option("--approve", help="Run the tool call waiting for approval.")] = False,
    deny: Annotated[bool, typer.Option("--deny", help="Refuse the tool call waiting for approval.")] = False,
    scope: Annotated[
        Scope, typer.Option("--scope", help="once, session (remember its rule), or always (.agentcli.toml).")
    ] = Scope.once,
    headless: Annotated[bool, typer.Option("--headless", help="Never open the TUI.")] = False,
    *,
    options: CommonOptions,
) -> None:
    """Continue a session after an exit, a pause, a question or a crash. Nothing is re-run.

    With --last, the first argument is the PROMPT. A session waiting for an answer takes it from
    --answer (or PROMPT); a paused or halted one continues, with PROMPT as guidance; a completed
    one needs a PROMPT: the next task. In a terminal, with none of PROMPT, --answer, --approve
    or --deny, it opens the session in the TUI with its history.

    Exit codes as for run: 0 completed, 1 error, 2 usage or configuration error, 3 awaiting
    clarification, 4 halted, 5 paused or waiting for approval.
    """
    from agentcli.session.factory import SessionSetupError, resume_session, resume_settings_overrides, warm_up

    if approve and deny:
        raise fail("--approve and --deny exclude each other")
    if last:
        prompt, session_ref = session_ref, None
    entry = _session_to_resume(session_ref, last, options.cwd)
    folder = Path(entry.meta.workspace)
    if not folder.is_dir():
        raise fail(f"the session's workspace {folder} no longer exists")
    settings = load_settings(folder, resume_settings_overrides(entry, options.settings_overrides()))
    in_tui = (interactive() and not headless and options.output is OutputFormat.text
              and prompt is None and answer is None and not approve and not deny)
    if not in_tui:
        warm_up(settings)  # the TUI starts it after its first frame
    try:
        session = resume_session(entry, settings, default_permission_mode="ask" if in_tui else "edits")
    except SessionSetupError as error:
        raise fail(str(error)) from None
    if in_tui:
        open_tui(folder, settings, session=session, theme=options.theme)
    verdict: Literal["approve", "deny"] | None = "approve" if approve else "deny" if deny else None
    try:
        start = _next_turn(session, prompt=prompt, answer=answer, verdict=verdict, scope=scope)
    except typer.Exit:
        session.close()
        raise
    raise typer.Exit(asyncio.run(drive(session, start, options.output)))


def _session_to_resume(session_ref: str | None, last: bool, cwd: Path | None) -> SessionEntry:
    from agentcli.config import data_home
    from agentcli.session.log import list_sessions

    if last:
        folder = workspace(cwd)
        entries = list_sessions(data_home(), folder)
        if not entries:
            raise fail(f"no sessions in {folder}; `agentcli sessions --all` lists every workspace")
        return entries[0]
    if session_ref is None:
        raise fail("give a session ID or --last")
    return find_session(session_ref)


def _next_turn(session: Session, *, prompt: str | None, answer: str | None,
               verdict: Literal["approve", "deny"] | None, scope: Scope) -> Callable[[], Awaitable[object]]:
    """The Session command that starts the next turn, from what the session waits for (its
    view) and what the user gave; exit 2 naming the flag to use when they do not fit.

    The words go to ``Session.respond``, which knows whether they answer a question, guide a
    paused or halted session on, or are the next task; only the checks that name flags are here.
    """
    view = session.view
    if answer is not None and prompt is not None:
        raise fail("give the answer once: with --answer or as PROMPT, not both")
    if verdict is not None:
        if not view.allows(verdict):
            raise fail(f"no tool call is waiting for approval (the session is {view.control})")
        if prompt is not None:
            if not prompt.strip():
                raise fail("the prompt is empty")
            # Words given with the verdict reach the agent with the call's result, at its next
            # step, as words typed while it works do in the TUI (they were dropped unread).
            session.queue(prompt)
        decide = session.approve if verdict == "approve" else session.deny
        return lambda: decide(scope.value)
    if view.waiting_for == "approval":
        what = view.permission.summary if view.permission else "(unknown)"
        raise fail(f"the session waits for approval of: {what}\nuse --approve or --deny (with --scope)")
    if answer is not None and view.waiting_for != "answer":
        raise fail(f"the session is not waiting for an answer (it is {view.control})")
    words = answer if answer is not None else prompt
    if words is not None and view.waiting_for == "answer" and view.question is not None:
        words = _option_by_number(words, view.question.options)
    if words is not None and not words.strip():
        raise fail(f"the {'answer' if answer is not None else 'prompt'} is empty")
    if words is None and session.queued:
        # Typed while the agent worked and still queued when its process ended: what the user
        # meant to send next (the TUI would have sent them as the turn ended).
        return session.send_queued
    if words is None and view.waiting_for == "answer":
        question = view.question.question if view.question else "(unknown)"
        raise fail(f"the session waits for an answer to: {question}\nuse --answer TEXT")
    if words is None and view.waiting_for == "task":
        raise fail("the session's last turn completed; give a PROMPT for the next task")
    return lambda: session.respond(words)


def _option_by_number(words: str, options: list[str]) -> str:
    """An answer of just an option's number (the printed question numbers them) means that
    option, as in the TUI's answer box; anything else is the answer as written."""
    number = words.strip()
    if number.isdigit() and 1 <= int(number) <= len(options):
        return options[int(number) - 1]
    return words


def open_tui(folder: Path, settings: Settings | None = None, *, overrides: Mapping[str, Any] | None = None,
             session: Session | None = None, prompt: str | None = None, theme: str | None = None) -> NoReturn:
    """Run the TUI and exit with its code; without ``settings`` the app loads them (with the flags in
    ``overrides``) and asks about a home folder after its first frame."""
    from agentcli.tui import run_tui

    raise typer.Exit(run_tui(workspace=folder, settings=settings, overrides=overrides, session=session,
                             initial_prompt=prompt, theme=theme))
