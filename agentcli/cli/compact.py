"""``agentcli compact``: summarize the older part of a session's model view now."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from agentcli.cli.common import fail, load_settings
from agentcli.cli.drive import drive
from agentcli.cli.options import CommonOptions, shared_options
from agentcli.cli.run import _session_to_resume


@shared_options("compact")
def compact(
    session_ref: Annotated[str | None, typer.Argument(metavar="ID", help="Session id (or a unique prefix).")] = None,
    focus: Annotated[
        str | None, typer.Option("--focus", help="What the summary should keep in detail (a file, a decision).")
    ] = None,
    last: Annotated[bool, typer.Option("--last", help="The newest session of this workspace.")] = False,
    *,
    options: CommonOptions,
) -> None:
    """Replace the older part of a waiting session's model view with a summary the model writes.

    The session's log keeps everything; only what the model is sent shrinks. A session that was
    idle stays idle (exit 0); a paused or halted one is paused after it (exit 5).
    """
    from agentcli.session.factory import SessionSetupError, resume_session, resume_settings_overrides, warm_up

    entry = _session_to_resume(session_ref, last, options.cwd)
    folder = Path(entry.meta.workspace)
    if not folder.is_dir():
        raise fail(f"the session's workspace {folder} no longer exists")
    settings = load_settings(folder, resume_settings_overrides(entry, options.settings_overrides()))
    warm_up(settings)
    try:
        session = resume_session(entry, settings)
    except SessionSetupError as error:
        raise fail(str(error)) from None
    if not session.view.allows("compact"):
        session.close()
        raise fail(f"the session is {session.view.control}: only a waiting session (idle, paused, halted) is compacted")
    raise typer.Exit(asyncio.run(drive(session, lambda: session.compact(focus), options.output)))
