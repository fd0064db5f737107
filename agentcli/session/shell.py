"""``!command``: a shell command the user runs in the workspace between turns.

It goes where the agent's own ``bash`` calls go: the permission policy judges it (a deny rule
refuses it; "ask" does not stop it, the user asked), the same tool runs it (sandbox, timeout,
process group, output cut), and the workspace is snapshotted before and after, so
``/undo`` and the timeline cover it. The transcript shows it as a call; the model reads the
command and its output as a note from the user at its next request (a tool result with no call
of its own would break the pairing providers require).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace

from agentcli.events import ToolCallFinished
from agentcli.session.capturing import Capturing
from agentcli.session.errors import SessionStateError
from agentcli.session.turn import Turn

MAX_NOTE_CHARS = 20_000
"""Of the output the model reads (the tool has cut it already; this bounds a very long one)."""


async def run_user_command(turn: Turn, command: str) -> ToolCallFinished:
    """Run ``command`` for the user, announce it, and tell the model what it printed.

    Raises:
        SessionStateError: an empty command, or one a deny rule refuses.
    """
    if not command.strip():
        raise SessionStateError("give a command after !, e.g. !git status")
    arguments = json.dumps({"command": command})
    decision = turn.policy.decide("bash", {"command": command})
    if decision.denied:
        raise SessionStateError(f"not run: {decision.refusal()}")
    call_id = f"user-{uuid.uuid4().hex[:10]}"
    capturing = Capturing(turn)
    await capturing.capture("before !command")
    started = turn.clock()
    turn.announce_call(call_id, "bash", arguments)
    result = turn.redact.result(await turn.tools.call("bash", arguments, replace(turn.tool_context, call_id=call_id)))
    finished = ToolCallFinished(call_id=call_id, name="bash", ok=result.ok, output=result.output, error=result.error,
                                duration_s=round(turn.clock() - started, 6), files_changed=list(result.files_changed))
    turn.emit(finished)
    await capturing.capture("after !command")
    output = result.output if len(result.output) <= MAX_NOTE_CHARS else result.output[:MAX_NOTE_CHARS] + "\n[… cut]"
    turn.add_note("shell", f"The user ran a command in the workspace:\n$ {turn.redact(command)}\n{output}".rstrip())
    return finished
