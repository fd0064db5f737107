"""Command-palette providers for what depends on context: sessions, snapshots, themes.

Global actions come from ``AgentApp.get_system_commands``; these providers list things that
change while the app runs. Titles read ``group: action``.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from agentcli.tui.app import AgentApp

MAX_SESSIONS = 50


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
            yield DiscoveryHit(title, callback)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback in self._commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), callback)


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
            yield DiscoveryHit(title, callback, help=help_text)

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
                yield DiscoveryHit(title, callback, help="Switch theme (remembered)")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback in self._commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), callback, help="Switch theme (remembered)")
