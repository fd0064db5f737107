"""The Session: what front ends drive with commands and observe through events.

Front ends never reach into the chart, the model client or the tools; they call the commands
here (``send_user_message``, ``answer``, ``pause``, ``resume``) and subscribe to events.

Over 400 lines because it is the front ends' whole surface: each command sits beside the check of
the state it may run in and the event it sends, so a front end's author reads one file.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.config import Settings
from agentcli.events import (
    ClarificationAnswered,
    ClarificationRequested,
    ConversationRewound,
    ErrorOccurred,
    Event,
    PermissionDecided,
    PermissionRequested,
    SessionStarted,
    StateChanged,
    TurnEnded,
    UserMessage,
    with_attached,
)
from agentcli.llm.types import Message, ModelClient
from agentcli.permissions import ConfigWriteError, Mode, PermissionState, Policy, Scope

if TYPE_CHECKING:
    from statemachine import State, StateChart
    from statemachine.model import Model
    from statemachine.transition import Transition

    from agentcli.session.resume import Rebuilt
    from agentcli.snapshots import SnapshotStore
from agentcli.session.chart import (
    DONE,
    WAITING_STATES,
    ChartGraph,
    chart_class,
    chart_graph,
    initial_configuration,
)
from agentcli.session.errors import SessionStateError
from agentcli.session.explore import EXPLORE_MAX_STEPS, EXPLORE_WORKFLOW, Explore
from agentcli.session.input_commands import InputCommands
from agentcli.session.log import SessionLog
from agentcli.session.mcp_commands import McpCommands
from agentcli.session.prompt import answer_message, resumed_note
from agentcli.session.rewind import RewindTracker
from agentcli.session.runtime import listeners
from agentcli.session.timeline import TimelineCommands
from agentcli.session.toolset import build_registry
from agentcli.session.turn import Totals, Turn
from agentcli.session.view import SessionView, view_of
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.text import valid_text
from agentcli.tools.workflow_tools import PlanStore
from agentcli.workflow.model import Workflow

Subscriber = Callable[[Event], None]



def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


class Session(InputCommands, TimelineCommands, McpCommands):
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
        self.turn = Turn(
            workspace=self.workspace,
            settings=settings,
            workflow=workflow,
            model_client=model_client,
            tools=tools,
            emit=self._emit,
            plan=self.plan,
            policy=Policy(settings.permissions, self.workspace, state=self.permissions,
                          default_mode=default_permission_mode, tools=tools.declarations),
            snapshots=snapshots,
            session_id=self.id,
        )
        """The state the work of every chart state shares: conversation, pending calls, totals."""
        self._chart_class = chart_class(workflow)
        # Definition order (regions grouped, parents before children) for stable configurations.
        self._order = {state.id: i for i, state in enumerate(self._chart_class.states_map.values())}
        self.chart: StateChart[Model] | None = None
        self._started = False
        self._start_states: list[str] = []
        self._start_configuration = initial_configuration(self._chart_class)
        self._resumed_from: Rebuilt | None = None
        self.log: SessionLog | None = None
        """The session's event log, when it is recorded."""
        self.rewind_points = RewindTracker()
        """The user's messages this session can go back to before (``/rewind``)."""
        self._rewind_undo: tuple[ConversationRewound, list[Message], str | None] | None = None
        """The last rewind, the messages it dropped and the snapshot its code restore replaced,
        while nothing has been said since (``/undo`` takes it back)."""

    # -- observation ---------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber`` with every event from now on; returns an unsubscribe function."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def _emit(self, event: Event) -> None:
        self.rewind_points.see(event, len(self.turn.messages))
        if isinstance(event, UserMessage):
            self._rewind_undo = None
        if isinstance(event, ClarificationRequested):
            self.pending_question = event
        elif isinstance(event, PermissionRequested):
            self.pending_permission = event
        elif isinstance(event, TurnEnded):
            self.last_turn = event
            if self._turn_end is not None and not self._turn_end.done():
                self._turn_end.set_result(event)
        failed: list[tuple[Subscriber, Exception]] = []
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception as failure:  # noqa: BLE001 - one broken front end must not stop the run
                failed.append((subscriber, failure))
        for subscriber, error in failed:
            # The others hear of it (the log, the screen); the failing one is not called again.
            self._subscribers.remove(subscriber)
            self._emit(ErrorOccurred(kind="subscriber", message=f"{subscriber!r} failed on {event.type}: {error}",
                                     exception=type(error).__name__))

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
        return view_of(self._chart_class, self.configuration or self._start_configuration,
                       question=self.pending_question, permission=self.pending_permission)

    @property
    def control_state(self) -> str:
        return self.view.control

    @property
    def totals(self) -> Totals:
        return self.turn.totals

    # -- chart listener callbacks ----------------------------------------------------------

    def after_transition(
        self, event: str | None, source: State | None, target: State | None, transition: Transition | None = None
    ) -> None:
        """Every transition becomes a ``StateChanged``; one into a waiting state then ends the turn."""
        if source is None or target is None:
            return
        name = str(event or "")
        if name.startswith(f"{DONE}."):
            name = ".".join(name.split(".")[:3])  # drop the invocation's id: done.invoke.thinking
        conds = [str(spec.func) for spec in transition.cond] if transition is not None and transition.cond else []
        self._emit(StateChanged(event=name, source=source.id, target=target.id, configuration=self.configuration,
                                cond=" and ".join(conds) or None))
        if target.id in WAITING_STATES:
            ending = self.turn.take_ending()
            if ending is not None:
                self._emit(ending)

    def set_aside_question(self) -> None:
        """Leaving ``awaitingClarification``: an answer took the question, or a pause set it aside."""
        self.pending_question = None

    def set_aside_approval(self) -> None:
        """Leaving ``awaitingPermission`` without a verdict (a pause): the waiting calls get results."""
        turn = self.turn
        self.pending_permission = None
        if turn.pending and turn.pending[0].id not in turn.verdicts:
            turn.drop_pending("Not run: the run was paused while this call waited for approval.")

    # -- lifecycle and commands ----------------------------------------------------------

    def _explore_child(self) -> Session:
        """A read-only child session for the explore tool, on the ``explore`` model role."""
        return Session(
            workspace=self.workspace,
            settings=self.settings.model_copy(update={"max_steps": EXPLORE_MAX_STEPS}),
            workflow=EXPLORE_WORKFLOW,
            model_client=self.turn.model_client,
            session_id=f"{self.id}-explore",
        )

    def load(self, rebuilt: Rebuilt) -> None:
        """Take over the state of a session rebuilt from its log (before :meth:`start`)."""
        totals = Totals(input_tokens=rebuilt.input_tokens, output_tokens=rebuilt.output_tokens, cost=rebuilt.cost,
                        cache_read_tokens=rebuilt.cache_read_tokens)
        self.turn.load(rebuilt.messages, rebuilt.pending_calls, totals)
        self.pending_question = rebuilt.pending_question
        self.pending_permission = rebuilt.pending_permission
        self.last_turn = rebuilt.last_turn
        for rule in rebuilt.session_allow:
            self.permissions.remember(rule, "session")
        for rule in rebuilt.session_deny:
            self.permissions.remember(rule, "session", allowed=False)
        self.plan.replace(rebuilt.plan)
        self.rewind_points = rebuilt.rewind
        self._rewind_undo = rebuilt.rewind_undo
        self.restore_queue(rebuilt.queued)
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
        self.chart = self._chart_class(listeners=[*listeners(self.turn), self])
        if self._start_states:
            self.chart.start_configuration_values = self._start_states
        self.turn.attach(self.chart)
        self.start_tools()
        await self.chart.activate_initial_state()
        self._emit(
            SessionStarted(
                session_id=self.id,
                workspace=str(self.workspace),
                model=self.settings.model,
                api_base=self.settings.api_base,
                workflow=self.workflow.name,
                resumed=self._resumed_from is not None,
                sandbox=self.settings.sandbox,
                permission_mode=self.turn.policy.mode,
            )
        )

    def _note_resume(self) -> None:
        """Once, before a resumed session's first turn: the world may have moved on."""
        rebuilt, self._resumed_from = self._resumed_from, None
        if rebuilt is not None:
            self.turn.add_note("resumed", resumed_note(rebuilt.last_event_at, rebuilt.interrupted))

    async def _send(self, event: str, **data: str | None) -> None:
        """Start a turn with a user event; its end resolves :meth:`wait_turn`."""
        self._turn_end = asyncio.get_running_loop().create_future()
        assert self.chart is not None  # every command calls start() before it sends
        payload: dict[str, Any] = dict(data)  # the chart's event data: open by nature
        await self.chart.send(event, **payload)

    async def send_user_message(self, text: str, *, attached: str = "", files: list[str] | None = None) -> None:
        """Give the agent a task, a follow-up, or guidance after a halt or pause.

        Args:
            text: What the user typed.
            attached: What the message's @-mentions attach (the model reads it after ``text``).
            files: The attached paths, for the transcript.
        """
        await self.start()
        view = self.view
        if not view.allows("message"):
            raise SessionStateError(
                f"cannot take a new message while {view.control}; pause first or answer the question")
        self._note_resume()
        message = self.turn.user_message(text, attached, files)
        self._emit(message)
        self.turn.begin_turn(message.model_text)
        await self._send("user_message")

    async def answer(self, text: str) -> None:
        """Answer the question the agent asked with ``clarify``."""
        await self.start()
        question = self.pending_question
        if not self.view.allows("answer") or question is None:
            raise SessionStateError("there is no question waiting for an answer")
        self.pending_question = None
        self._note_resume()
        text = valid_text(self.turn.redact(text))
        self._emit(ClarificationAnswered(call_id=question.call_id, question=question.question, answer=text))
        self.turn.begin_turn(answer_message(question.question, text))
        await self._send("answer")

    @property
    def permission_mode(self) -> Mode:
        return self.turn.policy.mode

    def set_permission_mode(self, mode: Mode) -> None:
        """Switch between ask, edits and all for the rest of the session."""
        self.turn.policy.mode = mode

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
        if not self.view.allows("approve") or request is None:
            raise SessionStateError(f"no tool call is waiting for approval (the session is {self.view.control})")
        self.pending_permission = None
        self.turn.decide(request.call_id, allowed)
        self._note_resume()
        self._emit(PermissionDecided(call_id=request.call_id, allowed=allowed, scope=scope,
                                     rules=list(request.rules) if scope != "once" else []))
        try:
            self.permissions.remember(request.rules, scope, allowed=allowed)
        except ConfigWriteError as error:
            # The answer still holds, for this call and (as a session rule) for the session.
            self._emit(ErrorOccurred(kind="config", message=str(error)))
        await self._send("approve" if allowed else "deny")

    async def pause(self, reason: str = "paused by the user") -> None:
        """Stop at once: a stream in progress is cancelled, a running command is killed.

        A question or an approval request that waits is set aside too (its call gets a result);
        a session that is not running or waiting on the user has nothing to stop.
        """
        if self.chart is None or not self.view.allows("pause"):
            return
        await self.chart.send("pause", reason=reason)
        await self.turn.settle()

    async def resume(self, guidance: str | None = None, *, attached: str = "",
                     files: list[str] | None = None) -> None:
        """Continue a paused or halted session, optionally with guidance."""
        await self.start()
        if not self.view.allows("resume"):
            raise SessionStateError(f"nothing to resume: the session is {self.view.control}")
        self._note_resume()
        if guidance:
            message = self.turn.user_message(guidance, attached, files)
            self._emit(message)
            guidance = message.model_text
        self.turn.begin_turn(guidance)
        await self._send("resume")

    async def compact(self, focus: str | None = None) -> None:
        """Summarize the older part of the model's view now (what ``/compact`` asks for); the
        turn ends where it was asked. ``focus`` says what the summary should keep in detail."""
        await self.start()
        view = self.view
        if not view.allows("compact"):
            raise SessionStateError(f"cannot compact while the agent is {view.control}; pause it first")
        self.turn.new_turn()
        await self._send("compact", focus=focus, origin=view.control)

    async def respond(self, text: str | None, *, attached: str = "", files: list[str] | None = None) -> None:
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
            await self.answer(with_attached(text, attached))
        elif waiting == "guidance":
            await self.resume(text or None, attached=attached, files=files)
        elif waiting == "task":
            if not text:
                raise SessionStateError("give a task: the agent has nothing to do")
            await self.send_user_message(text, attached=attached, files=files)
        elif waiting == "approval":
            raise SessionStateError("a tool call waits for approval: approve or deny it")
        else:
            raise SessionStateError(f"the agent is {self.view.control}: pause it first, then send guidance")

    async def wait_turn(self) -> TurnEnded:
        """Wait until the current turn ends (completed, clarify, paused, halted or error)."""
        if self._turn_end is None:
            raise SessionStateError("no turn is running")
        return await asyncio.shield(self._turn_end)

    def record_failure(self, error: BaseException) -> bool:
        """A front end's own failure (a bug, not the user's doing), with its traceback, in the log
        only: the front end says it in one line. False when there is no log to write it to."""
        import traceback

        from agentcli.events import ErrorOccurred

        # The log is the subscriber that records every event; the event goes to it alone, as
        # the printers and the TUI would show the traceback.
        if self.log is None:
            return False
        try:
            self.log(ErrorOccurred(kind="internal", message=str(error), fatal=True, exception=type(error).__name__,
                                   traceback="".join(traceback.format_exception(error))))
        except (OSError, ValueError):  # a full disk, or the log already closed
            return False
        return True

    def close(self) -> None:
        """Flush and close the log, pack the snapshot store's index; the session can be resumed later."""
        if self.mcp is not None:
            self.mcp.close_soon()
        if self.log is not None:
            self.log.close()
        store = self.turn.snapshots
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

