"""The session bridge: one Session at a time, shown in the app's widgets.

Attaching draws the session's chart, loads its past (the log's events) and follows its events:
the bridge is the session's subscriber, and wraps each event in a message posted to the widgets
that show it, so rendering never runs inside the session's call. Where the session is and what
the user may do come from ``session.view`` only, read when a ``StateChanged`` arrives and when a
session is attached; the TUI keeps no state names of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcli.events import (
    ClarificationRequested,
    ContextCompacted,
    Event,
    Notice,
    PermissionRequested,
    PlanStep,
    PlanUpdated,
    SessionStarted,
    SnapshotCaptured,
    SnapshotRestored,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEnded,
    UsageReported,
    UserMessage,
)
from agentcli.tui.controller import pausable
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.widgets import TimelineEntry
from agentcli.tui.widgets._status import display_model, display_path

if TYPE_CHECKING:  # the session layer is imported after the first frame, not for a type
    from textual.message_pump import MessagePump

    from agentcli.session.session import Session
    from agentcli.session.view import SessionView
    from agentcli.tui.app import AgentApp

SNAPSHOT_API = ("timeline", "diff", "plan_restore", "restore")

_OFF_REASONS = {"off": "Snapshots are off for this session ([snapshots] enabled = false).",
                "missing": "This version has no snapshot store."}


def snapshot_support(session: Any) -> str:
    """``on`` when the session has a snapshot store, ``off`` when it is disabled, ``missing`` when
    this version of the session layer has no snapshot API at all."""
    if not all(callable(getattr(session, name, None)) for name in SNAPSHOT_API):
        return "missing"
    return "on" if getattr(session, "snapshots_enabled", True) else "off"


class SessionBridge:
    """Follows one Session for the app: its events to the widgets, its view to the prompt."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self.session: Session | None = None
        self.view: SessionView | None = None
        """Where the session is and what the user may do, as last read (None with no session)."""
        self.ready = False
        """The session is attached: its past is shown and its events are followed."""
        self.snapshots = "missing"
        """Whether the session has a snapshot timeline: ``on``, ``off`` (disabled) or ``missing``."""
        self.events_seen = 0
        """Session events received (for tests and benchmarks)."""
        self._unsubscribe: Callable[[], None] | None = None
        # Widgets and the app: whatever handles SessionEventPosted.
        self._routes: dict[type, tuple[MessagePump, ...]] = {}
        self._default_route: tuple[MessagePump, ...] = ()
        self._binding_keys: tuple[bool, bool] | None = None

    # -- attaching -----------------------------------------------------------------------

    async def attach(self, session: Session, *, history: bool = False) -> None:
        """Show ``session``: draw its graph, load its past, follow its events."""
        app = self.app
        self.detach()
        self.session = session
        self.ready = False
        graph = session.graph
        app.graph.set_graph(graph)
        status = app.status
        status.workspace = display_path(session.workspace)
        status.model = display_model(session.settings.model)
        status.session_id = session.id
        app.calls.clear()
        app.tools.clear()
        app.timeline.clear()
        app.timeline.session_id = session.id
        app.show_plan([])
        app.prompt.reset()
        await app.conversation.clear()
        self.snapshots = snapshot_support(session)
        app.timeline.differ = session.diff if self.snapshots == "on" else None
        app.timeline.off_reason = _OFF_REASONS.get(self.snapshots, "")
        self._route_events()
        status.estimated = False
        if history:
            await self._load_history(session)
        self.show_view()
        if session.last_turn is not None:
            app.prompt.show_turn_end(session.last_turn)
        if session.queued:  # typed while the agent worked, before its process ended
            if session.view.waiting_for in (None, "approval"):
                app.prompt.show_queued(session.queued)  # the next step boundary takes them, as before
            else:
                app.commands.requeue_to_prompt()  # stopped mid-turn: as after a pause, the user decides
        totals = session.totals
        status.input_tokens, status.output_tokens = totals.input_tokens, totals.output_tokens
        status.cache_read_tokens = totals.cache_read_tokens
        status.cost = totals.cost
        await self._load_timeline(session)
        self._unsubscribe = session.subscribe(self.on_event)
        session.start_tools()  # MCP servers start in the background once the session is shown
        app.mcp_pane.show(session.mcp_statuses, session.mcp_tool_lines())
        self.ready = True
        app.update_titles()

    def stop_following(self) -> None:
        """Stop showing the session's events (it goes on, and its log with it)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def detach(self) -> None:
        """Stop following the session and close it (its log is flushed; it can be resumed)."""
        self.stop_following()
        if self.session is not None:
            self.session.close()
            self.session = None
        self.view = None

    async def _load_history(self, session: Session) -> None:
        """Show the session's logged past."""
        directory = getattr(getattr(session, "log", None), "directory", None)
        if directory is None:
            return
        from agentcli.session.log import read_events

        app = self.app
        events = await asyncio.to_thread(lambda: list(read_events(directory)))
        plan: list[PlanStep] = []
        for event in events:
            if isinstance(event, ToolCallStarted):
                app.calls.started(event)
            elif isinstance(event, ToolCallFinished):
                app.calls.finished(event)
            elif isinstance(event, StateChanged):
                app.graph.record(event, fresh=False)
            elif isinstance(event, SnapshotCaptured):
                app.timeline.add(TimelineEntry.from_event(event, session.id))
            elif isinstance(event, SnapshotRestored):
                app.timeline.undo_id = event.undo_snapshot_id
            elif isinstance(event, PlanUpdated):
                plan = event.steps
            elif isinstance(event, UsageReported) and event.estimated:
                app.status.estimated = True  # the session's totals include an estimate
            app.status.follow_context(event)
        app.show_plan(plan)
        await app.conversation.load_history(events)
        app.tools.load(app.calls)

    async def _load_timeline(self, session: Session) -> None:
        timeline = self.app.timeline
        if self.snapshots != "on":
            timeline.clear()
            return
        try:
            snapshots = await session.timeline()
        except Exception as error:  # noqa: BLE001 - shown, not swallowed
            self.app.notify(f"Cannot read the snapshot timeline: {error}", severity="warning")
            return
        timeline.load(TimelineEntry.from_snapshot(s) for s in snapshots)

    def _route_events(self) -> None:
        app = self.app
        conversation, graph, status, tools, timeline = app.conversation, app.graph, app.status, app.tools, app.timeline
        self._routes = {
            TextDelta: (conversation,),
            StateChanged: (graph, app),
            ToolCallStarted: (conversation, tools),
            ToolCallFinished: (conversation, tools),
            UsageReported: (status,),
            ContextCompacted: (status, conversation),
            SessionStarted: (status, conversation),
            SnapshotCaptured: (timeline,),
            SnapshotRestored: (timeline, conversation),
            ClarificationRequested: (conversation,),
            TurnEnded: (conversation, app),
            UserMessage: (conversation, app),
            PermissionRequested: (conversation,),
            PlanUpdated: (conversation, app),
            Notice: (conversation, app),
        }
        self._default_route = (conversation,)

    # -- following -----------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """Session subscriber: keep the shared call store current, then post to the widgets.

        Called synchronously by the session on this loop; it only posts messages.
        """
        self.events_seen += 1
        app = self.app
        if isinstance(event, ToolCallStarted):
            app.calls.started(event)
        elif isinstance(event, ToolCallFinished):
            app.calls.finished(event)
        for target in self._routes.get(type(event), self._default_route):
            target.post_message(SessionEventPosted(event))
        if isinstance(event, (ToolCallStarted, SnapshotCaptured)):
            app.update_titles()

    def handle(self, event: Event) -> None:
        """The events the app itself shows (posted to it by :meth:`on_event`)."""
        if isinstance(event, StateChanged):
            self.show_view()
        elif isinstance(event, TurnEnded):
            self.app.prompt.show_turn_end(event)
            if not (self.session is not None and self.session.queued):
                from agentcli.describe import describe
                from agentcli.tui.notify import call_back

                description = describe(event)
                call_back(self.app, "agentcli waits for you",
                          description.headline if description is not None else event.outcome)
            if self.session is not None and self.session.queued:
                if event.outcome in ("completed", "clarify"):
                    self.app.deliver_queued()  # what the user would have sent next anyway
                else:
                    self.app.commands.requeue_to_prompt()  # a pause or a halt: the user decides
        elif isinstance(event, UserMessage) and event.queued and self.session is not None:
            self.app.prompt.show_queued(self.session.queued)
        elif isinstance(event, PlanUpdated):
            self.app.show_plan(event.steps)
        elif isinstance(event, Notice) and event.kind == "mcp" and self.session is not None:
            self.app.mcp_pane.show(self.session.mcp_statuses, self.session.mcp_tool_lines())

    def show_view(self) -> None:
        """Read where the session is now and show it: header, lit states, prompt, key bindings."""
        session = self.session
        if session is None:
            return
        view = self.view = session.view
        app = self.app
        if not app.screen_stack:
            return  # the app is closing: an event that lands now has no screen left to draw on
        app.status.show_view(view)
        app.graph.show(view.configuration)
        app.prompt.show_view(view)
        # The footer recomposes on every refresh_bindings(): only when ctrl+s changes meaning,
        # not on each of the many transitions of a turn.
        keys = (pausable(view), view.allows("resume"))
        if keys != self._binding_keys:
            self._binding_keys = keys
            app.refresh_bindings()
