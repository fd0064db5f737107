"""The work the chart's states invoke: streaming the model, running tools, keeping the conversation.

The chart decides where the agent is; the Runtime does what that state means and tells the chart
what happened by sending it an event. A state's work runs in the task the chart's ``invoke``
starts; leaving the state cancels that task. What was in flight at that moment (a half-streamed
reply, a running tool) is recorded synchronously in the state's exit callback, so the history
stays consistent whatever the order in which the cancelled task winds down.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statemachine import StateChart

if TYPE_CHECKING:
    from agentcli.snapshots import Snapshot, SnapshotStore

from agentcli.config import Settings
from agentcli.events import (
    FileChange,
    AssistantMessage,
    ClarificationRequested,
    ErrorOccurred,
    Event,
    ModelNote,
    Notice,
    PermissionRequested,
    PlanUpdated,
    ProgressReported,
    RetryScheduled,
    SnapshotCaptured,
    StuckDetected,
    TextDelta,
    ThoughtRecorded,
    ToolCallFinished,
    ToolCallRequest,
    ToolCallStarted,
    UsageReported,
    field_names,
)
from agentcli.llm.types import Message, ModelCallError, ModelClient, ModelRequest, ModelResponse, RetryNotice, TextChunk
from agentcli.session.coalesce import TextCoalescer
from agentcli.session.context import Conversation
from agentcli.session.watchdog import Watchdog, parse_arguments
from agentcli.session.prompt import REMINDER, TRUNCATED_REMINDER, system_prompt, workspace_summary
from agentcli.permissions import PermissionState, Policy
from agentcli.secrets import Redactor
from agentcli.tools.base import ToolContext, ToolResult
from agentcli.tools.registry import CONTROL_TOOLS, ToolRegistry
from agentcli.tools.workflow_tools import PlanStore
from agentcli.workflow.model import ALL_TOOLS, Phase, Workflow

CONTEXT_CHARS = 400_000
"""Roughly 100k tokens: conversations past this are trimmed, oldest tool groups first."""

_THOUGHT_FIELDS = field_names(ThoughtRecorded) - {"ts", "type", "call_id"}

INTERRUPTED = "Interrupted before it finished: the run was paused. Its effects may be partial."
NOT_RUN = "Not run: the turn ended before this call was reached."


@dataclass
class Totals:
    """Running usage of the session."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    """None once any call had an unknown price: a partial sum would understate the cost."""
    steps: int = 0
    """Model calls made in the current turn."""


@dataclass
class _InFlight:
    """What a state's task is doing right now, for its exit callback to record if cut off."""

    text: list[str] = field(default_factory=list)
    streaming: bool = False
    call: ToolCallRequest | None = None
    call_started: float = 0.0


def _history_arguments(raw: str) -> str:
    """Arguments as stored in the conversation: always a JSON object.

    Some providers (Anthropic through litellm) reject a history whose arguments are not JSON, so
    a malformed call is kept as an object that still shows the model what it sent.
    """
    try:
        if isinstance(json.loads(raw or "{}"), dict):
            return raw or "{}"
    except json.JSONDecodeError:
        pass
    return json.dumps({"_malformed_arguments": raw[:2000]})


def snapshot_event(snap: Snapshot, skipped: list[str], duration_s: float) -> SnapshotCaptured:
    return SnapshotCaptured(
        snapshot_id=snap.id,
        seq=snap.seq,
        tree=snap.tree,
        reason=snap.reason,
        tool_call_id=snap.tool_call_id,
        tool_name=snap.tool_name,
        files=[FileChange(path=f.path, status=f.status, added=f.added, removed=f.removed) for f in snap.files],
        skipped=skipped,
        duration_s=round(duration_s, 6),
    )


def assistant_message(text: str, calls: list[ToolCallRequest]) -> Message:
    message: Message = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _history_arguments(c.arguments)}}
            for c in calls
        ]
    return message


def tool_message(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


class Runtime:
    """One session's working state and the coroutines the chart invokes.

    It is registered on the chart as a listener: the chart's ``invoke``, ``cond`` and exit
    callbacks are resolved here by name.
    """

    def __init__(
        self,
        *,
        workspace: Path,
        settings: Settings,
        workflow: Workflow,
        model_client: ModelClient,
        tools: ToolRegistry,
        emit: Callable[[Event], None],
        plan: PlanStore | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.workflow = workflow
        self.model_client = model_client
        self.tools = tools
        self.emit = emit
        self.chart: StateChart | None = None
        self.messages = Conversation()
        """The conversation without the system prompt, which is rebuilt for every request."""
        self.pending: deque[ToolCallRequest] = deque()
        """Calls of the latest reply not yet run, in order."""
        self.totals = Totals()
        self.reminded = False
        self.phase_events: frozenset[str] = frozenset()
        self.last_result: ToolResult | None = None
        self.last_call: ToolCallRequest | None = None
        self._flight = _InFlight()
        self._task: asyncio.Task[Any] | None = None
        self._coalescer: TextCoalescer | None = None
        self.clock: Callable[[], float] = time.monotonic
        """Times tool calls; tests that compare screens fix it so durations do not vary."""
        self.tool_context = ToolContext(workspace=workspace, settings=settings.tools, sandbox=settings.sandbox)
        self.policy = policy or Policy(settings.permissions, workspace, state=PermissionState(workspace), default_mode="all")
        self.redact = Redactor()
        self.verdicts: dict[str, bool] = {}
        """The user's answers to permission requests, by call id, until the call runs."""
        self.watchdog = Watchdog(workspace, settings.progress)
        self.snapshots: SnapshotStore | None = None
        """The snapshot store, when snapshots are on (the Session attaches it)."""
        self.session_id = ""
        self._capture_for_call = False
        """True when capturingSnapshot follows a tool call (else it is the first capture)."""
        self.first_capture: str | None = "session start"
        """The reason of the capture owed before this process's first turn; None once it is taken."""
        self.plan = plan or PlanStore()
        self.phase_steps = 0
        """Model calls in the current visit of the active phase, against its ``max_steps``."""
        self._summary: str | None = None
        self._deferred_notes: list[tuple[str, str]] = []
        """Notes for the model held back until every call of the current reply has its result."""

    # -- what the chart asks -------------------------------------------------------------

    def has_pending_calls(self) -> bool:
        return bool(self.pending)

    def modifies_files(self) -> bool:
        """Guard: a snapshot store is attached and the last tool may have changed files.

        ``bash`` always may (even a failing command can write); a failed write or edit did not.
        """
        call, result = self.last_call, self.last_result
        if self.snapshots is None or call is None or result is None:
            return False
        return self.tools.declaration(call.name).may_change_files(result)

    def needs_first_snapshot(self) -> bool:
        """Guard: capture the workspace as it is before this process's first turn."""
        return self.snapshots is not None and self.first_capture is not None

    @property
    def active_phase(self) -> Phase:
        assert self.chart is not None
        names = {state.id: state.name for state in self.chart.configuration}
        phase_ids = [sid for sid in names if sid.startswith("phase_")]
        for phase in reversed(self.workflow.phases):
            if any(names[sid] == phase.name for sid in phase_ids):
                return phase
        return self.workflow.phase(self.workflow.initial)

    def phase_tools(self, phase: Phase) -> list[str]:
        if ALL_TOOLS in phase.tools:
            return self.tools.names
        chosen = [name for name in phase.tools if name in self.tools]
        return chosen + [name for name in self.tools.names if name in CONTROL_TOOLS and name not in chosen]

    # -- commands from the Session -------------------------------------------------------

    def begin_turn(self, text: str | None) -> None:
        """A user message (or a plain resume) starts a new turn: fresh step count and reminder.

        The caller has emitted the event that carries ``text`` (UserMessage, ClarificationAnswered).
        """
        self.totals.steps = 0
        self.reminded = False
        if text is not None:
            self.watchdog.reset("user message")
            self.messages.append({"role": "user", "content": text})
        elif not len(self.messages) or self.messages[-1]["role"] == "assistant":
            self.add_note("continue", "Continue where you left off.")

    def add_note(self, kind: str, text: str) -> None:
        """Tell the model something as a user message, recorded so a resume sees it too.

        While calls of the last reply still wait for their results, the note waits too: a user
        message between a call and its result would break the pairing providers require.
        """
        if self.pending:
            self._deferred_notes.append((kind, text))
            return
        self.messages.append({"role": "user", "content": text})
        self.emit(ModelNote(kind=kind, text=text))

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait for a cancelled state task to wind down (a killed command to be reaped)."""
        task = self._task
        if task is not None and not task.done() and task is not asyncio.current_task():
            await asyncio.wait([task], timeout=timeout)

    # -- thinking ----------------------------------------------------------------------------

    async def run_thinking(self) -> None:
        """Invoked on entering ``thinking``: one model call, then the event its reply calls for."""
        self._task = asyncio.current_task()
        for kind, text in self._deferred_notes:
            self.add_note(kind, text)
        self._deferred_notes.clear()
        if self.totals.steps >= self.settings.max_steps:
            await self._send("step_limit", reason=f"step limit reached ({self.settings.max_steps} model calls)")
            return
        phase = self.active_phase
        if phase.max_steps is not None and self.phase_steps >= phase.max_steps:
            await self._send("step_limit", reason=f"step limit of the {phase.name} phase reached ({phase.max_steps} model calls)")
            return
        self.totals.steps += 1
        self.phase_steps += 1
        tool_names = self.phase_tools(phase)
        if self._summary is None:
            self._summary = await asyncio.to_thread(workspace_summary, self.workspace)
        prompt = system_prompt(workspace=self.workspace, phase=phase, tool_names=tool_names,
                               plan_text=self.plan.text(), summary=self._summary)
        request = ModelRequest(
            model=self.settings.model_for(phase.model),
            messages=[{"role": "system", "content": prompt}, *self.messages.for_request(CONTEXT_CHARS)],
            tools=self.tools.schemas(tool_names),
            tool_choice=phase.tool_choice_param(),
            api_base=self.settings.api_base,
        )
        self._flight = _InFlight(streaming=True)
        self._coalescer = TextCoalescer(lambda text: self.emit(TextDelta(text=text)))
        response: ModelResponse | None = None
        try:
            async for item in self.model_client.stream(request):
                if isinstance(item, TextChunk):
                    self._flight.text.append(item.text)
                    self._coalescer.add(item.text)
                elif isinstance(item, RetryNotice):
                    self._coalescer.flush()
                    self._flight.text.clear()
                    self.emit(RetryScheduled(attempt=item.attempt, max_attempts=item.max_attempts,
                                             delay_s=item.delay_s, error=item.error))
                else:
                    response = item
        except ModelCallError as error:
            self._end_stream()
            self.emit(ErrorOccurred(kind="model", message=str(error), fatal=not error.retryable))
            if error.retryable:
                await self._send("pause", reason=f"model unavailable, retries exhausted: {error}")
            else:
                await self._send("fail", reason=str(error))
            return
        self._end_stream()
        if response is None:  # a client that broke its contract; never a silent stop
            await self._send("fail", reason="the model client returned no response")
            return
        await self._handle_response(response)

    def _end_stream(self) -> None:
        if self._coalescer is not None:
            self._coalescer.flush()
        self._flight = _InFlight()

    async def _handle_response(self, response: ModelResponse) -> None:
        self._record_usage(response)
        calls = response.tool_calls
        self.messages.append(assistant_message(response.text, calls))
        self.emit(AssistantMessage(text=response.text, tool_calls=calls, finish_reason=response.finish_reason))
        if calls:
            self.reminded = False
            self.pending.extend(calls)
            await self._send("tool_call", name=calls[0].name)
            return
        if not self.reminded:
            self.reminded = True
            reminder = TRUNCATED_REMINDER if response.finish_reason == "length" else REMINDER
            self.add_note("reminder", reminder)
            await self._send("nudge")
            return
        await self._send("pause", reason="stopped without complete/clarify/pause")

    def _record_usage(self, response: ModelResponse) -> None:
        usage = response.usage
        if usage is None:
            return
        totals = self.totals
        totals.input_tokens += usage.input_tokens
        totals.output_tokens += usage.output_tokens
        if response.cost is None or totals.cost is None:
            totals.cost = None
        else:
            totals.cost += response.cost
        self.emit(
            UsageReported(
                model=response.model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cost=response.cost,
                total_input_tokens=totals.input_tokens,
                total_output_tokens=totals.output_tokens,
                total_cost=totals.cost,
            )
        )

    def on_exit_thinking(self) -> None:
        """Leaving ``thinking`` mid-stream (a pause): keep what was said, mark it interrupted."""
        if not self._flight.streaming:
            return
        if self._coalescer is not None:
            self._coalescer.flush()
        text = "".join(self._flight.text)
        self._flight = _InFlight()
        if text:
            self.messages.append(assistant_message(text, []))
        self.emit(AssistantMessage(text=text, interrupted=True))

    # -- executingTool -------------------------------------------------------------------

    async def run_tool(self) -> None:
        """Invoked on entering ``executingTool``: run the next pending call, if it may run."""
        self._task = asyncio.current_task()
        call = self.pending[0]
        phase = self.active_phase
        allowed = self.phase_tools(phase)
        refusal: str | None = None
        if call.name in self.tools and call.name not in allowed:
            refusal = f"'{call.name}' is not available in the {phase.name} phase; its tools are: {', '.join(allowed)}"
        elif call.name in self.tools:
            verdict = self.verdicts.pop(call.id, None)
            decision = self.policy.decide(call.name, parse_arguments(call.arguments))
            if verdict is False:
                refusal = decision.refusal(by_user=True)
            elif verdict is None and decision.denied:
                refusal = decision.refusal()
            elif verdict is None and decision.needs_approval:
                self.emit(PermissionRequested(call_id=call.id, tool=call.name, arguments=call.arguments,
                                              summary=decision.summary, rule=decision.rule, rules=list(decision.rules),
                                              reason=decision.reason))
                await self._send("permission_needed", reason=f"approval needed: {decision.summary}")
                return
        self._flight = _InFlight(call=call, call_started=self.clock())
        self.emit(ToolCallStarted(call_id=call.id, name=call.name, arguments=call.arguments,
                                  preview=self.tools.preview(call.name, call.arguments)))
        self.watchdog.before(call, self.tools.declaration(call.name).changes_files != "never")
        if refusal is not None:
            result = ToolResult.failure(refusal)
        else:
            context = replace(self.tool_context, call_id=call.id)
            result = self.redact.result(await self.tools.call(call.name, call.arguments, context))
        duration = self.clock() - self._flight.call_started
        self._flight = _InFlight()
        self.pending.popleft()
        self.last_call, self.last_result = call, result
        self._finish_call(call, result, duration)
        if result.control is not None and result.ok:
            self._drop_pending(NOT_RUN)
            await self._send_control(call, result)
            return
        self._report_workflow_data(call, result)
        if self.modifies_files():
            # Progress and phase moves wait for the snapshot, which says what really changed.
            self._capture_for_call = True
            await self._send("tool_done", name=call.name)
            return
        await self._after_call(call, result, ())

    async def _after_call(self, call: ToolCallRequest, result: ToolResult, changed: tuple[str, ...]) -> None:
        """Progress tracking, then the phase moves the call triggers, then on to the next state."""
        if await self._watch(call, result, changed):
            return
        for event in self._phase_events_for(call, result):
            await self._send(event)
        await self._send("snapshot_done" if self._in("capturingSnapshot") else "tool_done", name=call.name)

    def _in(self, state_id: str) -> bool:
        return self.chart is not None and any(state.id == state_id for state in self.chart.configuration)

    def _report_workflow_data(self, call: ToolCallRequest, result: ToolResult) -> None:
        for event in result.events:
            self.emit(event)

    def _phase_events_for(self, call: ToolCallRequest, result: ToolResult) -> list[str]:
        """The phase region's events this call fires: a tool-triggered or a check-result transition."""
        events = []
        if result.ok:
            events.append(f"called_{call.name}")
        if isinstance(result.data.get("passed"), bool):  # run_checks: failing checks are still a result
            events.append("checks_passed" if result.data["passed"] else "checks_failed")
        return [event for event in events if event in self.phase_events]

    async def _watch(self, call: ToolCallRequest, result: ToolResult, changed: tuple[str, ...]) -> bool:
        """Feed the progress tracker; True when it halted the run."""
        verdict = self.watchdog.after(call, result, changed)
        if self.watchdog.summary_due():
            summary = self.watchdog.summary()
            self.emit(ProgressReported(actions=summary.actions, files_modified=list(summary.files_modified),
                                       successes=summary.successes, failures=summary.failures,
                                       checks_passing=len(summary.checks_passing)))
        if verdict is None:
            return False
        self.emit(StuckDetected(rule=verdict.rule, evidence=verdict.evidence, severity=verdict.severity))
        if verdict.severity == "recover":
            self._deferred_notes.append(("recovery", verdict.recovery_message))
            return False
        self._drop_pending(NOT_RUN)
        await self._send("stuck", reason=verdict.reason)
        return True

    def _finish_call(self, call: ToolCallRequest, result: ToolResult, duration: float, *, interrupted: bool = False) -> None:
        self.messages.append(tool_message(call.id, result.output))
        self.emit(
            ToolCallFinished(
                call_id=call.id,
                name=call.name,
                ok=result.ok,
                output=result.output,
                error=result.error,
                duration_s=round(duration, 6),
                files_changed=list(result.files_changed),
                interrupted=interrupted,
            )
        )

    def _drop_pending(self, why: str) -> None:
        """Every call gets a result, even those a turn's end left unrun (no orphan calls)."""
        while self.pending:
            call = self.pending.popleft()
            self._finish_call(call, ToolResult.failure(why), 0.0)

    async def _send_control(self, call: ToolCallRequest, result: ToolResult) -> None:
        if result.control == "complete":
            await self._send("completed", reason=str(result.data.get("summary", "")))
        elif result.control == "clarify":
            question = str(result.data.get("question", ""))
            options = [str(option) for option in result.data.get("options", [])]
            self.emit(ClarificationRequested(call_id=call.id, question=question, options=options))
            await self._send("clarify", reason=question)
        else:
            await self._send("pause", reason=str(result.data.get("reason", "")))

    def on_exit_awaitingPermission(self) -> None:  # noqa: N802 - named after the chart state
        """Leaving without an answer (a pause): the waiting call and the rest get results."""
        if self.pending and self.pending[0].id not in self.verdicts:
            self._drop_pending("Not run: the run was paused while this call waited for approval.")

    def on_exit_executingTool(self) -> None:  # noqa: N802 - named after the chart state
        """Leaving ``executingTool`` mid-call (a pause): the call and the rest get results."""
        call = self._flight.call
        if call is None:
            return
        duration = self.clock() - self._flight.call_started
        self._flight = _InFlight()
        if self.pending and self.pending[0] is call:
            self.pending.popleft()
        self._finish_call(call, ToolResult.failure(INTERRUPTED), duration, interrupted=True)
        self._drop_pending(NOT_RUN)

    # -- capturingSnapshot ---------------------------------------------------------------

    async def run_capture(self) -> None:
        """Invoked on entering ``capturingSnapshot``: write the workspace's tree, off the event loop."""
        self._task = asyncio.current_task()
        if not self._capture_for_call:
            reason, self.first_capture = self.first_capture or "session start", None
            await self.capture(reason)
            await self._send("snapshot_done")
            return
        self._capture_for_call = False
        self.first_capture = None  # this capture records whatever changed before, too
        call, result = self.last_call, self.last_result
        assert call is not None and result is not None
        # write_file and edit_file say what they changed; after bash anything may have.
        hint = (list(result.files_changed)
                if self.tools.declaration(call.name).changes_files == "when_ok" and result.files_changed else None)
        snapshot = await self.capture(f"after {call.name}", call=call, paths_hint=hint)
        changed = tuple(change.path for change in snapshot.files) if snapshot is not None else ()
        await self._after_call(call, result, changed)

    async def capture(
        self, reason: str, *, call: ToolCallRequest | None = None, paths_hint: list[str] | None = None
    ) -> SnapshotCaptured | None:
        """Capture a snapshot; a failure is reported and never stops the run."""
        store = self.snapshots
        if store is None:
            return None
        try:
            captured = await asyncio.to_thread(
                store.capture,
                session_id=self.session_id,
                reason=reason,
                tool_call_id=call.id if call else None,
                tool_name=call.name if call else None,
                paths_hint=paths_hint,
            )
        except Exception as error:  # noqa: BLE001 - any store failure: report it, keep the run going
            self.emit(ErrorOccurred(kind="snapshot", message=f"snapshot failed: {error}"))
            return None
        skipped = [f"{item.path} ({item.reason})" for item in captured.skipped]
        snap = captured.snapshot
        if snap is None:
            if skipped:
                self.emit(Notice(kind="snapshot_skipped", text="not snapshotted: " + ", ".join(skipped[:10])))
            return None
        event = snapshot_event(snap, skipped, captured.duration_s)
        self.emit(event)
        return event

    # -- helpers -------------------------------------------------------------------------

    async def _send(self, event: str, **kwargs: Any) -> None:
        assert self.chart is not None
        await self.chart.send(event, **kwargs)
