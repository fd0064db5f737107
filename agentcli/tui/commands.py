"""The command palette: the app's global actions, and providers for what depends on context.

``system_commands`` lists every action that has a key (so the palette finds each one by name);
the providers list things that change while the app runs: sessions, snapshots, themes. Titles
read ``group: action``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from agentcli.tui.app import AgentApp

MAX_SESSIONS = 50


@dataclass
class RankedHit(DiscoveryHit):
    """A discovery hit (the palette with nothing typed) listed after the app's actions.

    Textual sorts discovery hits by score, and gives them all 0: the order was whichever provider
    answered first, so snapshots often came before the actions. The actions keep 0; each of these
    providers lists below them, in ``rank`` order (then in the order it yields).
    """

    rank: int = 1

    @property
    def score(self) -> float:
        return -float(self.rank)


SESSIONS_RANK, SNAPSHOTS_RANK, THEMES_RANK, RACES_RANK = 1, 2, 3, 4
"""The palette's order below the actions."""


def system_commands(app: AgentApp) -> Iterable[SystemCommand]:
    """The app's own actions, each titled ``group: action`` with its key in the help."""
    yield SystemCommand("agent: pause", "Stop the agent now (ctrl+s / esc)", app.action_pause)
    yield SystemCommand("agent: resume", "Continue a paused or halted run (ctrl+s)", app.action_resume)
    yield SystemCommand("context: compact", "Summarize the older part of the model's view now; text in the prompt "
                        "says what to keep", app.action_compact)
    for title, choice, help_text in (
        ("permission: allow once", "once", "Let the waiting tool call run"),
        ("permission: allow for this session", "session", "Allow it and calls like it until the session ends"),
        ("permission: always allow", "always", "Allow it and save the rule in .agentcli.toml"),
        ("permission: deny", "deny", "Refuse the waiting tool call; the agent is told"),
    ):
        yield SystemCommand(title, help_text, lambda choice=choice: app.send_prompt(choice, "permission"))
    yield SystemCommand("session: new", "Start a new session in this workspace (ctrl+n)",
                        app.action_new_session)
    yield SystemCommand("view: toggle side panes", "Show or hide graph, tools and snapshots (ctrl+b)",
                        app.action_toggle_sidebar)
    for pane, key, label in (("graph", "ctrl+g", "state graph"), ("tools", "ctrl+t", "tool-call panel"),
                             ("timeline", "ctrl+l", "snapshot timeline")):
        yield SystemCommand(f"view: toggle {label}", f"Show or hide the {label} ({key})",
                            lambda pane=pane: app.action_toggle_pane(pane))
    yield SystemCommand("focus: prompt", "Move to the prompt (f4)", app.action_focus_prompt)
    yield SystemCommand("focus: message stream", "Move to the messages to read and expand tool calls",
                        app.action_focus_stream)
    yield SystemCommand("focus: tool calls", "Move to the tool-call list (f3)", app.action_focus_tools)
    yield SystemCommand("focus: snapshot timeline", "Scrub snapshots and restore (f2)",
                        app.action_focus_timeline)
    yield SystemCommand("snapshot: undo last restore", "Restore what the last restore replaced (u on the timeline)",
                        app.action_undo_restore)
    yield SystemCommand("snapshot: toggle diff base", "Compare with the working tree or the previous snapshot (d)",
                        app.action_toggle_diff_base)
    yield SystemCommand("stream: show earlier messages", "Load older messages that were unloaded (ctrl+u)",
                        app.conversation.action_show_earlier)
    yield SystemCommand("stream: jump to the newest message", "Follow the stream again (end in the stream)",
                        app.conversation.action_jump_to_end)


def _session_title(meta: Any, status: str) -> str:
    title = meta.title or "(no message yet)"
    return f"session: open {meta.id} · {title[:50]} · {status}"


class SessionsProvider(Provider):
    """The sessions of this workspace (newest first): pick one to open it."""

    async def startup(self) -> None:
        from agentcli.config_sources import data_home
        from agentcli.session import log

        app: AgentApp = self.app  # type: ignore[assignment]
        entries = await asyncio.to_thread(log.list_sessions, data_home(), app.workspace)
        status = getattr(log, "status", None)
        current = app.session.id if app.session is not None else None
        self.entries = [
            (_session_title(entry.meta, status(entry.meta) if status else (entry.meta.outcome or "")), entry)
            for entry in entries[:MAX_SESSIONS]
            if entry.meta.id != current
        ]

    def _commands(self) -> list[tuple[str, Any]]:
        app: AgentApp = self.app  # type: ignore[assignment]
        commands: list[tuple[str, Any]] = [("session: new", app.action_new_session)]
        commands += [(title, partial(app.open_session, entry)) for title, entry in self.entries]
        return commands

    async def discover(self) -> Hits:
        for title, callback in self._commands():
            yield RankedHit(title, callback, rank=SESSIONS_RANK)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback in self._commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), callback)


class RacesProvider(Provider):
    """The races run in this workspace (``agentcli race``), newest first: pick one to see it."""

    async def startup(self) -> None:
        from agentcli.config_sources import data_home
        from agentcli.fleet import records

        app: AgentApp = self.app  # type: ignore[assignment]
        races = await asyncio.to_thread(records.all_races, data_home(), app.workspace)
        self.entries = [(_race_title(race), race.id) for race in races[:MAX_SESSIONS]]

    async def discover(self) -> Hits:
        app: AgentApp = self.app  # type: ignore[assignment]
        for title, race_id in self.entries:
            yield RankedHit(title, partial(app.open_race, race_id), rank=RACES_RANK)

    async def search(self, query: str) -> Hits:
        app: AgentApp = self.app  # type: ignore[assignment]
        matcher = self.matcher(query)
        for title, race_id in self.entries:
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), partial(app.open_race, race_id))


def _race_title(race: Any) -> str:
    passed = sum(1 for attempt in race.attempts if attempt.passed)
    state = "running" if race.ended is None else f"{passed} of {len(race.attempts)} passed"
    return f"race: open {race.id} · {' '.join(race.task.split())[:50]} · {state}"


class SnapshotsProvider(Provider):
    """Every snapshot on the timeline: show its diff or restore it."""

    def _commands(self) -> list[tuple[str, Any, str]]:
        app: AgentApp = self.app  # type: ignore[assignment]
        commands: list[tuple[str, Any, str]] = []
        for entry in reversed(app.timeline.entries):
            commands.append((f"snapshot: show #{entry.seq} {entry.label}", partial(app.show_snapshot, entry.id),
                             "Select it on the timeline and preview its diff"))
            commands.append((f"snapshot: restore #{entry.seq} {entry.label}", partial(app.restore_to, entry),
                             "Restore the workspace to it (asks first; can be undone)"))
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands()[:10]:
            yield RankedHit(title, callback, help=help_text, rank=SNAPSHOTS_RANK)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


class ThemesProvider(Provider):
    """``theme: NAME`` for every registered theme; the choice is remembered in the config."""

    def _commands(self) -> list[tuple[str, Any]]:
        app: AgentApp = self.app  # type: ignore[assignment]
        return [(f"theme: {name}", partial(app.switch_theme, name)) for name in sorted(app.available_themes)]

    async def discover(self) -> Hits:
        app: AgentApp = self.app  # type: ignore[assignment]
        for title, callback in self._commands():
            if title.startswith("theme: agentcli") or title == f"theme: {app.theme}":
                yield RankedHit(title, callback, help="Switch theme (remembered)", rank=THEMES_RANK)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback in self._commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), callback, help="Switch theme (remembered)")
