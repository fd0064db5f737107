"""What each ``/command`` typed in the prompt does in the TUI.

A command never reaches the model as a message (``/help`` is not a task); an unknown one says
so and keeps the text. Each runs in the app's command worker, so the pick lists it opens are
awaited with ``push_screen_wait``. The commands only call the session's own commands and the
app's actions: nothing here reaches past the session.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.describe import NO_PRICE_WHY, format_cost
from agentcli.prompt.custom import CustomCommand, CustomCommands, load_commands
from agentcli.prompt.slash import BUILT_IN, SlashCommand, SlashInput
from agentcli.tui.help import HelpScreen, PickOne, help_text
from agentcli.tui.widgets._status import display_model

if TYPE_CHECKING:
    from agentcli.tui.app import AgentApp

ROLES = ("default", "plan", "build", "explore")

INIT_TASK = """\
Draft an AGENTS.md at the root of this repository for coding agents that will work on it.
Read the README, the build and test configuration and a few central modules first. Then write
AGENTS.md with short sections: what the project is; how to set it up, build, run the tests and
the linters (exact commands you verified); the layout (which folder holds what); the code style
and conventions you see in the code; and anything surprising a newcomer must know. Keep it
under 120 lines, factual, no marketing. If an AGENTS.md exists already, improve it instead of
replacing what is still right."""


class SlashCommands:
    """Runs the built-in and custom slash commands for the app."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self.custom = CustomCommands()

    def reload(self) -> list[SlashCommand]:
        """Read the custom command files again; returns what the menu offers (problems notified
        once per file and message)."""
        app = self.app
        self.custom = load_commands(app.workspace)
        commands = list(BUILT_IN) + [
            SlashCommand(c.name, c.description or _first_line(c.body), "", source=_source(c, app))
            for c in self.custom.commands.values()]
        return commands

    @property
    def problems(self) -> list[str]:
        return [str(problem) for problem in self.custom.problems]

    async def run(self, slash: SlashInput) -> bool:
        """Carry out ``slash``.

        Returns:
            True when the prompt's text was used up (clear it); False to keep it for a retry.
        """
        handler = getattr(self, f"_cmd_{slash.name.replace('-', '_')}", None)
        if slash.name in {c.name for c in BUILT_IN} and handler is not None:
            result = await handler(slash.args)
            return result is not False
        custom = self.custom.commands.get(slash.name)
        if custom is not None:
            return await self._custom(custom, slash.args)
        self.app.notify(f"Unknown command /{slash.name} — /help lists the commands. Nothing was sent "
                        f"(start with // to send a message that begins with /).", severity="warning")
        return False

    # -- the built-in commands -----------------------------------------------------------------

    async def _cmd_help(self, args: str) -> None:
        self.app.action_help()

    async def _cmd_quit(self, args: str) -> None:
        await self.app.commands.quit(keep_draft=False)  # the prompt holds "/quit" itself

    async def _cmd_new(self, args: str) -> None:
        await self.app.commands.switch_session(None)

    async def _cmd_sessions(self, args: str) -> bool:
        return await self._pick_session()

    async def _cmd_resume(self, args: str) -> bool:
        if not args:
            return await self._pick_session()
        from agentcli.config_sources import data_home
        from agentcli.session.log import find_session

        try:
            entry = find_session(data_home(), args.strip())
        except Exception as error:  # noqa: BLE001 - SessionNotFound and kin: said to the user
            self.app.notify(str(error), severity="warning")
            return False
        await self.app.commands.switch_session(entry)
        return True

    async def _pick_session(self) -> bool:
        import asyncio

        from agentcli.config_sources import data_home
        from agentcli.session import log

        app = self.app
        entries = await asyncio.to_thread(log.list_sessions, data_home(), app.workspace)
        current = app.session.id if app.session is not None else None
        entries = [e for e in entries if e.meta.id != current][:50]
        if not entries:
            app.notify("No other session in this workspace yet.")
            return True
        options = [(e.meta.id, f"{e.meta.id}  {log.status(e.meta):<11} {(e.meta.title or '(no message)')[:60]}")
                   for e in entries]
        picked = await app.push_screen_wait(PickOne("Open a session (enter opens, esc closes)", options))
        if picked is not None:
            await app.commands.switch_session(next(e for e in entries if e.meta.id == picked))
        return True

    async def _cmd_model(self, args: str) -> bool:
        app = self.app
        session = app.session
        if session is None:
            app.notify("The session is not ready yet.", severity="warning")
            return False
        words = args.split()
        role = "default"
        if words and words[0] in ROLES:
            role, words = words[0], words[1:]
        if len(words) > 1:
            app.notify("Usage: /model [ROLE] MODEL, e.g. /model build openai/gpt-4.1", severity="warning")
            return False
        model = words[0] if words else await self._pick_model(role)
        if model is None:
            return True
        from agentcli.session import SessionStateError

        problem = await session.model_problem(model) if model.strip() else None
        if problem is not None:
            app.notify(f"The model was not changed: {problem}", severity="warning")
            return False
        try:
            session.set_model(model, role)
        except SessionStateError as error:
            app.notify(str(error), severity="warning")
            return False
        app.status.model = display_model(session.settings.model)
        return True

    async def _pick_model(self, role: str) -> str | None:
        session = self.app.session
        assert session is not None
        settings = session.settings
        known = [settings.model, settings.models.plan, settings.models.build, settings.models.explore,
                 *settings.models.limits]
        current = settings.model_for(role)
        options = [(m, f"{m}{'  (now)' if m == current else ''}") for m in dict.fromkeys(k for k in known if k)]
        return await self.app.push_screen_wait(PickOne(
            f"Model for the {role} role (or type /model {role} PROVIDER/MODEL for any litellm model)", options))

    async def _cmd_workflow(self, args: str) -> bool:
        import asyncio

        from agentcli.session import factory

        app = self.app
        name = args.strip()
        if not name:
            catalog = await asyncio.to_thread(factory.workflow_catalog, app.workspace)
            names = catalog.names
            picked = await app.push_screen_wait(PickOne(
                "Start a new session with the workflow (the current one keeps its own)",
                [(n, n) for n in names]))
            if picked is None:
                return True
            name = picked
        settings = app.settings.model_copy(update={"workflow": name})
        try:
            factory.workflow_for(name, app.workspace)
        except factory.SessionSetupError as error:
            app.notify(str(error), severity="warning")
            return False
        await app.commands.switch_session(None, settings=settings)
        return True

    async def _cmd_compact(self, args: str) -> bool:
        return await self.app.commands.compact(args or None)

    async def _cmd_undo(self, args: str) -> bool:
        app = self.app
        session = app.session
        if session is not None and session.can_undo_rewind:
            from agentcli.session import SessionStateError

            try:
                await session.undo_rewind()
            except SessionStateError as error:
                app.notify(str(error), severity="warning")
                return False
            app.notify("The rewind is undone: files and conversation are as they were.")
            return True
        entries = app.timeline.entries
        if app.snapshots != "on" or len(entries) < 2:
            app.notify(app.timeline.off_reason if app.snapshots != "on" else "No change to undo yet.",
                       severity="warning")
            return True
        # The newest snapshot is the tree after the last change; the one before it is the undo.
        await app.commands.restore(entries[-2])
        return True

    async def _cmd_rewind(self, args: str) -> bool:
        # The rewind puts the message back into the prompt itself: the text is not cleared after.
        self.app.prompt.input.clear()
        await self.app.commands.rewind()
        return False

    async def _cmd_diff(self, args: str) -> bool:
        app = self.app
        entries = app.timeline.entries
        if app.snapshots != "on" or not entries:
            app.notify(app.timeline.off_reason or "No snapshot yet: nothing changed.", severity="warning")
            return True
        app.timeline.against_previous = False
        app.show_snapshot(entries[0].id)
        app.notify(f"The timeline shows the working tree against #{entries[0].seq}, the session's start.")
        return True

    async def _cmd_cost(self, args: str) -> None:
        app = self.app
        session = app.session
        if session is None:
            return
        totals = session.totals
        cost = format_cost(totals.cost) + (f" ({NO_PRICE_WHY})" if totals.cost is None else "")
        cached = f", {totals.cache_read_tokens:,} from the cache" if totals.cache_read_tokens else ""
        app.notify(f"{totals.input_tokens:,} tokens in{cached}, {totals.output_tokens:,} out · cost {cost} "
                   f"· model {display_model(session.settings.model)}", title="This session", timeout=12)

    async def _cmd_theme(self, args: str) -> bool:
        app = self.app
        name = args.strip()
        if not name:
            options = [(n, f"{n}{'  (now)' if n == app.theme else ''}") for n in sorted(app.available_themes)]
            picked = await app.push_screen_wait(PickOne("Theme (remembered for next time)", options))
            if picked is None:
                return True
            name = picked
        if name not in app.available_themes:
            app.notify(f"Unknown theme {name!r}; /theme lists them.", severity="warning")
            return False
        app.switch_theme(name)
        return True

    async def _cmd_init(self, args: str) -> bool:
        return await self.app.commands.send(INIT_TASK + (f"\n\nAlso: {args}" if args else ""))

    # -- custom commands -----------------------------------------------------------------------

    async def _custom(self, command: CustomCommand, args: str) -> bool:
        app = self.app
        session = app.session
        if command.workflow and session is not None and command.workflow != session.workflow.name:
            app.notify(f"/{command.name} runs in the {command.workflow} workflow: starting a new session for it.")
            await self._cmd_workflow(command.workflow)
            session = app.session
        if command.model and session is not None and session.settings.model != command.model:
            problem = await session.model_problem(command.model)
            if problem is not None:
                app.notify(f"/{command.name} names a model that cannot work: {problem}", severity="error")
                return False
            session.set_model(command.model)
            app.status.model = display_model(session.settings.model)
        return await app.commands.send(command.expand(args))

    def help(self) -> HelpScreen:
        commands = self.reload()
        session = self.app.session
        tools = session.mcp_tool_lines() if session is not None else []
        return HelpScreen(help_text(commands, self.problems, tools))


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0][:70]


def _source(command: CustomCommand, app: AgentApp) -> str:
    try:
        return str(command.path.relative_to(app.workspace))
    except ValueError:
        return str(command.path).replace(str(Path.home()), "~", 1)
