"""The Session: what front ends drive with commands and observe through events.

Front ends never reach into the chart, the model client or the tools; they call the commands
here (``send_user_message``, ``answer``, ``pause``, ``resume``) and subscribe to events.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.config import Settings
from agentcli.events import (
    ClarificationAnswered,
    ClarificationRequested,
    ErrorOccurred,
    Event,
    Outcome,
    PermissionDecided,
    PermissionRequested,
    SessionStarted,
    SnapshotRestored,
    StateChanged,
    TurnEnded,
    UserMessage,
)
from agentcli.llm.types import ModelClient
from agentcli.permissions import ConfigWriteError, Mode, PermissionState, Policy, Scope

if TYPE_CHECKING:
    from agentcli.session.resume import Rebuilt
    from agentcli.snapshots import DiffResult, RestorePlan, RestoreResult, Snapshot, SnapshotStore
from agentcli.session.chart import (
    CONTROL_STATES,
    WAITING_STATES,
    ChartGraph,
    chart_class,
    chart_graph,
    control_events,
    initial_configuration,
    phase_events,
)
from agentcli.session.explore import EXPLORE_MAX_STEPS, EXPLORE_WORKFLOW, Explore
from agentcli.session.log import SessionLog
from agentcli.session.runtime import Runtime, snapshot_event
from agentcli.session.toolset import build_registry
from agentcli.session.view import COMMAND_EVENTS, Command, SessionView
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.workflow_tools import PlanStore
from agentcli.workflow.model import Workflow

Subscriber = Callable[[Event], None]

_CONTROL_IDS = frozenset(CONTROL_STATES)

_OUTCOMES: dict[str, Outcome] = {
    "completed": "completed",
    "clarify": "clarify",
    "pause": "paused",
    "permission_needed": "approval",
    "step_limit": "halted",
    "stuck": "halted",
    "fail": "error",
}


class SessionStateError(Exception):
    """A command does not fit the state the session is in (e.g. an answer with no question)."""


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} seconds"
    if seconds < 5400:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 129600:
        return f"{seconds / 3600:.0f} hours"
    return f"{seconds / 86400:.0f} days"


def answer_message(question: str, answer: str) -> str:
    """How an answer to a clarify question reads to the model."""
    return f"Answer to your question ({question}): {answer}"


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


class Session:
    """One agent run in one workspace."""

    def __init__(
        self,
        *,
        workspace: Path,
        settings: Settings,
        workflow: Workflow,
        model_client: ModelClient,
        tools: ToolRegistry | None = None,
        session_id: str | None = None,
        snapshots: SnapshotStore | None = None,
        default_permission_mode: Mode = "all",
    ) -> None:
        self.id = session_id or new_session_id()
        self.workspace = workspace.resolve()
        self.settings = settings
        self.workflow = workflow
        self._subscribers: list[Subscriber] = []
        self._turn_end: asyncio.Future[TurnEnded] | None = None
        self.last_turn: TurnEnded | None = None
        self.pending_question: ClarificationRequested | None = None
        self.plan = PlanStore()
        """The plan create_plan writes and the build phases read."""
        if tools is None:
            tools = build_registry(workflow, settings, self.plan, Explore(self._explore_child, self._emit))
        self.permissions = PermissionState(self.workspace)
        """Approvals given "for this session" (and "always", which also go to .agentcli.toml)."""
        self.pending_permission: PermissionRequested | None = None
        self.runtime = Runtime(
            workspace=self.workspace,
            settings=settings,
            workflow=workflow,
            model_client=model_client,
            tools=tools,
            emit=self._emit,
            plan=self.plan,
            policy=Policy(settings.permissions, self.workspace, state=self.permissions,
                          default_mode=default_permission_mode),
        )
        self.runtime.phase_events = phase_events(workflow)
        self.runtime.snapshots = snapshots
        self.runtime.session_id = self.id
        self._chart_class = chart_class(workflow)
        # Definition order (regions grouped, parents before children) for stable configurations.
        self._order = {state.id: i for i, state in enumerate(self._chart_class.states_map.values())}
        self.chart: Any = None
        self._started = False
        self._start_states: list[str] = []
        self._start_configuration = initial_configuration(self._chart_class)
        self._resumed_from: Rebuilt | None = None
        self.log: SessionLog | None = None
        """The session's event log, when it is recorded."""

    # -- observation ---------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber`` with every event from now on; returns an unsubscribe function."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def _emit(self, event: Event) -> None:
        if isinstance(event, ClarificationRequested):
            self.pending_question = event
        elif isinstance(event, PermissionRequested):
            self.pending_permission = event
        for subscriber in list(self._subscribers):
            subscriber(event)

    @property
    def graph(self) -> ChartGraph:
        """The chart's states and transitions, read from its definition."""
        return chart_graph(self._chart_class)

    @property
    def configuration(self) -> list[str]:
        """Ids of every active state, outermost first."""
        if self.chart is None:
            return []
        return sorted((state.id for state in self.chart.configuration), key=self._order.__getitem__)

    @property
    def view(self) -> SessionView:
        """Where the session is and what the user may do now; before the chart starts, where it
        will start (a resumed session waiting for an answer is already waiting for it)."""
        configuration = self.configuration or self._start_configuration
        states = self._chart_class.states_map
        control = next((sid for sid in configuration if sid in _CONTROL_IDS), "idle")
        phases = [sid for sid in configuration if sid.startswith("phase_") and sid in states]
        commands: set[Command] = {COMMAND_EVENTS[event] for event in control_events(self._chart_class, control)
                                  if event in COMMAND_EVENTS}
        if control in WAITING_STATES:
            commands.add("restore")
        return SessionView(
            control=control,
            phase=states[phases[-1]].name if phases else None,
            configuration=tuple(configuration),
            commands=frozenset(commands),
            question=self.pending_question if "answer" in commands else None,
            permission=self.pending_permission if "approve" in commands else None,
        )

    @property
    def control_state(self) -> str:
        return self.view.control

    @property
    def totals(self) -> Any:
        return self.runtime.totals

    # -- chart listener callbacks ----------------------------------------------------------

    def after_transition(self, event: str, source: Any, target: Any, **kwargs: Any) -> None:
        if source is None or target is None or not event:
            return
        self._emit(
            StateChanged(event=str(event), source=source.id, target=target.id, configuration=self.configuration)
        )
        if target.id.startswith("phase_") and source.id != target.id:
            self.runtime.watchdog.reset(f"entered phase {target.name}")
            self.runtime.phase_steps = 0
        if target.id in WAITING_STATES and target.id in _CONTROL_IDS:
            outcome = _OUTCOMES.get(str(event))
            if outcome is None:
                return
            ended = TurnEnded(outcome=outcome, reason=str(kwargs.get("reason", "")), steps=self.runtime.totals.steps)
            self.last_turn = ended
            self._emit(ended)
            if self._turn_end is not None and not self._turn_end.done():
                self._turn_end.set_result(ended)

    # -- lifecycle and commands ----------------------------------------------------------

    def _explore_child(self) -> Session:
        """A read-only child session for the explore tool, on the ``explore`` model role."""
        return Session(
            workspace=self.workspace,
            settings=self.settings.model_copy(update={"max_steps": EXPLORE_MAX_STEPS}),
            workflow=EXPLORE_WORKFLOW,
            model_client=self.runtime.model_client,
            session_id=f"{self.id}-explore",
        )

    def load(self, rebuilt: Rebuilt) -> None:
        """Take over the state of a session rebuilt from its log (before :meth:`start`)."""
        runtime = self.runtime
        for message in rebuilt.messages:
            runtime.messages.append(message)
        runtime.totals.input_tokens = rebuilt.input_tokens
        runtime.totals.output_tokens = rebuilt.output_tokens
        runtime.totals.cost = rebuilt.cost
        self.pending_question = rebuilt.pending_question
        self.pending_permission = rebuilt.pending_permission
        runtime.pending.extend(rebuilt.pending_calls)
        for rule in rebuilt.session_allow:
            self.permissions.remember(rule, "session")
        for rule in rebuilt.session_deny:
            self.permissions.remember(rule, "session", allowed=False)
        self.plan.replace(rebuilt.plan)
        self.runtime.first_capture = "session resumed"  # what changed while it was away
        states = self._chart_class.states_map
        known = [sid for sid in rebuilt.configuration if sid in states]
        if known:
            self._start_configuration = sorted(known, key=self._order.__getitem__)
        self._start_states = [sid for sid in known if not states[sid].states]
        self._resumed_from = rebuilt

    async def start(self) -> None:
        """Activate the chart and announce the session. Commands call it when needed."""
        if self._started:
            return
        self._started = True
        self.chart = self._chart_class(listeners=[self.runtime, self])
        if self._start_states:
            self.chart.start_configuration_values = self._start_states
        self.runtime.chart = self.chart
        await self.chart.activate_initial_state()
        self._emit(
            SessionStarted(
                session_id=self.id,
                workspace=str(self.workspace),
                model=self.settings.model,
                api_base=self.settings.api_base,
                workflow=self.workflow.name,
                resumed=self._resumed_from is not None,
            )
        )

    def _note_resume(self) -> None:
        """Once, before a resumed session's first turn: the world may have moved on."""
        rebuilt, self._resumed_from = self._resumed_from, None
        if rebuilt is None:
            return
        ago = ""
        if rebuilt.last_event_at is not None:
            seconds = (datetime.now(timezone.utc) - rebuilt.last_event_at).total_seconds()
            ago = f" {_duration(seconds)} after its last event"
        cut = f" It had been interrupted during {rebuilt.interrupted}." if rebuilt.interrupted else ""
        self.runtime.add_note(
            "resumed",
            f"This session was resumed{ago}.{cut} Time has passed and files in the workspace may "
            "have changed since; re-read files before you edit them.",
        )

    def _expect_turn(self) -> None:
        loop = asyncio.get_running_loop()
        self._turn_end = loop.create_future()

    async def send_user_message(self, text: str) -> None:
        """Give the agent a task, a follow-up, or guidance after a halt or pause."""
        await self.start()
        state = self.control_state
        if state not in ("idle", "paused", "halted"):
            raise SessionStateError(f"cannot take a new message while {state}; pause first or answer the question")
        self._note_resume()
        self._emit(UserMessage(text=text))
        self.runtime.begin_turn(text)
        self._expect_turn()
        await self.chart.send("user_message")

    async def answer(self, text: str) -> None:
        """Answer the question the agent asked with ``clarify``."""
        await self.start()
        question = self.pending_question
        if self.control_state != "awaitingClarification" or question is None:
            raise SessionStateError("there is no question waiting for an answer")
        self.pending_question = None
        self._note_resume()
        self._emit(ClarificationAnswered(call_id=question.call_id, question=question.question, answer=text))
        self.runtime.begin_turn(answer_message(question.question, text))
        self._expect_turn()
        await self.chart.send("answer")

    @property
    def permission_mode(self) -> Mode:
        return self.runtime.policy.mode

    def set_permission_mode(self, mode: Mode) -> None:
        """Switch between ask, edits and all for the rest of the session."""
        self.runtime.policy.mode = mode

    async def approve(self, scope: Scope = "once") -> None:
        """Let the call waiting for approval run; ``session`` and ``always`` also remember its rules.

        When ``always`` cannot update .agentcli.toml, an error event says which rule to add by
        hand; the call still runs and the rules hold for this session.

        Raises:
            SessionStateError: no call is waiting.
        """
        await self._answer_permission(True, scope)

    async def deny(self, scope: Scope = "once") -> None:
        """Refuse the waiting call: the model gets an error result it can act on."""
        await self._answer_permission(False, scope)

    async def _answer_permission(self, allowed: bool, scope: Scope) -> None:
        await self.start()
        request = self.pending_permission
        if self.control_state != "awaitingPermission" or request is None:
            raise SessionStateError("no tool call is waiting for approval")
        self.pending_permission = None
        self.runtime.verdicts[request.call_id] = allowed
        self._note_resume()
        self._emit(PermissionDecided(call_id=request.call_id, allowed=allowed, scope=scope,
                                     rules=list(request.rules) if scope != "once" else []))
        self.runtime.totals.steps = 0
        self._expect_turn()
        try:
            self.permissions.remember(request.rules, scope, allowed=allowed)
        except ConfigWriteError as error:
            # The answer still holds, for this call and (as a session rule) for the session.
            self._emit(ErrorOccurred(kind="config", message=str(error)))
        await self.chart.send("approve" if allowed else "deny")

    async def pause(self, reason: str = "paused by the user") -> None:
        """Stop at once: a stream in progress is cancelled, a running command is killed.

        A question or an approval request that waits is set aside too (its call gets a result);
        an idle, paused or halted session has nothing to stop.
        """
        if self.chart is None or self.control_state in ("idle", "paused", "halted"):
            return
        if self.control_state == "awaitingClarification":
            self.pending_question = None
        elif self.control_state == "awaitingPermission":
            self.pending_permission = None
        await self.chart.send("pause", reason=reason)
        await self.runtime.settle()

    async def resume(self, guidance: str | None = None) -> None:
        """Continue a paused or halted session, optionally with guidance."""
        await self.start()
        state = self.control_state
        if state not in ("paused", "halted"):
            raise SessionStateError(f"nothing to resume: the session is {state}")
        self._note_resume()
        if guidance:
            self._emit(UserMessage(text=guidance))
        self.runtime.begin_turn(guidance)
        self._expect_turn()
        await self.chart.send("resume")

    async def respond(self, text: str | None) -> None:
        """The user's next words, for whatever the session waits for: the answer to its question,
        guidance to go on after a pause or halt (``None`` goes on without), or the next task.

        Front ends call this instead of choosing among :meth:`answer`, :meth:`resume` and
        :meth:`send_user_message` themselves.

        Raises:
            SessionStateError: the agent is working, or waits for an approval (which takes a
                verdict: :meth:`approve` or :meth:`deny`), or there is no text for a new task.
        """
        waiting = self.view.waiting_for
        if waiting == "answer":
            if text is None:
                raise SessionStateError("the agent asked a question: give an answer")
            await self.answer(text)
        elif waiting == "guidance":
            await self.resume(text or None)
        elif waiting == "task":
            if not text:
                raise SessionStateError("give a task: the last turn completed")
            await self.send_user_message(text)
        elif waiting == "approval":
            raise SessionStateError("a tool call waits for approval: approve or deny it")
        else:
            raise SessionStateError(f"the agent is {self.view.control}: pause it first, then send guidance")

    async def wait_turn(self) -> TurnEnded:
        """Wait until the current turn ends (completed, clarify, paused, halted or error)."""
        if self._turn_end is None:
            raise SessionStateError("no turn is running")
        return await asyncio.shield(self._turn_end)

    # -- the snapshot timeline -----------------------------------------------------------------

    @property
    def snapshots_enabled(self) -> bool:
        return self.runtime.snapshots is not None

    def _store(self) -> SnapshotStore:
        store = self.runtime.snapshots
        if store is None:
            raise SessionStateError("snapshots are off for this session ([snapshots] enabled = false)")
        return store

    async def timeline(self) -> list[Snapshot]:
        """This session's snapshots, oldest first."""
        return await asyncio.to_thread(self._store().timeline, self.id)

    async def diff(self, a: str, b: str | None = None) -> DiffResult:
        """Per-file diffs from snapshot ``a`` to snapshot ``b`` (or to the working tree)."""
        store = self._store()
        return await asyncio.to_thread(lambda: store.diff(store.resolve(a, self.id), store.resolve(b, self.id) if b else None))

    async def plan_restore(self, ref: str) -> RestorePlan:
        """Exactly which paths restoring snapshot ``ref`` would write, delete or re-mode."""
        store = self._store()
        return await asyncio.to_thread(lambda: store.plan_restore(store.resolve(ref, self.id)))

    async def restore(self, ref: str) -> RestoreResult:
        """Make the workspace match snapshot ``ref``; the state it replaces becomes a snapshot too.

        Only while the agent waits (idle, asking, paused, halted): never under a running tool.
        """
        view = self.view
        if not view.allows("restore"):
            raise SessionStateError(f"cannot restore while the agent is {view.control}; pause it first")
        store = self._store()
        target = await asyncio.to_thread(store.resolve, ref, self.id)
        result = await asyncio.to_thread(store.restore, target, session_id=self.id)
        for snap in (result.undo, result.after):
            if snap is not None and snap.session_id == self.id:
                self._emit(snapshot_event(snap, [], 0.0))
        plan = result.plan
        self._emit(SnapshotRestored(target_id=target.id, target_seq=target.seq, undo_snapshot_id=result.undo.id,
                                    written=plan.writes + plan.chmods, deleted=plan.deletes))
        note = (f"The user restored the workspace to snapshot {target.seq} ({target.reason}); "
                f"{len(plan.writes)} files were written and {len(plan.deletes)} deleted. Re-read files before editing.")
        self.runtime.add_note("restored", note)
        return result

    def close(self) -> None:
        """Flush and close the log, pack the snapshot store's index; the session can be resumed later."""
        if self.log is not None:
            self.log.close()
        store = self.runtime.snapshots
        if store is not None:
            from agentcli.snapshots import SnapshotError

            try:
                store.close()
            except (SnapshotError, OSError):
                pass  # the index stays unpacked: it only takes more room until the next close

    async def run_turn(self, text: str) -> TurnEnded:
        """Send a message and wait for the turn it starts to end."""
        await self.send_user_message(text)
        return await self.wait_turn()

