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
from typing import Annotated, Any

import typer

from agentcli import __version__

app = typer.Typer(
    name="agentcli",
    help="A terminal coding agent you can watch, stop, answer and undo.",
    no_args_is_help=True,
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
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Approve every tool call without asking.")]
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


async def _drive(session: Any, prompt: str, output: OutputFormat) -> int:
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
        ended = await session.run_turn(prompt)
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
) -> None:
    """Run the agent on PROMPT headless until it completes, asks, pauses or halts.

    Exit codes: 0 completed, 1 error, 2 usage or configuration error, 3 awaiting
    clarification, 4 halted, 5 paused.
    """
    workspace = _workspace(cwd)
    settings = _settings(workspace, model=model, api_base=api_base, max_steps=max_steps)
    from agentcli.session.factory import SessionSetupError, new_session, warm_up

    warm_up(settings)
    try:
        session = new_session(workspace, settings)
    except SessionSetupError as error:
        raise _fail(str(error)) from None
    raise typer.Exit(asyncio.run(_drive(session, prompt, output)))


@app.command()
def demo(
    delay: Annotated[float, typer.Option(help="Seconds between streamed text pieces.")] = 0.02,
    output: OutputOpt = OutputFormat.text,
    keep: Annotated[bool, typer.Option(help="Keep the demo folder and print its path.")] = False,
) -> None:
    """Watch the agent fix a bug in a small sample project: offline, no key needed."""
    import shutil
    import tempfile

    from agentcli.config import Settings
    from agentcli.session.factory import model_client_for, new_session

    bundled = Path(__file__).parent / "data" / "demo"
    workspace = Path(tempfile.mkdtemp(prefix="agentcli-demo-")).resolve()
    shutil.copytree(bundled / "project", workspace, dirs_exist_ok=True)
    settings = Settings(model=f"replay:{bundled / 'recording.json'}")
    session = new_session(workspace, settings, model_client=model_client_for(settings, replay_delay_s=delay))
    if output is OutputFormat.text:
        typer.echo(f"Demo workspace: {workspace}")
    code = asyncio.run(_drive(session, _demo_task(bundled), output))
    if keep:
        typer.echo(f"Demo files kept in {workspace}")
    else:
        shutil.rmtree(workspace, ignore_errors=True)
    raise typer.Exit(code)


def _demo_task(bundled: Path) -> str:
    return (bundled / "task.txt").read_text(encoding="utf-8").strip()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentcli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """A terminal coding agent you can watch, stop, answer and undo."""


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
