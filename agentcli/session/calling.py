"""The work of ``executingTool``: run the next call of the reply and give it its result.

A call the phase does not offer, or that a rule or the user refused, gets an error result the
model can read instead of running. Whether the call ends the turn, needs a snapshot or goes on
to the progress review is the chart's choice, made from the
:class:`~agentcli.session.outcomes.CallOutcome` this returns.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from agentcli.events import ToolCallRequest
from agentcli.session.outcomes import CallOutcome
from agentcli.session.turn import INTERRUPTED, Turn
from agentcli.tools.base import ToolResult


@dataclass
class _Running:
    """The call in flight, for the exit callback to answer if it is cut off."""

    call: ToolCallRequest
    started: float
    failure: BaseException | None = None


class Calling:
    """Runs tool calls for ``executingTool``."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self._running: _Running | None = None

    async def run_call(self) -> CallOutcome:
        """Invoked on entering the state: run the first waiting call (or refuse it)."""
        turn = self.turn
        call = turn.pending[0]
        turn.start_work(f"running {call.name}")
        await turn.tools.ready()  # a resumed session's first call may be to an MCP server still starting
        tool = turn.tools.declaration(call.name)
        refusal = turn.refusal(call)
        running = self._running = _Running(call, turn.clock())
        turn.announce_call(call.id, call.name, call.arguments)
        try:
            await asyncio.to_thread(turn.watchdog.before, call, tool)
            if refusal is not None:
                result = ToolResult.failure(refusal)
            else:
                context = replace(turn.tool_context, call_id=call.id, links_approved=turn.approved(call))
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

    def record_cut_off_call(self) -> None:
        """On leaving the state mid-call (a pause, an error): the call gets a result saying so."""
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
