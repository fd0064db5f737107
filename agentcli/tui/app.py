"""The agentcli Textual app: one screen of panes around a Session.

This module is the screen: its layout and panes, themes and keys, start-up, and the actions
the bindings and the palette name. Two helpers do the rest: the session bridge (``bridge``)
attaches a session, loads its past and routes its events to the widgets; the command
controller (``controller``) carries out what the user asks (prompt, pause and resume, approve
and deny, restore, sessions, quit). Neither the app nor its helpers keep state names: where the
session is comes from ``session.view``.

The app talks to the Session through its commands and renders its events; it never reaches
into the chart, the model client, the tools or the snapshot store. Start-up is lazy: the first
frame is the header, the stream, the focused prompt and the footer, and imports no more than
they need; the side panes, the graph strip, the prompt's menus, the helpers above, the session
layer (chart, statemachine, factory) and litellm's background import all come after it
(bench/tui_startup.py; tests/tui/test_first_frame.py checks that nothing typed meanwhile is lost).

Over 400 lines on purpose: Textual looks on the App for the bindings, their actions and
``check_action``, the themes and the keymap, the start-up hooks and the palette, so each has a
few lines here that delegate; spreading them over mixins would hide which object Textual calls.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual.app import App, InvalidThemeError, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from agentcli import startup_gc
from agentcli.config_sources import ConfigError, Layer, read_layers
from agentcli.tui import _strip_cycles as strip_cycles
from agentcli.tui.calls import ToolCalls
from agentcli.tui.commands import (
    RacesProvider,
    SessionsProvider,
    SnapshotsProvider,
    ThemesProvider,
    system_commands,
)
from agentcli.tui.css_cache import CachedStylesheet, ParseCache
from agentcli.tui.gc_policy import GcPolicy
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.themes import DEFAULT_THEME, ROLE_DEFAULTS, configured_theme, load_themes, remember_theme
from agentcli.tui.widgets._conversation import Conversation
from agentcli.tui.widgets._footer import FittedFooter
from agentcli.tui.widgets._prompt import PromptArea
from agentcli.tui.widgets._status import StatusHeader, display_path

# Only what the first frame draws is imported here (the header, the stream, the prompt, the
# footer). The side panes, the state graph and its drawing code, the session bridge, the
# command controller, the slash commands, the dialogs and the help are imported just after it,
# by whatever first needs them: together they were a third of the time to the first frame.
if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.events import Event, PlanStep
    from agentcli.session.log import SessionEntry
    from agentcli.session.session import Session
    from agentcli.session.view import SessionView
    from agentcli.tui.bridge import SessionBridge
    from agentcli.tui.controller import Commands
    from agentcli.tui.slash import SlashCommands
    from agentcli.tui.widgets import (
        GraphStrip,
        GraphTrail,
        McpPane,
        PlanPane,
        SnapshotTimeline,
        StateGraph,
        TimelineEntry,
        ToolPanel,
    )
    from agentcli.tui.widgets._prompt_input import PromptInput

__all__ = ["EXIT_USAGE", "AgentApp", "all_binding_ids", "binding_classes"]

PANES = ("graph", "tools", "timeline")


def binding_classes() -> list[type]:
    """Every class of the TUI that declares key bindings (for the keymap and its tests)."""
    from agentcli.tui.help import HelpScreen, PickOne
    from agentcli.tui.screens import ConfirmRestore, ConfirmWorkspace
    from agentcli.tui.widgets import SnapshotTimeline, StateGraph
    from agentcli.tui.widgets._blocks import ReasoningBlock, ToolCallBlock
    from agentcli.tui.widgets._prompt_input import PromptInput
    from agentcli.tui.widgets._timeline import SnapshotList

    return [AgentApp, Conversation, ToolCallBlock, ReasoningBlock, SnapshotTimeline, SnapshotList, StateGraph,
            ConfirmRestore, ConfirmWorkspace, PromptInput, HelpScreen, PickOne]


def all_binding_ids() -> set[str]:
    ids = set()
    for cls in binding_classes():
        for binding in getattr(cls, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
    return ids


EXIT_USAGE = 2
"""Exit code for a bad config or a workspace the user would not open (as on the command line)."""

_PANES = Binding.Group("Panes", compact=True)

STARTUP_SWITCH_INTERVAL_S = 0.0005
"""Python's thread switch interval from the app's mount until its panes are mounted, just after
the first frame (``AgentApp._switch_threads_often``)."""


class AgentApp(App[int]):
    """Watch, steer, answer and undo an agent session."""

    CSS_PATH = Path(__file__).parent / "app.tcss"
    """Absolute, so subclasses defined elsewhere (tests, benchmarks) still find it."""
    AUTO_FOCUS = "#prompt-input, #prompt-first"
    """The prompt has the focus from the first frame (its editor's stand-in, then the editor):
    keys typed while the rest starts (even before the app reads the terminal) go into it. Other
    screens find no such widget here."""
    TITLE = "agentcli"
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [(0, "-narrow"), (110, "-wide"), (170, "-roomy")]
    """Under 110 columns the side panes are hidden (the graph shows as one line over the prompt);
    from 170 they widen so the state graph is drawn in full."""
    COMMANDS = App.COMMANDS | {SessionsProvider, SnapshotsProvider, ThemesProvider, RacesProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "pause", "Pause", id="agentcli.pause",
                tooltip="Stop the agent now: a reply being streamed or a running command is cut off cleanly"),
        Binding("ctrl+s", "resume", "Resume", id="agentcli.resume",
                tooltip="Continue the paused or halted run (type guidance first to send it along)"),
        Binding("escape", "interrupt", "Pause", id="agentcli.interrupt", show=False,
                tooltip="Take back the last queued message, or stop the agent now (as ctrl+s)"),
        Binding("f1", "help", "Help", id="agentcli.help",
                tooltip="Keys and commands (also /help)"),
        Binding("question_mark", "help", "Help", id="agentcli.help.key", show=False,
                tooltip="Keys and commands, outside the prompt (in the prompt ? is a character)"),
        Binding("ctrl+q", "quit", "Quit", id="agentcli.quit", priority=True,
                tooltip="Leave agentcli; a running agent is paused first, so the session can be resumed"),
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

    # The panes mounted just after the first frame (``_mount_panes``); nothing reads them before.
    graph: StateGraph
    graph_strip: GraphStrip
    graph_trail: GraphTrail
    plan_pane: PlanPane
    mcp_pane: McpPane
    tools: ToolPanel
    timeline: SnapshotTimeline

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
        css_cache: ParseCache | None = None,
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
            css_cache: Parsed stylesheets kept between runs (the command line gives one; tests
                parse afresh unless they pass theirs). Saved after the session starts.
        """
        super().__init__()
        strip_cycles.install()
        self._css_cache = css_cache
        if css_cache is not None:
            self.stylesheet = CachedStylesheet(css_cache, variables=self.get_css_variables())
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
        self._pending_session = session
        self.initial_prompt = initial_prompt
        self.requested_theme = theme
        self.clock = clock
        self._theme_dirs = list(theme_dirs) if theme_dirs is not None else None
        self._remember = remember_themes
        self._warm_up = warm_up
        self._remembered_theme: str | None = None
        self.calls = ToolCalls(clock)
        """Every tool call of the session, shared by the stream and the tool panel."""
        # The three helpers are made on first use, after the first frame (see ``bridge``).
        self._bridge: SessionBridge | None = None
        self._commands: Commands | None = None
        self._slash: SlashCommands | None = None
        self._started = False
        self._switch_interval: float | None = None
        """Python's switch interval to put back once the panes are mounted (``_switch_threads_often``)."""
        self._panes_mounted = False
        """The graph strip and the side panes are mounted (just after the first frame)."""
        self._theme_problems: list[tuple[str, str]] = []
        self._load_themes()
        self.gc_policy = GcPolicy()
        """Keeps full collections short while the app runs (``tui/gc_policy.py``)."""

    # -- the helpers, made on first use ----------------------------------------------------

    @property
    def bridge(self) -> SessionBridge:
        """Attaches the session and routes its events to the widgets.

        Made on first use rather than in ``__init__``: its module imports the event types and
        every pane, which the first frame does not draw. Until then there is no session.
        """
        if self._bridge is None:
            from agentcli.tui.bridge import SessionBridge

            self._bridge = SessionBridge(self)
        return self._bridge

    @property
    def commands(self) -> Commands:
        """Carries out the user's commands on the session (made on first use)."""
        if self._commands is None:
            from agentcli.tui.controller import Commands

            self._commands = Commands(self)
        return self._commands

    @property
    def slash(self) -> SlashCommands:
        """Runs the ``/commands`` typed in the prompt (made on first use)."""
        if self._slash is None:
            from agentcli.tui.slash import SlashCommands

            self._slash = SlashCommands(self)
        return self._slash

    # -- the session, as the bridge shows it (nothing before the bridge exists) ---------

    @property
    def session(self) -> Session | None:
        """The attached session, if any."""
        return self._bridge.session if self._bridge is not None else None

    @property
    def view(self) -> SessionView | None:
        """Where the session is and what the user may do, as last shown (None with no session)."""
        return self._bridge.view if self._bridge is not None else None

    @property
    def control_state(self) -> str:
        """The session's control state as last shown (read-only: the view is the source)."""
        view = self.view
        return view.control if view is not None else ""

    @property
    def session_ready(self) -> bool:
        """The session is attached: its past is shown and its events are followed."""
        return self._bridge is not None and self._bridge.ready

    @property
    def snapshots(self) -> str:
        """Whether the session has a snapshot timeline: ``on``, ``off`` (disabled) or ``missing``."""
        return self._bridge.snapshots if self._bridge is not None else "missing"

    @property
    def events_seen(self) -> int:
        """Session events received (for tests and benchmarks)."""
        return self._bridge.events_seen if self._bridge is not None else 0

    @property
    def settings(self) -> Settings:
        """The settings sessions are made with (loaded just after the first frame if not given)."""
        if self._settings is None:
            raise RuntimeError("settings are loaded after the first frame; nothing may use them before")
        return self._settings

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> Iterable[Widget]:
        # The first frame: the header, the stream, the prompt and the footer, with the side bar
        # still empty. Kept as attributes rather than queried: session events may still arrive
        # while the screen is being torn down, and a handler must not fail on a missing widget.
        self._set_breakpoint_class()
        self.status = StatusHeader(id="status")
        self.status.workspace = display_path(self.workspace)
        self.conversation = Conversation(self.calls, self.clock, id="conversation")
        self.prompt = PromptArea(id="prompt")
        self._main = Vertical(id="main")
        self._sidebar = Vertical(id="sidebar")
        yield self.status
        with Horizontal(id="body"):
            with self._main:
                yield self.conversation
                yield self.prompt
            yield self._sidebar
        yield FittedFooter()

    def get_default_screen(self) -> Screen[Any]:
        from agentcli.tui.main_screen import MainScreen

        return MainScreen(id="_default")

    def _set_breakpoint_class(self) -> None:
        """Give the screen its width class (``-narrow``, ``-wide``, ``-roomy``) before its widgets
        are styled.

        Textual sets it on the first resize, after the widgets are styled, and a changed screen
        class restyles every widget: a fifth of the time to the first frame. Set here, the resize
        finds nothing to change (and a terminal resized meanwhile is handled as usual).
        """
        breakpoints = self.HORIZONTAL_BREAKPOINTS or []
        classes = {name: False for _, name in breakpoints}
        width = self.size.width
        for threshold, name in sorted(breakpoints, reverse=True):  # Textual's rule: the widest that fits
            if width >= threshold:
                classes[name] = True
                break
        self.screen.update_classes(classes, update=False)

    async def _mount_panes(self) -> None:
        """The graph strip and the side panes, mounted just after the first frame.

        Their modules (the state graph and its drawing code, the tool panel, the timeline, the
        plan and MCP panes) are imported here, not for the first frame; the stream and the
        prompt come first, so a user can type at once.
        """
        from agentcli.tui.widgets import (
            GraphStrip,
            GraphTrail,
            McpPane,
            PlanPane,
            SnapshotTimeline,
            StateGraph,
            ToolPanel,
        )

        self.graph = StateGraph(id="graph")
        self.graph_strip = GraphStrip(self.graph, id="graph-strip")
        self.graph_trail = GraphTrail(self.graph, id="graph-trail")
        self.plan_pane = PlanPane(id="plan")
        self._plan_title = Static("plan", classes="pane-title", id="plan-title")
        self._plan_box = Vertical(self._plan_title, self.plan_pane, id="plan-pane", classes="pane -empty")
        self.mcp_pane = McpPane(id="mcp-pane")
        self.tools = ToolPanel(self.calls, self.clock, id="tools")
        self.timeline = SnapshotTimeline(None, id="timeline")
        self._tools_title = Static("tool calls", classes="pane-title", id="tools-title")
        self._timeline_title = Static("snapshots", classes="pane-title", id="timeline-title")
        await self.prompt.mount_extras()
        await self._main.mount(self.graph_strip, before=self.prompt)
        await self._sidebar.mount_all([
            Vertical(Static("state graph  [dim]? legend[/]", classes="pane-title"),
                     self.graph_trail, ScrollableContainer(self.graph, id="graph-scroll"), id="graph-pane",
                     classes="pane"),
            self._plan_box,
            self.mcp_pane,
            Vertical(self._tools_title, self.tools, id="tools-pane", classes="pane"),
            Vertical(self._timeline_title, self.timeline, id="timeline-pane", classes="pane"),
        ])
        self._panes_mounted = True

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
        from agentcli.tui.keymap import KeymapError, keymap_file, load_keymap

        if not keymap_file().is_file():
            return  # the usual case: no need to import every widget for their binding ids
        try:
            keymap, warnings = load_keymap(known_ids=all_binding_ids())
        except KeymapError as error:
            self.notify(str(error), title="Keymap", severity="error", timeout=10)
            return
        for warning in warnings:
            self.notify(warning, title="Keymap", severity="warning", timeout=10)
        if keymap:
            self.set_keymap(keymap)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self.gc_policy.note_activity()  # the user is here: no long collection now
            if isinstance(event, events.Key) and not event.is_forwarded and self._typed_elsewhere(event):
                # Moved before Textual forwards the key, so it goes to the prompt in the order
                # typed: redirected once it had bubbled up from the pane, a fast typist's next
                # keys (already going straight to the prompt) could overtake it.
                self.screen.set_focus(self.prompt.input)
        await super().on_event(event)

    def _typed_elsewhere(self, event: events.Key) -> bool:
        """A character typed while a side pane or the stream has the focus, that nothing there
        binds: it belongs in the prompt (the user clicked a pane, then started typing)."""
        if not event.is_printable or not self._panes_mounted or len(self.screen_stack) != 1:
            return False
        focused = self.focused
        prompt = self.prompt
        if focused is None or focused is prompt or prompt in focused.ancestors or prompt.input.disabled:
            return False
        bound = self.screen.active_bindings  # the focused widget's chain up to the app
        return not any(key in bound for key in event.aliases)

    # -- start-up ------------------------------------------------------------------------

    def _switch_threads_often(self, often: bool) -> None:
        """Lower Python's thread switch interval from mount until the panes are in, then put it back.

        Textual writes each frame from a thread, which needs the GIL to do it. Right after the
        first frame this thread is busy (Textual's own follow-ups, the editor's and the panes'
        imports and mounts), and with the default interval (5 ms) the writer got the GIL a few
        times 5 ms late: the first frame reached the terminal 3-24 ms after it was handed over
        (median ~6 ms; the hello-world app's ~2 ms). Switching every 0.5 ms lets it through at
        once; it costs nothing while no other thread wants the GIL.
        """
        if often and self._switch_interval is None:
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(STARTUP_SWITCH_INTERVAL_S)
        elif not often and self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None

    def on_unmount(self) -> None:
        self._switch_threads_often(False)  # an app that ends before its panes were mounted
        self.gc_policy.uninstall()

    def on_mount(self) -> None:
        self._switch_threads_often(True)
        for message, title in self._theme_problems:
            self.notify(message, title=title, severity="error", timeout=10)
        self._load_keymap()
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.set_interval(0.5, self._tick)
        self.watch(self.screen, "focused", self._focus_moved, init=False)
        self.screen.screen_layout_refresh_signal.subscribe(self, self._fit_overlay)
        self.call_after_refresh(self._after_first_frame)

    @work(group="startup", exit_on_error=True)
    async def _after_first_frame(self) -> None:
        """Create (or attach) the session, then warm up litellm: all after the first frame."""
        if self._started:
            return  # a subclass that calls super().on_mount() would start twice
        self._started = True
        startup_gc.resume()  # paused by the command line until the first frame is drawn
        self.gc_policy.install()
        try:
            await self.prompt.upgrade()  # the editor first: the user may be typing already
            await self._mount_panes()
        finally:
            self._switch_threads_often(False)
        session, self._pending_session = self._pending_session, None
        if session is None and not await self._load_settings():
            return
        await self.commands.start(session)
        self._say_missing_key()
        await self._load_prompt_aids()
        await self._save_css_cache()
        if self._warm_up:
            from agentcli.session.factory import warm_up

            warm_up(self.settings)
        if self.initial_prompt:
            prompt, self.initial_prompt = self.initial_prompt, None
            await self.commands.submit(prompt)

    def _say_missing_key(self) -> None:
        """Before any task is typed, a model that has no key (agentcli/tui/key_check.py)."""
        from agentcli.tui.key_check import TITLE, missing_key_advice

        settings = self.session.settings if self.session is not None else self.settings
        advice = missing_key_advice(settings)
        if advice is not None:
            self.notify(advice, title=TITLE, severity="warning", timeout=60)

    async def _save_css_cache(self) -> None:
        """Keep what this start parsed for the next one (a cache that cannot be written is only
        slower next time: logged, not shown)."""
        if self._css_cache is None:
            return
        import asyncio

        try:
            await asyncio.to_thread(self._css_cache.save)
        except Exception as error:  # noqa: BLE001 - pickling or writing: the cache only saves time
            self.log.warning(f"stylesheet cache not written: {error!r}")

    async def _load_prompt_aids(self) -> None:
        """The prompt's history and custom commands, read off the event loop; a command file
        that cannot be used is named once, with its problem."""
        import asyncio

        from agentcli.prompt.history import PromptHistory, history_path

        history = await asyncio.to_thread(PromptHistory, history_path(self.workspace))
        if history.problem:
            self.notify(history.problem, severity="warning")
        self.prompt.history = history
        self.prompt.commands = await asyncio.to_thread(self.slash.reload)
        for problem in self.slash.problems:
            self.notify(problem, title="Custom command skipped", severity="warning", timeout=15)
        from agentcli.session.instructions import find_instructions

        found = await asyncio.to_thread(find_instructions, self.workspace)
        if found:  # what the model will be told, before the first message (the stream says it per request)
            self.notify(", ".join(item.label(self.workspace) for item in found), title="Project instructions",
                        severity="warning" if any(item.refused for item in found) else "information")

    @on(PromptArea.PathsWanted)
    def _paths_wanted(self) -> None:
        self.list_paths()

    @work(thread=True, exclusive=True, group="paths", exit_on_error=False)
    def list_paths(self) -> None:
        """List the workspace for ``@`` completion (git ls-files: a blocking subprocess)."""
        from agentcli.prompt.mentions import workspace_paths

        paths = workspace_paths(self.workspace)
        self.call_from_thread(self._paths_listed, paths)

    def _paths_listed(self, paths: list[str]) -> None:
        self.prompt.paths = paths
        self.prompt.refresh_menu()

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
        if self.settings.snapshots.enabled:
            from agentcli.session.factory import unsafe_workspace
            from agentcli.tui.screens import ConfirmWorkspace

            broad = unsafe_workspace(self.workspace)
            if broad and not await self.push_screen_wait(ConfirmWorkspace(broad)):
                self.exit(return_code=EXIT_USAGE, message=f"agentcli: not opened in {self.workspace}")
                return False
        return True

    async def attach(self, session: Session, *, history: bool = False) -> None:
        """Show ``session``: draw its graph, load its past (``history``), follow its events."""
        await self.bridge.attach(session, history=history)

    def _on_session_event(self, event: Event) -> None:
        """The session's subscriber (the bridge's), as the session calls it."""
        self.bridge.on_event(event)

    def on_session_event_posted(self, message: SessionEventPosted) -> None:
        self.bridge.handle(message.event)

    # -- panes that follow the session -----------------------------------------------------

    def show_plan(self, steps: list[PlanStep]) -> None:
        """The plan pane appears with the first plan and its title counts the steps done."""
        self.plan_pane.show_plan(steps)
        self._plan_title.update(f"plan ({self.plan_pane.summary})" if steps else "plan")
        self._plan_box.set_class(not steps, "-empty")

    def _tick(self) -> None:
        if not self._panes_mounted:
            return
        # A turn waiting on the user (an approval, an answer) counts as busy: a key is coming.
        view = self.view
        self.gc_policy.tick(away=not self.app_focus, busy=self.conversation.rendering or (
            view is not None and view.waiting_for in (None, "answer", "approval")))
        if self.calls.running:
            self.conversation.refresh_running()
            self.tools.refresh_running()
        self.update_titles()

    def update_titles(self) -> None:
        """Count the tool calls and snapshots in the pane titles."""
        if not self._panes_mounted or not self._tools_title.is_mounted:
            return
        self._tools_title.update(f"tool calls ({len(self.calls)})")
        self._timeline_title.update(
            f"snapshots ({len(self.timeline.entries)})" if self.snapshots == "on" else f"snapshots ({self.snapshots})")

    # -- commands: the controller carries them out, in these workers ---------------------

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """A command of the app's that raised (a bug, not the user's doing): its workers do not
        end the app, so without this it did nothing, silently. One line on screen, the traceback
        in the session's log; the session stays where it was, so the user can try again."""
        error = event.worker.error
        if event.state is not WorkerState.ERROR or error is None:
            return
        from agentcli.session.errors import failure_line

        recorded = self.session is not None and self.session.record_failure(error)
        self.notify(failure_line(error, recorded=recorded), title="Internal error", severity="error", timeout=30)

    @on(PromptArea.Submitted)
    def _prompt_submitted(self, message: PromptArea.Submitted) -> None:
        self.send_prompt(message.text, message.mode, message.typed)

    @work(group="command", exit_on_error=False)
    async def send_prompt(self, text: str, mode: str = "", typed: str | None = None) -> None:
        """Send the prompt's text (or a verdict, in ``permission`` mode) to the session;
        ``typed`` is the editor's text it came from (None: not from the editor)."""
        await self.commands.submit(text, mode, typed)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # False hides a binding, None shows it dimmed: one ctrl+s reads Pause or Resume.
        if action in ("toggle_sidebar", "toggle_pane", "new_session") and self._race_shown():
            return False  # the session's panes are under the race view: its keys would act unseen
        view = self.view
        if view is None:  # no session yet: Pause shows dimmed, Resume not at all
            return {"pause": None, "resume": False}.get(action, True)
        if action == "pause":
            if view.allows("resume"):
                return False
            from agentcli.tui.controller import pausable  # imported with the session by now

            return True if pausable(view) else None
        if action == "resume":
            return view.allows("resume")
        return True

    @work(group="command", exit_on_error=False)
    async def action_pause(self) -> None:
        """Pause now, even mid-stream or mid-command."""
        await self.commands.pause()

    def action_help_quit(self) -> None:
        """ctrl+c with nothing selected to copy (the prompt and the screen copy a selection first):
        as in a shell and as headless runs do, it stops a running agent, like ctrl+s; with nothing
        running, Textual's hint says how to quit."""
        if self.check_action("pause", ()) is True:
            self.action_pause()
            return
        super().action_help_quit()

    async def action_interrupt(self) -> None:
        """esc: in a side pane, back to the prompt (closing the overlay on a narrow screen);
        elsewhere take back the newest queued message, else pause a running agent."""
        if self._panes_mounted and self._sidebar.has_focus_within:
            self.leave_panes()
            return
        self._interrupt()

    @work(group="command", exit_on_error=False)
    async def _interrupt(self) -> None:
        await self.commands.interrupt()

    def action_help(self) -> None:
        """The help screen: keys, commands, custom command files that could not be used."""
        from agentcli.tui.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(self.slash.help())

    @work(group="command", exit_on_error=False)
    async def deliver_queued(self) -> None:
        """Send the messages queued when a turn ended before a step boundary took them."""
        await self.commands.deliver_queued()

    @work(group="command", exit_on_error=False)
    async def action_resume(self) -> None:
        """Resume a paused or halted run, with the prompt's text as guidance if any."""
        await self.commands.resume()

    @work(group="command", exit_on_error=False)
    async def action_compact(self) -> None:
        """Compact the model's view of a waiting session (the prompt's text says what to keep)."""
        await self.commands.compact()

    async def action_quit(self) -> None:
        """Quit with code 0; a run in progress is paused first, so it can be resumed."""
        await self.commands.quit()

    # -- panes and focus -----------------------------------------------------------------

    def action_toggle_sidebar(self) -> None:
        sidebar = self._sidebar
        if sidebar.has_focus_within:
            self.prompt.input.focus()  # the focus would stay on a pane nobody sees
        if self.screen.has_class("-narrow"):
            sidebar.toggle_class("-shown")
        else:
            sidebar.toggle_class("-hidden")

    def action_toggle_pane(self, pane: str) -> None:
        if pane not in PANES or not self._panes_mounted:
            return
        widget = self.query_one(f"#{pane}-pane")
        if self._pane_seen(widget):
            if widget.has_focus_within:
                self.prompt.input.focus()
            widget.add_class("-hidden")
            return
        # A pane nobody sees is shown, not hidden: at 80 columns the first ctrl+g hid the graph
        # inside the closed bar and seemed to do nothing.
        eclipsed = self._eclipsed(widget)
        floating = self.screen.has_class("-narrow") and not self._sidebar.has_class("-shown")
        self._reveal(pane)
        if eclipsed or floating:
            # It takes the overlay from the pane that had it; or, opening the overlay, the focus
            # goes with it, so esc and f4 close it again (from the prompt they did nothing).
            self._pane_focus(pane).focus()

    def _pane_focus(self, pane: str) -> Widget:
        """The widget of a side pane that takes the focus."""
        return {"graph": self.graph, "tools": self.tools.option_list}.get(pane, self.timeline.option_list)

    def leave_panes(self) -> None:
        """esc in a side pane: back to the prompt (on a narrow screen the overlay closes with it,
        as the focus moves: ``_focus_moved``). Never a pause: nothing in a pane is running."""
        self.prompt.input.focus()

    def _focus_moved(self, old: Widget | None, new: Widget | None) -> None:
        """On a narrow screen the overlay closes once the focus leaves it for the prompt or the
        stream (f4, esc, a click): it floats over the stream, where the user now reads or types.
        On a wide one the tool list or the timeline in use takes the graph's rows (app.tcss)."""
        if new is None or not self._panes_mounted:
            return
        in_use = any(pane.has_focus_within for pane in self.query("#tools-pane, #timeline-pane"))
        self._sidebar.set_class(in_use, "-pane-in-use")
        if not self.screen.has_class("-narrow"):
            return
        sidebar = self._sidebar
        if old is not None and sidebar in old.ancestors and sidebar not in new.ancestors:
            sidebar.remove_class("-shown")

    def _fit_overlay(self, screen: Screen[Any]) -> None:
        """Keep the narrow screen's overlay above the prompt (and the graph strip over it): it
        covered the right 50 columns of whatever was typed. The prompt grows with its text, so
        this runs after every layout of the screen; a changed height lays it out once more."""
        if not self._panes_mounted or screen is not self.screen:
            return
        rows: int | None = None
        if screen.has_class("-narrow"):
            top = self.graph_strip.region.y if self.graph_strip.display else self.prompt.region.y
            rows = max(1, top - self._main.region.y)
        current = self._sidebar.styles.max_height
        if (None if current is None else int(current.value)) != rows:
            self._sidebar.styles.max_height = rows

    def _pane_seen(self, widget: Widget) -> bool:
        """Whether a pane is on screen, as the stylesheet decides (the side bar closed, or at
        a narrow width another pane holding the focus and the whole overlay, hide it)."""
        return not widget.has_class("-hidden") and self._sidebar.display and not self._eclipsed(widget)

    def _eclipsed(self, widget: Widget) -> bool:
        return (self.screen.has_class("-narrow") and self._sidebar.has_focus_within
                and not widget.has_focus_within)

    def _reveal(self, pane: str) -> bool:
        """Show a side pane; False in the instant before the panes are mounted."""
        if not self._panes_mounted:
            return False
        self.query_one(f"#{pane}-pane").remove_class("-hidden")
        sidebar = self.query_one("#sidebar")
        sidebar.remove_class("-hidden")
        if self.screen.has_class("-narrow"):
            sidebar.add_class("-shown")
        return True

    def action_focus_timeline(self) -> None:
        if self._reveal("timeline"):
            self.timeline.option_list.focus()

    def action_focus_tools(self) -> None:
        if self._reveal("tools"):
            self.tools.option_list.focus()

    def action_toggle_diff_base(self) -> None:
        """Compare the selected snapshot with the working tree or the previous snapshot."""
        if self._panes_mounted:
            self.timeline.action_toggle_base()

    def action_focus_prompt(self) -> None:
        self.prompt.input.focus()
        if self._panes_mounted and self.screen.has_class("-narrow"):
            self._sidebar.remove_class("-shown")  # f4 is "back to typing", wherever the focus was

    def action_focus_stream(self) -> None:
        self.conversation.focus()

    # By name rather than @on: the prompt's editor class is imported after the first frame.
    def on_prompt_input_conversation_paged(self, message: PromptInput.ConversationPaged) -> None:
        if message.direction < 0:
            self.conversation.scroll_page_up()
        else:
            self.conversation.scroll_page_down()

    # -- tool calls: one selection, two views --------------------------------------------

    @on(Conversation.CallSelected)
    def _call_selected_in_stream(self, message: Conversation.CallSelected) -> None:
        self.tools.select(message.call_id)

    # Handlers by name rather than @on: the panes' classes are imported after the first frame.
    def on_tool_panel_call_selected(self, message: ToolPanel.CallSelected) -> None:
        self.conversation.show_call(message.call_id)

    # -- snapshots -----------------------------------------------------------------------

    def show_snapshot(self, snapshot_id: str) -> None:
        """Select a snapshot on the timeline (its diff shows in the preview)."""
        if not self._reveal("timeline"):
            return
        option_list = self.timeline.option_list
        option_list.highlighted = option_list.get_option_index(snapshot_id)
        option_list.focus()

    def on_snapshot_timeline_restore_requested(self, message: SnapshotTimeline.RestoreRequested) -> None:
        self.restore_to(message.entry)

    def on_snapshot_timeline_undo_requested(self, message: SnapshotTimeline.UndoRequested) -> None:
        self.undo_restore()

    def action_undo_restore(self) -> None:
        self.undo_restore()

    def undo_restore(self) -> None:
        """Restore what the last restore replaced (its undo point)."""
        entry = self.commands.undo_point()
        if entry is not None:
            self.restore_to(entry)

    @work(group="restore", exclusive=True, exit_on_error=False)
    async def restore_to(self, entry: TimelineEntry) -> None:
        """Restore the workspace to a snapshot after a confirmation listing the paths."""
        await self.commands.restore(entry)

    # -- sessions ------------------------------------------------------------------------

    def action_new_session(self) -> None:
        self.switch_session(None)

    def open_session(self, entry: SessionEntry) -> None:
        """Open a logged session (palette ``session: open``) with its history."""
        self.switch_session(entry)

    def _race_shown(self) -> bool:
        if len(self.screen_stack) < 2:
            return False  # the usual case, and before the first frame: race_screen is not imported
        from agentcli.tui.race_screen import ConfirmApply, DiffScreen, RaceScreen

        return isinstance(self.screen, (RaceScreen, DiffScreen, ConfirmApply))

    def open_race(self, race_id: str) -> None:
        """Show a race of this workspace over the agent's screen (palette ``race: open``); q or
        esc comes back. The session goes on meanwhile."""
        from agentcli.config_sources import data_home
        from agentcli.tui.race_screen import RaceScreen

        self.push_screen(RaceScreen(data_home(), race_id))

    @work(group="session", exclusive=True, exit_on_error=False)
    async def switch_session(self, entry: SessionEntry | None) -> None:
        """Open a logged session, or (``None``) start a new one."""
        await self.commands.switch_session(entry)

    # -- palette -------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from system_commands(self)
