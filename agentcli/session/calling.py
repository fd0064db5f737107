"""The work of ``executingTool``: run the next call of the reply and give it its result.

A call the phase does not offer, or that a rule or the user refused, gets an error result the
model can read instead of running. Whether the call ends the turn, needs a snapshot or goes on
to the progress review is the chart's choice, made from the
:class:`~agentcli.session.outcomes.CallOutcome` this returns.

A call cut off on its way (a pause, Ctrl-C, an unexpected failure) still gets its result, and,
when it may have changed files, its own snapshot: otherwise what a killed command did lands in
the capture before the next turn, mixed with the user's own edits, and cannot be undone alone.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from agentcli.events import ToolCallRequest
from agentcli.session.capturing import Capturing
from agentcli.session.outcomes import CallOutcome
from agentcli.session.turn import INTERRUPTED, Turn
from agentcli.tools.base import Tool, ToolResult


@dataclass
class _Running:
    """The call in flight, for the exit callback to answer if it is cut off."""

    call: ToolCallRequest
    started: float
    tool: type[Tool[Any]]
    ran: bool = False
    """The tool itself was called (not only refused, or cut off before it began)."""
    failure: BaseException | None = None


class Calling:
    """Runs tool calls for ``executingTool``."""

    def __init__(self, turn: Turn, capturing: Capturing) -> None:
        self.turn = turn
        self.capturing = capturing
        self._running: _Running | None = None

    async def run_call(self) -> CallOutcome:
        """Invoked on entering the state: run the first waiting call (or refuse it)."""
        turn = self.turn
        call = turn.pending[0]
        turn.start_work(f"running {call.name}")
        await turn.tools.ready()  # a resumed session's first call may be to an MCP server still starting
        tool = turn.tools.declaration(call.name)
        refusal = turn.refusal(call)
        running = self._running = _Running(call, turn.clock(), tool)
        turn.announce_call(call.id, call.name, call.arguments)
        try:
            await asyncio.to_thread(turn.watchdog.before, call, tool)
            if refusal is not None:
                result = ToolResult.failure(refusal)
            else:
                context = replace(turn.tool_context, call_id=call.id, links_approved=turn.approved(call))
                running.ran = True
                result = turn.redact.result(await turn.tools.call(call.name, call.arguments, context))
        except Exception as error:
            # Unexpected: the chart halts with the error; the exit callback still answers the call.
            running.failure = error
            raise
        self._running = None
        turn.pending.popleft()
        turn.finish_call(call, result, turn.clock() - running.started)
        if result.data.get("attachments"):
            await turn.attach_images(call.name, result.data["attachments"])
        for event in result.events:
            turn.emit(event)
        turn.end_work()
        return CallOutcome(call, result, tool)

    async def record_cut_off_call(self) -> None:
        """On leaving the state mid-call (a pause, an error): the call gets a result saying so,
        and a snapshot of what it did before it was stopped.

        An exit action rather than a state of its own: the pause still goes straight to
        ``paused`` (a capturing state on the way would be one more step a second pause could cut
        short); the chart has already cancelled the call's work when this runs, and its
        ``TurnEnded`` follows the snapshot.
        """
        turn = self.turn
        running, self._running = self._running, None
        if running is None:
            return
        call = running.call
        if turn.pending and turn.pending[0] is call:
            turn.pending.popleft()
        failure = running.failure
        if failure is None:
            result, interrupted = ToolResult.failure(INTERRUPTED), True
        else:
            why = f"the {call.name} tool failed unexpectedly ({type(failure).__name__}: {failure}); the run halted"
            result, interrupted = ToolResult.failure(why), False
        turn.finish_call(call, result, turn.clock() - running.started, interrupted=interrupted)
        if running.ran and running.tool.changes_files != "never":
            # The command is killed (its whole group) and reaped before its files are read: a
            # capture taken while it still dies could miss its last writes.
            await turn.settle()
            await self.capturing.capture_cut_off(call, "interrupted" if interrupted else "failed")
