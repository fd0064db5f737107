"""The agentcli Textual app: one screen of panes around a Session.

The app talks to the Session through its commands and renders its events; it never reaches
into the chart, the model client, the tools or the snapshot store. The session runs on the
app's own event loop: its subscriber (the bridge below) wraps each event in a message posted to
the widgets that show it, so rendering never runs inside the session's call.

Start-up is lazy: the session layer (chart, statemachine, factory) and litellm's background
import start only after the first frame is on screen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import App, InvalidThemeError, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from agentcli.events import (
    PlanStep,
    PlanUpdated,
    ClarificationRequested,
    Event,
    PermissionRequested,
    SessionStarted,
    SnapshotCaptured,
    SnapshotRestored,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEnded,
    UsageReported,
)
from agentcli.config_sources import ConfigError, Layer, read_layers
from agentcli.tui.calls import ToolCalls
from agentcli.tui.commands import SessionsProvider, SnapshotsProvider, ThemesProvider
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.screens import ConfirmRestore, ConfirmWorkspace
from agentcli.tui.themes import DEFAULT_THEME, ROLE_DEFAULTS, configured_theme, load_themes, remember_theme
from agentcli.tui.widgets import (
    Conversation,
    PlanPane,
    PromptArea,
    SnapshotTimeline,
    StateGraph,
    StatusHeader,
    TimelineEntry,
    ToolPanel,
)
from agentcli.tui.widgets._status import RUNNING_STATES, display_model, display_path

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.session.log import SessionEntry
    from agentcli.session.session import Session

PANES = ("graph", "tools", "timeline")
SNAPSHOT_API = ("timeline", "diff", "plan_restore", "restore")


def binding_classes() -> list[type]:
    """Every class of the TUI that declares key bindings (for the keymap and its tests)."""
    from agentcli.tui.widgets._conversation import Conversation as Stream
    from agentcli.tui.widgets._conversation import ToolCallBlock

    return [AgentApp, Stream, ToolCallBlock, SnapshotTimeline, ConfirmRestore, ConfirmWorkspace]


def all_binding_ids() -> set[str]:
    ids = set()
    for cls in binding_classes():
        for binding in getattr(cls, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
    return ids


EXIT_USAGE = 2
"""Exit code for a bad config or a workspace the user would not open (as on the command line)."""

TUI_PERMISSION_MODE = "ask"
"""In the TUI a person is there to approve tool calls (headless runs default to ``edits``)."""


def snapshot_support(session: Any) -> str:
    """``on`` when the session has a snapshot store, ``off`` when it is disabled, ``missing`` when
    this version of the session layer has no snapshot API at all."""
    if not all(callable(getattr(session, name, None)) for name in SNAPSHOT_API):
        return "missing"
    return "on" if getattr(session, "snapshots_enabled", True) else "off"
_PAUSABLE = RUNNING_STATES | {"awaitingClarification", "awaitingPermission"}
_WAITING_FOR_USER = frozenset({"awaitingClarification", "awaitingPermission"})
_RESUMABLE = frozenset({"paused", "halted"})

_PANES = Binding.Group("Panes", compact=True)


class AgentApp(App[int]):
    """Watch, steer, answer and undo an agent session."""

    CSS_PATH = Path(__file__).parent / "app.tcss"
    """Absolute, so subclasses defined elsewhere (tests, benchmarks) still find it."""
    AUTO_FOCUS = None
    """The prompt is focused just after the first frame (see ``_after_first_frame``)."""
    TITLE = "agentcli"
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (110, "-wide")]
    COMMANDS = App.COMMANDS | {SessionsProvider, SnapshotsProvider, ThemesProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "pause", "Pause", id="agentcli.pause",
                tooltip="Stop the agent now: a reply being streamed or a running command is cut off cleanly"),
        Binding("ctrl+s", "resume", "Resume", id="agentcli.resume",
                tooltip="Continue the paused or halted run (type guidance first to send it along)"),
        Binding("escape", "pause", "Pause", id="agentcli.interrupt", show=False,
                tooltip="Stop the agent now (same as ctrl+s while it works)"),
        Binding("ctrl+n", "new_session", "New", id="agentcli.session.new",
                tooltip="Start a new session in this workspace"),
        Binding("ctrl+b", "toggle_sidebar", "Side", id="agentcli.pane.sidebar", group=_PANES,
                tooltip="Show or hide the side panes (graph, tool calls, snapshots)"),
        Binding("ctrl+g", "toggle_pane('graph')", "Graph", id="agentcli.pane.graph", group=_PANES,
                tooltip="Show or hide the state graph"),
        Binding("ctrl+t", "toggle_pane('tools')", "Tools", id="agentcli.pane.tools", group=_PANES,
                tooltip="Show or hide the tool-call panel"),
        Binding("ctrl+l", "toggle_pane('timeline')", "Snapshots", id="agentcli.pane.timeline", group=_PANES,
                tooltip="Show or hide the snapshot timeline"),
        Binding("f2", "focus_timeline", "Timeline", id="agentcli.focus.timeline", show=False,
                tooltip="Move to the snapshot timeline to scrub and restore"),
        Binding("f3", "focus_tools", "Tool calls", id="agentcli.focus.tools", show=False,
                tooltip="Move to the tool-call list"),
        Binding("f4", "focus_prompt", "Prompt", id="agentcli.focus.prompt", show=False,
                tooltip="Move to the prompt"),
    ]

    def __init__(
        self,
        *,
        workspace: Path,
        settings: Settings | None = None,
        overrides: Mapping[str, object] | None = None,
        session: Session | None = None,
        initial_prompt: str | None = None,
        theme: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        theme_dirs: Iterable[Path] | None = None,
        remember_themes: bool = True,
        warm_up: bool = True,
    ) -> None:
        """
        Args:
            workspace: The folder the agent works in.
            settings: Loaded settings (``settings.theme`` picks the theme unless ``theme`` is given).
                None loads them from the config files and ``overrides`` after the first frame
                (pydantic is not imported before it); a bad config ends the app with code 2.
            overrides: Values from command-line flags, for settings loaded by the app.
            session: A session to show (e.g. a resumed one); None creates a new one after the first frame.
            initial_prompt: A task to send as soon as the session is ready.
            theme: A theme name that overrides the configured one for this run (``--theme``).
            clock: Monotonic seconds, for elapsed times (tests freeze it).
            theme_dirs: Folders to load themes from (default: ``themes/`` and the user's folder).
            remember_themes: Write a theme picked in the palette into the user config.
            warm_up: Start litellm's background import after the first frame.
        """
        super().__init__()
        self.workspace = workspace.resolve()
        self._settings = settings
        # Without settings, the config sources are read now (no pydantic: the theme is needed for
        # the first frame) and validated just after it, when an error is reported too.
        self._layers: list[Layer] = []
        self._config_error: ConfigError | None = None
        if settings is None:
            try:
                self._layers = read_layers(self.workspace, overrides=overrides)
            except ConfigError as error:
                self._config_error = error
        self.session: Session | None = None
        self._pending_session = session
        self.initial_prompt = initial_prompt
        self.requested_theme = theme
        self.clock = clock
        self._theme_dirs = list(theme_dirs) if theme_dirs is not None else None
        self._remember = remember_themes
        self._warm_up = warm_up
        self._unsubscribe: Callable[[], None] | None = None
        self._routes: dict[type, tuple[Widget, ...]] = {}
        self._remembered_theme: str | None = None
        self.calls = ToolCalls(clock)
        self.control_state = "idle"
        """The session's control state, as the last StateChanged said."""
        self._binding_keys = (False, False)
        self._started = False
        self.session_ready = False
        self.snapshots = "missing"
        """Whether the session has a snapshot timeline: ``on``, ``off`` (disabled) or ``missing``."""
        self.events_seen = 0
        """Session events received (for tests and benchmarks)."""
        self._theme_problems: list[tuple[str, str]] = []
        self._load_themes()

    @property
    def settings(self) -> Settings:
        """The settings sessions are made with (loaded just after the first frame if not given)."""
        if self._settings is None:
            raise RuntimeError("settings are loaded after the first frame; nothing may use them before")
        return self._settings

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> Iterable[Widget]:
        # Kept as attributes rather than queried: session events may still arrive while the
        # screen is being torn down, and a handler must not fail on a missing widget then.
        self.status = StatusHeader(id="status")
        self.status.workspace = display_path(self.workspace)
        self.conversation = Conversation(self.calls, self.clock, id="conversation")
        self.prompt = PromptArea(id="prompt")
        self.graph = StateGraph(id="graph")
        self.plan_pane = PlanPane(id="plan")
        self._plan_title = Static("plan", classes="pane-title", id="plan-title")
        self._plan_box = Vertical(self._plan_title, self.plan_pane, id="plan-pane", classes="pane -empty")
        self.tools = ToolPanel(self.calls, self.clock, id="tools")
        self.timeline = SnapshotTimeline(None, id="timeline")
        self._tools_title = Static("tool calls", classes="pane-title", id="tools-title")
        self._timeline_title = Static("snapshots", classes="pane-title", id="timeline-title")
        self._sidebar = Vertical(id="sidebar")
        yield self.status
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield self.conversation
                yield self.prompt
            yield self._sidebar
        yield Footer()

    def _side_panes(self) -> list[Widget]:
        """The side panes, mounted just after the first frame: the stream and the prompt come first."""
        return [
            Vertical(Static("state graph", classes="pane-title"),
                     ScrollableContainer(self.graph, id="graph-scroll"), id="graph-pane", classes="pane"),
            self._plan_box,
            Vertical(self._tools_title, self.tools, id="tools-pane", classes="pane"),
            Vertical(self._timeline_title, self.timeline, id="timeline-pane", classes="pane"),
        ]

    # -- themes --------------------------------------------------------------------------

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def _load_themes(self) -> None:
        """Register every theme and pick the wanted one, before the stylesheet is first parsed.

        Done in ``__init__`` rather than ``on_mount``: a theme set after mount re-parses all the
        CSS before the first frame (a tenth of a second here). Problems are notified on mount.
        """
        loaded = load_themes(self._theme_dirs)
        for theme in loaded.themes.values():
            self.register_theme(theme.to_theme())
        self._theme_problems = [(error, "Theme skipped") for error in loaded.errors]
        if self.requested_theme:
            wanted = self.requested_theme
        elif self._settings is not None:
            wanted = self._settings.theme
        else:
            wanted = configured_theme(self._layers) or DEFAULT_THEME
        for name in (wanted, DEFAULT_THEME):
            try:
                self.theme = name
                break
            except InvalidThemeError:
                self._theme_problems.append(
                    (f"Unknown theme {name!r}; known: {', '.join(sorted(self.available_themes))}", "Theme"))
        self._remembered_theme = self.theme

    def _theme_changed(self, theme: Any) -> None:
        # The start-up theme (from the config or --theme) is announced too: only a change is written.
        if not self._remember or theme.name == self._remembered_theme:
            return
        self._remembered_theme = theme.name
        try:
            path = remember_theme(theme.name)
        except OSError as error:
            self.notify(f"Could not remember the theme: {error}", severity="warning")
            return
        self.log.info(f"theme {theme.name} written to {path}")

    def switch_theme(self, name: str) -> None:
        """Use a theme now and remember it for next time (palette ``theme: NAME``)."""
        self.theme = name

    def _load_keymap(self) -> None:
        from agentcli.tui.keymap import KeymapError, load_keymap

        try:
            keymap, warnings = load_keymap(known_ids=all_binding_ids())
        except KeymapError as error:
            self.notify(str(error), title="Keymap", severity="error", timeout=10)
            return
        for warning in warnings:
            self.notify(warning, title="Keymap", severity="warning", timeout=10)
        if keymap:
            self.set_keymap(keymap)

    # -- start-up ------------------------------------------------------------------------

    def on_mount(self) -> None:
        for message, title in self._theme_problems:
            self.notify(message, title=title, severity="error", timeout=10)
        self._load_keymap()
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.set_interval(0.5, self._tick)
        self.call_after_refresh(self._after_first_frame)

    @work(group="startup", exit_on_error=True)
    async def _after_first_frame(self) -> None:
        """Create (or attach) the session, then warm up litellm: all after the first frame."""
        if self._started:
            return  # a subclass that calls super().on_mount() would start twice
        self._started = True
        # Focusing changes the active bindings, which makes the footer compose its keys: done
        # here, that happens just after the first frame, as in any Textual app that focuses late.
        self.prompt.input.focus()
        await self._sidebar.mount_all(self._side_panes())
        session = self._pending_session
        self._pending_session = None
        if session is None:
            if not await self._load_settings():
                return
            from agentcli.session.factory import SessionSetupError, new_session

            try:
                session = new_session(self.workspace, self.settings, default_permission_mode=TUI_PERMISSION_MODE)
            except SessionSetupError as error:
                self.notify(str(error), title="Cannot start a session", severity="error", timeout=30)
                self.prompt.mode = "readonly"
                return
            await self.attach(session)
        else:
            await self.attach(session, history=True)
        if self._warm_up:
            from agentcli.session.factory import warm_up

            warm_up(self.settings)
        if self.initial_prompt:
            prompt, self.initial_prompt = self.initial_prompt, None
            await self._submit(prompt, "task")

    async def _load_settings(self) -> bool:
        """Load the settings if the app was not given them, and confirm a broad workspace.

        Returns:
            False when the app is exiting instead: a bad config (the message names the file
            and the field) or a home folder or filesystem root the user chose not to open.
        """
        if self._settings is None:
            from agentcli.config import validate_layers

            error = self._config_error
            if error is None:
                try:
                    self._settings = validate_layers(self._layers)
                except ConfigError as invalid:
                    error = invalid
            if error is not None:
                self.exit(return_code=EXIT_USAGE, message=f"agentcli: {error}")
                return False
        if self._settings.snapshots.enabled:
            from agentcli.session.factory import unsafe_workspace

            broad = unsafe_workspace(self.workspace)
            if broad and not await self.push_screen_wait(ConfirmWorkspace(broad)):
                self.exit(return_code=EXIT_USAGE, message=f"agentcli: not opened in {self.workspace}")
                return False
        return True

    async def attach(self, session: Session, *, history: bool = False) -> None:
        """Show ``session``: draw its graph, load its past, follow its events."""
        self._detach()
        self.session = session
        self.session_ready = False
        graph = session.graph
        self.graph.set_graph(graph)
        self.status.set_graph(graph)
        self.status.workspace = display_path(session.workspace)
        self.status.model = display_model(session.settings.model)
        self.status.session_id = session.id
        self.calls.clear()
        self.tools.clear()
        self.timeline.clear()
        self._show_plan([])
        await self.conversation.clear()
        self.snapshots = snapshot_support(session)
        self.timeline.differ = session.diff if self.snapshots == "on" else None  # type: ignore[attr-defined]
        self.timeline.off_reason = {"off": "Snapshots are off for this session ([snapshots] enabled = false).",
                                    "missing": "This version has no snapshot store."}.get(self.snapshots, "")
        self._route_events()
        if history:
            await self._load_history(session)
        configuration = session.configuration or [n.id for n in graph.nodes if n.initial and n.kind == "atomic"]
        self.graph.configuration = tuple(configuration)
        self.graph.visited.update(configuration)
        self.status.show_configuration(configuration)
        self._show_control_state(session.control_state)
        if session.pending_question is not None:
            self.prompt.ask(session.pending_question)
        pending_permission = getattr(session, "pending_permission", None)
        if pending_permission is not None:
            self.prompt.ask_permission(pending_permission)
        last_turn = getattr(session, "last_turn", None)
        if last_turn is not None:
            self._show_turn_end(last_turn)
        totals = session.totals
        self.status.input_tokens, self.status.output_tokens = totals.input_tokens, totals.output_tokens
        self.status.cost = totals.cost
        await self._load_timeline(session)
        self._unsubscribe = session.subscribe(self._on_session_event)
        self.session_ready = True
        self._update_titles()

    def _detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.session is not None:
            self.session.close()
            self.session = None

    async def _load_history(self, session: Session) -> None:
        directory = getattr(getattr(session, "log", None), "directory", None)
        if directory is None:
            return
        import asyncio

        from agentcli.session.log import read_events

        events = await asyncio.to_thread(lambda: list(read_events(directory)))
        plan: list[PlanStep] = []
        for event in events:
            if isinstance(event, ToolCallStarted):
                self.calls.started(event)
            elif isinstance(event, ToolCallFinished):
                self.calls.finished(event)
            elif isinstance(event, StateChanged):
                self.graph.record(event)
            elif isinstance(event, SnapshotCaptured):
                self.timeline.add(TimelineEntry.from_event(event))
            elif isinstance(event, SnapshotRestored):
                self.timeline.undo_id = event.undo_snapshot_id
            elif isinstance(event, PlanUpdated):
                plan = event.steps
        self._show_plan(plan)
        await self.conversation.load_history(events)
        self.tools.load(self.calls)

    async def _load_timeline(self, session: Session) -> None:
        if self.snapshots != "on":
            self.timeline.clear()
            return
        try:
            snapshots = await session.timeline()  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001 - shown, not swallowed
            self.notify(f"Cannot read the snapshot timeline: {error}", severity="warning")
            return
        self.timeline.load(TimelineEntry.from_snapshot(s) for s in snapshots)

    def _route_events(self) -> None:
        conversation, graph, status = self.conversation, self.graph, self.status
        tools, timeline = self.tools, self.timeline
        self._routes = {
            TextDelta: (conversation,),
            StateChanged: (graph, status, self),
            ToolCallStarted: (conversation, tools),
            ToolCallFinished: (conversation, tools),
            UsageReported: (status,),
            SessionStarted: (status, conversation),
            SnapshotCaptured: (timeline,),
            SnapshotRestored: (timeline, conversation),
            ClarificationRequested: (conversation, self),
            TurnEnded: (conversation, self),
            PermissionRequested: (conversation, self),
            PlanUpdated: (conversation, self),
        }
        self._default_route: tuple[Widget, ...] = (conversation,)

    # -- the bridge ----------------------------------------------------------------------

    def _on_session_event(self, event: Event) -> None:
        """Session subscriber: keep the shared call store current, then post to the widgets.

        Called synchronously by the session on this loop; it only posts messages.
        """
        self.events_seen += 1
        if isinstance(event, ToolCallStarted):
            self.calls.started(event)
        elif isinstance(event, ToolCallFinished):
            self.calls.finished(event)
        for target in self._routes.get(type(event), self._default_route):
            target.post_message(SessionEventPosted(event))
        if isinstance(event, (ToolCallStarted, SnapshotCaptured)):
            self._update_titles()

    def on_session_event_posted(self, message: SessionEventPosted) -> None:
        event = message.event
        if isinstance(event, StateChanged):
            self._show_control_state(next(
                (s for s in event.configuration if s in self.status.control_states), self.control_state))
        elif isinstance(event, ClarificationRequested):
            self.prompt.ask(event)
        elif isinstance(event, TurnEnded):
            self._show_turn_end(event)
        elif isinstance(event, PermissionRequested):
            self.prompt.ask_permission(event)
        elif isinstance(event, PlanUpdated):
            self._show_plan(event.steps)

    def _show_plan(self, steps: list[PlanStep]) -> None:
        """The plan pane appears with the first plan and its title counts the steps done."""
        self.plan_pane.show_plan(steps)
        self._plan_title.update(f"plan ({self.plan_pane.summary})" if steps else "plan")
        self._plan_box.set_class(not steps, "-empty")

    def _show_control_state(self, state: str) -> None:
        self.control_state = state
        prompt = self.prompt
        if state == "awaitingPermission":
            request = getattr(self.session, "pending_permission", None)
            if prompt.permission is None and request is not None:
                prompt.ask_permission(request)
            prompt.mode = "permission"
            prompt.hint = "A tool call waits for your approval (ctrl+s pauses instead)"
        elif state == "awaitingClarification":
            if prompt.question is None and self.session is not None and self.session.pending_question is not None:
                prompt.ask(self.session.pending_question)
            prompt.mode = "answer"
            prompt.hint = "The agent asks you — answer below (ctrl+s pauses instead)"
        elif state in _RESUMABLE:
            prompt.mode = "guidance"
        elif state in RUNNING_STATES:
            prompt.mode = "busy"
            prompt.hint = f"{state}… ctrl+s or esc pauses"
        else:
            prompt.mode = "task"
            if prompt.hint.endswith("pauses"):
                prompt.hint = ""
        # The footer recomposes on every refresh_bindings(): only when ctrl+s changes meaning,
        # not on each of the many transitions of a turn.
        keys = (state in _PAUSABLE, state in _RESUMABLE)
        if keys != self._binding_keys:
            self._binding_keys = keys
            self.refresh_bindings()

    def _show_turn_end(self, event: TurnEnded) -> None:
        prompt = self.prompt
        if self.control_state == "awaitingPermission":
            return  # the turn waits on an approval: the permission prompt says what to do
        if event.outcome == "paused":
            prompt.hint = f"⏸ paused: {event.reason} — ctrl+s resumes; or type guidance and press enter"
        elif event.outcome == "halted":
            prompt.hint = f"■ halted: {event.reason} — type guidance and press enter to continue"
        elif event.outcome == "completed":
            prompt.hint = ""  # the stream already says it, with the summary
        elif event.outcome == "error":
            prompt.hint = f"✗ {event.reason} — type a message to try again"

    def _tick(self) -> None:
        if self.calls.running:
            self.conversation.refresh_running()
            self.tools.refresh_running()
        self._update_titles()

    def _update_titles(self) -> None:
        if not self._tools_title.is_mounted:
            return
        self._tools_title.update(f"tool calls ({len(self.calls)})")
        self._timeline_title.update(
            f"snapshots ({len(self.timeline.entries)})" if self.snapshots == "on" else f"snapshots ({self.snapshots})")

    # -- commands to the session ---------------------------------------------------------

    @on(PromptArea.Submitted)
    async def _prompt_submitted(self, message: PromptArea.Submitted) -> None:
        self.send_prompt(message.text, message.mode)

    @work(group="command", exit_on_error=False)
    async def send_prompt(self, text: str, mode: str) -> None:
        await self._submit(text, mode)

    async def _submit(self, text: str, mode: str) -> None:
        session = self.session
        if session is None:
            self.notify("The session is not ready yet.", severity="warning")
            return
        from agentcli.session import SessionStateError

        state = session.control_state
        try:
            if state == "awaitingPermission":
                choice = text.strip().lower()
                if choice == "deny":
                    await session.deny("once")  # type: ignore[attr-defined]
                elif choice in ("once", "session", "always"):
                    await session.approve(choice)  # type: ignore[attr-defined]
                else:
                    self.notify("Answer with y (allow once), s (this session), a (always) or n (deny).",
                                severity="warning")
                    return
            elif state == "awaitingClarification":
                await session.answer(text)
            elif state in _RESUMABLE:
                await session.resume(guidance=text or None)
            elif state in RUNNING_STATES:
                self.notify("The agent is working: pause it first (ctrl+s), then send guidance.",
                            severity="warning")
                return
            else:
                if not text:
                    return
                await session.send_user_message(text)
        except SessionStateError as error:
            self.notify(str(error), severity="warning")
            return
        self.prompt.input.clear()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # False hides a binding, None shows it dimmed: one ctrl+s reads Pause or Resume.
        if action == "pause":
            if self.control_state in _RESUMABLE:
                return False
            return True if self.control_state in _PAUSABLE else None
        if action == "resume":
            return self.control_state in _RESUMABLE
        return True

    @work(group="command", exit_on_error=False)
    async def action_pause(self) -> None:
        """Pause now, even mid-stream or mid-command."""
        if self.session is not None and self.control_state in _PAUSABLE:
            await self.session.pause("paused by the user")

    @work(group="command", exit_on_error=False)
    async def action_resume(self) -> None:
        """Resume a paused or halted run, with the prompt's text as guidance if any."""
        if self.session is None or self.control_state not in _RESUMABLE:
            return
        text = self.prompt.input.value.strip()
        await self._submit(text, "guidance")

    def action_toggle_pause(self) -> None:
        if self.control_state in _RESUMABLE:
            self.action_resume()
        else:
            self.action_pause()

    # -- panes and focus -----------------------------------------------------------------

    def action_toggle_sidebar(self) -> None:
        sidebar = self.query_one("#sidebar")
        if self.screen.has_class("-narrow"):
            sidebar.toggle_class("-shown")
        else:
            sidebar.toggle_class("-hidden")

    def action_toggle_pane(self, pane: str) -> None:
        if pane not in PANES:
            return
        widget = self.query_one(f"#{pane}-pane")
        widget.toggle_class("-hidden")
        sidebar = self.query_one("#sidebar")
        if not widget.has_class("-hidden"):  # showing a pane shows the side bar too
            sidebar.remove_class("-hidden")
            if self.screen.has_class("-narrow"):
                sidebar.add_class("-shown")

    def _reveal(self, pane: str) -> None:
        self.query_one(f"#{pane}-pane").remove_class("-hidden")
        sidebar = self.query_one("#sidebar")
        sidebar.remove_class("-hidden")
        if self.screen.has_class("-narrow"):
            sidebar.add_class("-shown")

    def action_focus_timeline(self) -> None:
        self._reveal("timeline")
        self.timeline.option_list.focus()

    def action_focus_tools(self) -> None:
        self._reveal("tools")
        self.tools.option_list.focus()

    def action_focus_prompt(self) -> None:
        self.prompt.input.focus()

    def action_focus_stream(self) -> None:
        self.conversation.focus()

    # -- tool calls: one selection, two views --------------------------------------------

    @on(Conversation.CallSelected)
    def _call_selected_in_stream(self, message: Conversation.CallSelected) -> None:
        self.tools.select(message.call_id)

    @on(ToolPanel.CallSelected)
    def _call_selected_in_panel(self, message: ToolPanel.CallSelected) -> None:
        self.conversation.show_call(message.call_id)

    # -- snapshots -----------------------------------------------------------------------

    def show_snapshot(self, snapshot_id: str) -> None:
        """Select a snapshot on the timeline (its diff shows in the preview)."""
        self._reveal("timeline")
        option_list = self.timeline.option_list
        option_list.highlighted = option_list.get_option_index(snapshot_id)
        option_list.focus()

    @on(SnapshotTimeline.RestoreRequested)
    def _restore_requested(self, message: SnapshotTimeline.RestoreRequested) -> None:
        self.restore_to(message.entry)

    @on(SnapshotTimeline.UndoRequested)
    def _undo_requested(self, message: SnapshotTimeline.UndoRequested) -> None:
        self.undo_restore()

    def action_undo_restore(self) -> None:
        self.undo_restore()

    def undo_restore(self) -> None:
        """Restore what the last restore replaced (its undo point)."""
        undo_id = self.timeline.undo_id
        if undo_id is None:
            self.notify("No restore to undo.", severity="warning")
            return
        entry = next((e for e in self.timeline.entries if e.id == undo_id), None)
        self.restore_to(entry or TimelineEntry(undo_id, 0, "undo point", None, ()))

    @work(group="restore", exclusive=True, exit_on_error=False)
    async def restore_to(self, entry: TimelineEntry) -> None:
        """Restore the workspace to a snapshot after a confirmation listing the paths."""
        session = self.session
        if session is None or self.snapshots != "on":
            self.notify(self.timeline.off_reason or "No session yet.", severity="warning")
            return
        if self.control_state in RUNNING_STATES:
            self.notify("Pause the agent before restoring files (ctrl+s).", severity="warning")
            return
        try:
            plan = await session.plan_restore(entry.id)
        except Exception as error:  # noqa: BLE001 - reported to the user
            self.notify(f"Cannot plan the restore: {error}", severity="error")
            return
        if not getattr(plan, "changes", True) and not getattr(plan, "writes", None) and not getattr(plan, "deletes", None):
            self.notify(f"The workspace already matches snapshot #{entry.seq}.")
            return
        if not await self.push_screen_wait(ConfirmRestore(entry.seq, entry.label, plan)):
            return
        try:
            await session.restore(entry.id)
        except Exception as error:  # noqa: BLE001 - reported to the user
            self.notify(f"Restore failed: {error}", severity="error")

    # -- sessions ------------------------------------------------------------------------

    def action_new_session(self) -> None:
        self.switch_session(None)

    def open_session(self, entry: SessionEntry) -> None:
        """Open a logged session (palette ``session: open``) with its history."""
        self.switch_session(entry)

    @work(group="session", exclusive=True, exit_on_error=False)
    async def switch_session(self, entry: SessionEntry | None) -> None:
        if self.control_state in _PAUSABLE:
            self.notify("Pause the agent before switching sessions (ctrl+s).", severity="warning")
            return
        from agentcli.session import factory

        try:
            if entry is None:
                session = factory.new_session(self.workspace, self.settings,
                                              default_permission_mode=TUI_PERMISSION_MODE)
                await self.attach(session)
                self.notify("New session started.")
                return
            settings = self._settings_for(entry)
            session = factory.resume_session(entry, settings, default_permission_mode=TUI_PERMISSION_MODE)
        except Exception as error:  # noqa: BLE001 - SessionSetupError, ConfigError: shown
            self.notify(str(error), title="Cannot open the session", severity="error", timeout=15)
            return
        await self.attach(session, history=True)
        self.notify(f"Opened session {session.id}.")

    def _settings_for(self, entry: SessionEntry) -> Settings:
        from agentcli.config import load_settings
        from agentcli.session import factory

        return load_settings(Path(entry.meta.workspace), overrides=factory.resume_settings_overrides(entry, {}))

    # -- palette -------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("agent: pause", "Stop the agent now (ctrl+s / esc)", self.action_pause)
        yield SystemCommand("agent: resume", "Continue a paused or halted run (ctrl+s)", self.action_resume)
        for title, choice, help_text in (
            ("permission: allow once", "once", "Let the waiting tool call run"),
            ("permission: allow for this session", "session", "Allow it and calls like it until the session ends"),
            ("permission: always allow", "always", "Allow it and save the rule in .agentcli.toml"),
            ("permission: deny", "deny", "Refuse the waiting tool call; the agent is told"),
        ):
            yield SystemCommand(title, help_text, lambda choice=choice: self.send_prompt(choice, "permission"))
        yield SystemCommand("session: new", "Start a new session in this workspace (ctrl+n)",
                            self.action_new_session)
        yield SystemCommand("view: toggle side panes", "Show or hide graph, tools and snapshots (ctrl+b)",
                            self.action_toggle_sidebar)
        for pane, key, label in (("graph", "ctrl+g", "state graph"), ("tools", "ctrl+t", "tool-call panel"),
                                 ("timeline", "ctrl+l", "snapshot timeline")):
            yield SystemCommand(f"view: toggle {label}", f"Show or hide the {label} ({key})",
                                lambda pane=pane: self.action_toggle_pane(pane))
        yield SystemCommand("focus: prompt", "Move to the prompt (f4)", self.action_focus_prompt)
        yield SystemCommand("focus: message stream", "Move to the messages to read and expand tool calls",
                            self.action_focus_stream)
        yield SystemCommand("focus: tool calls", "Move to the tool-call list (f3)", self.action_focus_tools)
        yield SystemCommand("focus: snapshot timeline", "Scrub snapshots and restore (f2)",
                            self.action_focus_timeline)
        yield SystemCommand("snapshot: undo last restore", "Restore what the last restore replaced (u on the timeline)",
                            self.action_undo_restore)
        yield SystemCommand("snapshot: toggle diff base", "Compare with the working tree or the previous snapshot (d)",
                            self.timeline.action_toggle_base)
        yield SystemCommand("stream: show earlier messages", "Load older messages that were unloaded (ctrl+u)",
                            self.conversation.action_show_earlier)
        yield SystemCommand("stream: jump to the newest message", "Follow the stream again (end in the stream)",
                            self.conversation.action_jump_to_end)

    # -- shutdown ------------------------------------------------------------------------

    async def action_quit(self) -> None:
        await self._shutdown_session()
        self.exit(0)

    async def _shutdown_session(self) -> None:
        """A run in progress is paused (so the log says so and it can be resumed), then closed."""
        session = self.session
        if session is None:
            return
        if self.control_state in _PAUSABLE:
            try:
                await session.pause("the app was closed")
            except Exception:  # noqa: BLE001 - closing anyway; the log shows the cut
                pass
        self._detach()
