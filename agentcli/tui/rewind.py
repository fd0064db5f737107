"""``/rewind`` in the TUI: pick one of your messages, then what goes back to before it.

The session does the work (:meth:`Session.rewind`): the code to the snapshot from before the
message's turn, the model's view to before the message, or both. The message comes back into
the prompt to edit and send again, as in Claude Code; ``/undo`` takes the rewind back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.tui.help import PickOne

if TYPE_CHECKING:
    from agentcli.tui.app import AgentApp

_WHAT = {
    "both": (True, True, "Code and conversation"),
    "conversation": (False, True, "Conversation only (the files stay as they are)"),
    "code": (True, False, "Code only (the agent remembers everything)"),
}


async def rewind(app: AgentApp) -> None:
    """Ask which message and what to rewind, then do it; refusals are notified."""
    from agentcli.session import SessionStateError

    session = app.session
    if session is None:
        return
    points = list(reversed(session.rewind_points.points))
    if not points:
        app.notify("Nothing to rewind to: no message sent yet.", severity="warning")
        return
    options = []
    for point in points:
        first = point.text.strip().split("\n", 1)[0]
        parts = [] if point.message_index is not None else ["compacted: code only"]
        if point.snapshot_id is None:
            parts.append("no snapshot: conversation only")
        extra = f"  ({'; '.join(parts)})" if parts else ""
        options.append((str(point.number), f"#{point.number}  {first[:70]}{extra}"))
    picked = await app.push_screen_wait(PickOne("Rewind to just before which message? (esc cancels)", options))
    if picked is None:
        return
    point = next(p for p in points if p.number == int(picked))
    choices = [(key, label) for key, (code, talk, label) in _WHAT.items()
               if (not code or point.snapshot_id is not None) and (not talk or point.message_index is not None)]
    what = await app.push_screen_wait(PickOne(f"Rewind what to before #{point.number}?", choices))
    if what is None:
        return
    code, conversation, _ = _WHAT[what]
    try:
        await session.rewind(point.number, code=code, conversation=conversation)
    except SessionStateError as error:
        app.notify(str(error), severity="warning")
        return
    except Exception as error:  # noqa: BLE001 - a store failure: said, and the session goes on
        app.notify(f"Rewind failed: {error}", severity="error")
        return
    if conversation:
        app.prompt.input.value = point.text
    app.notify(f"Rewound {what} to before #{point.number}. /undo takes it back.")
