"""``agentcli rewind``: take a session back to just before one of the user's messages."""

from __future__ import annotations

import asyncio
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from agentcli.cli.common import fail, load_settings
from agentcli.cli.options import CommonOptions, shared_options
from agentcli.cli.run import _session_to_resume


class What(str, Enum):
    both = "both"
    code = "code"
    conversation = "conversation"


@shared_options("rewind")
def rewind(
    session_ref: Annotated[str | None, typer.Argument(metavar="ID", help="Session id (or a unique prefix).")] = None,
    message: Annotated[int | None, typer.Argument(metavar="N", help="The message to go back to before.")] = None,
    what: Annotated[What, typer.Option("--what", help="both, code (files only) or conversation.")] = What.both,
    undo: Annotated[bool, typer.Option("--undo", help="Take back the session's last rewind.")] = False,
    last: Annotated[bool, typer.Option("--last", help="The newest session of this workspace.")] = False,
    *,
    options: CommonOptions,
) -> None:
    """List a session's messages, or rewind it to just before message N.

    The code goes back to the snapshot taken before that message's turn changed anything, the
    conversation to before the message, or both. The log keeps everything: --undo takes the
    rewind back (while nothing was said after it), and resume follows the rewound branch.
    """
    from agentcli.session import SessionStateError
    from agentcli.session.factory import SessionSetupError, resume_session, resume_settings_overrides

    if last and session_ref is not None and message is None and session_ref.isdigit():
        message, session_ref = int(session_ref), None
    entry = _session_to_resume(session_ref, last, options.cwd)
    folder = Path(entry.meta.workspace)
    if not folder.is_dir():
        raise fail(f"the session's workspace {folder} no longer exists")
    settings = load_settings(folder, resume_settings_overrides(entry, options.settings_overrides()))
    try:
        # Listing the messages only reads: it works on a session another agentcli is running.
        session = resume_session(entry, settings, record=undo or message is not None)
    except SessionSetupError as error:
        raise fail(str(error)) from None
    try:
        if undo:
            asyncio.run(session.undo_rewind())
            typer.echo(f"Undid the last rewind of {session.id}: files and conversation are as they were.")
            return
        points = session.rewind_points.points
        if message is None:
            if not points:
                typer.echo("No messages to rewind to.")
            for point in points:
                first = point.text.strip().split("\n", 1)[0][:70]
                notes = [] if point.message_index is not None else ["compacted: code only"]
                if point.snapshot_id is None:
                    notes.append("no snapshot: conversation only")
                typer.echo(f"{point.number:>3}  {first}" + (f"  ({'; '.join(notes)})" if notes else ""))
            return
        point = asyncio.run(session.rewind(message, code=what is not What.conversation,
                                           conversation=what is not What.code))
        typer.echo(f"Rewound {what.value} of {session.id} to before #{point.number}: {point.text.strip()[:70]}\n"
                   f"Undo with: agentcli rewind {session.id} --undo")
    except SessionStateError as error:
        raise fail(str(error)) from None
    finally:
        session.close()
