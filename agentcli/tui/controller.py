"""The command controller: what the user's keys, prompt and palette ask of the session.

Each command checks the session's view (``session.view``) for whether it is allowed now and
calls the Session's own command: ``respond`` for the user's words (an answer, guidance or a new
task: the session knows which it waits for), ``approve``/``deny`` for a waiting tool call,
``pause``, ``restore``. The app runs these in its workers (``AgentApp.send_prompt``…).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.prompt.slash import parse_slash
from agentcli.tui.screens import ConfirmRestore
from agentcli.tui.widgets import TimelineEntry

if TYPE_CHECKING:
    from rich.text import Text

    from agentcli.config import Settings
    from agentcli.session import Mode
    from agentcli.session.log import SessionEntry
    from agentcli.session.session import Session
    from agentcli.session.view import SessionView
    from agentcli.tui.app import AgentApp

TUI_PERMISSION_MODE: Mode = "ask"
"""In the TUI a person is there to approve tool calls (headless runs default to ``edits``)."""

VERDICTS = ("once", "session", "always", "deny")
"""What the prompt sends for a tool call waiting for approval."""


def pausable(view: SessionView | None) -> bool:
    """Whether ctrl+s may pause now: while the agent works, or to stop at an approval (the call
    is not run and the user gives guidance instead).

    Never while a question waits: nothing runs, and a pause set the question aside for good
    (resuming sent the prompt's draft as guidance, the question unanswered). The answer box
    takes any words, "do something else" included.
    """
    return view is not None and view.allows("pause") and view.waiting_for != "answer"


def interruptible(view: SessionView | None) -> bool:
    """Whether esc may pause now: only while the agent works. Waiting on the user (a question,
    an approval) nothing runs, and esc has its other meanings there."""
    return view is not None and view.allows("pause") and view.running


class Commands:
    """Carries out the user's commands on the attached session; reports refusals as notifications."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app

    # -- the prompt ----------------------------------------------------------------------

    async def submit(self, text: str, mode: str = "", typed: str | None = None) -> None:
        """Send what the user typed (or picked) to whatever the session waits for.

        A ``/command`` runs here and never reaches the model; ``!command`` runs in the shell;
        anything else is a message (its @-mentions attached), queued while the agent works.

        Args:
            text: The words, or a verdict (``once``, ``session``, ``always``, ``deny``).
            mode: ``permission`` when the text is meant as a verdict (the palette's
                ``permission:`` entries): it is never sent as a message.
            typed: The prompt's text it came from, taken out once used (None: not from the
                prompt, which is left alone).
        """
        app = self.app
        session = app.session
        if (slash := parse_slash(text)) is not None:  # /help works while an approval waits, too
            if await app.slash.run(slash):
                app.prompt.consume(typed)
            return
        if session is None:
            app.notify("The session is not ready yet.", severity="warning")
            return
        from agentcli.session import SessionStateError

        try:
            if mode == "permission" and session.view.waiting_for != "approval":
                app.notify("No tool call is waiting for approval.", severity="warning")
                return
            if session.view.waiting_for == "approval":
                choice = text.strip().lower()
                if choice not in VERDICTS:
                    app.notify("Answer with y (allow once), s (this session), a (always) or n (deny).",
                               severity="warning")
                    return
                if choice == "deny":
                    await session.deny("once")
                else:
                    await session.approve(choice)  # type: ignore[arg-type]
            elif text.startswith("!") and len(text) > 1:
                await self.shell(text[1:].strip(), typed)
                return
            elif not await self.send(text[1:] if text.startswith("//") else text, typed):  # "//x" sends "/x"
                return
        except SessionStateError as error:
            app.notify(str(error), severity="warning")
            return
        app.prompt.consume(typed)

    async def send(self, text: str, typed: str | None = None) -> bool:
        """A message to the agent, its @-mentions attached: the answer, guidance, the next task,
        or (while the agent works) queued for its next step.

        Returns:
            False when nothing was sent (no session, or the session refused: said to the user).
        """
        import asyncio

        from agentcli.prompt.mentions import attach
        from agentcli.session import SessionStateError

        app = self.app
        session = app.session
        if session is None:
            app.notify("The session is not ready yet.", severity="warning")
            return False
        # What completion offered counts as meant: a path it listed that is gone is said, too.
        offered = frozenset(app.prompt.paths or ())
        attached = await asyncio.to_thread(attach, app.workspace, text, offered) if "@" in text else None
        for problem in attached.problems if attached else []:
            app.notify(problem, title="Not attached", severity="warning", timeout=10)
        extra, files = (attached.text, attached.paths) if attached else ("", [])
        if session.view.waiting_for is None:
            session.queue(text, attached=extra, files=files)
            app.prompt.show_queued(session.queued)
            app.prompt.consume(typed)
            return True
        try:
            await session.respond(text or None, attached=extra, files=files)
        except SessionStateError as error:
            app.notify(str(error), severity="warning")
            return False
        app.prompt.consume(typed)
        return True

    async def deliver_queued(self) -> None:
        """The turn ended before a step boundary took the queued messages: send them now as
        the next message (a question's answer, guidance or the next task)."""
        session = self.app.session
        if session is None or session.view.waiting_for in (None, "approval"):
            return  # an approval waits for a verdict first; the queue waits for the next boundary
        from agentcli.session import SessionStateError

        try:
            await session.send_queued()
        except SessionStateError as error:
            self.app.notify(f"The queued message was not sent, it stays queued: {error}", severity="warning")
        self.app.prompt.show_queued(session.queued)

    def requeue_to_prompt(self) -> None:
        """The run paused or halted with messages queued: they go back into the prompt (sending
        them now would resume a run the user just stopped); enter sends them as guidance."""
        session = self.app.session
        message = session.take_queued() if session is not None else None
        prompt = self.app.prompt
        prompt.show_queued([])
        if message is None:
            return
        current = prompt.input.value
        prompt.input.value = f"{message.text}\n{current}" if current.strip() else message.text
        self.app.notify("The queued message is back in the prompt: enter sends it as guidance.")

    def take_back(self) -> bool:
        """esc with messages queued: the newest comes back into the prompt to edit."""
        session = self.app.session
        if session is None or not session.queued:
            return False
        text = session.unqueue()
        prompt = self.app.prompt
        prompt.show_queued(session.queued)
        if text:
            current = prompt.input.value
            prompt.input.value = f"{text}\n{current}" if current.strip() else text
            prompt.input.focus()
        return True

    async def shell(self, command: str, typed: str | None = None) -> None:
        """``!command``: run it in the workspace as the session's bash tool would (policy and
        snapshot included); its output joins the conversation."""
        from agentcli.session import SessionStateError

        app = self.app
        session = app.session
        if session is None:
            return
        try:
            await session.run_shell(command)
        except SessionStateError as error:
            app.notify(str(error), severity="warning")
            return
        app.prompt.consume(typed)

    # -- pause and resume ----------------------------------------------------------------

    async def pause(self) -> None:
        """Pause now, even mid-stream or mid-command (ctrl+s, the palette)."""
        session = self.app.session
        if session is None:
            return
        if session.view.waiting_for == "answer":
            self.app.notify("Nothing is running: the agent waits for your answer (any words, a change of plan "
                            "too).", severity="warning")
        elif pausable(session.view):
            await session.pause("paused by the user")

    async def interrupt(self) -> None:
        """esc in the prompt or the stream: take back the newest queued message, else pause a
        running agent; waiting on the user there is nothing to stop."""
        if self.take_back():
            return
        session = self.app.session
        if session is not None and interruptible(session.view):
            await session.pause("paused by the user")

    async def resume(self) -> None:
        """Resume a paused or halted run, with the prompt's text as guidance if any."""
        session = self.app.session
        if session is None or not session.view.allows("resume"):
            return
        typed = self.app.prompt.input.text
        await self.submit(typed.strip(), typed=typed)

    async def compact(self, focus: str | None = None) -> bool:
        """Summarize the older part of the model's view now, with ``focus`` (or the prompt's
        text) saying what to keep in detail; False when it was refused (said to the user)."""
        from agentcli.session import SessionStateError

        app = self.app
        session = app.session
        if session is None:
            return False
        if not session.view.allows("compact"):
            app.notify("Only a waiting session is compacted: pause the agent first (ctrl+s).", severity="warning")
            return False
        typed = None  # /compact FOCUS: the command's own text is taken out by ``submit``
        if focus is None and parse_slash(app.prompt.input.text) is None:  # "/compact" is no focus
            typed = app.prompt.input.text
            focus = typed.strip() or None
        try:
            await session.compact(focus)
        except SessionStateError as error:
            app.notify(str(error), severity="warning")
            return False
        app.prompt.consume(typed)
        return True

    # -- snapshots -----------------------------------------------------------------------

    def undo_point(self) -> TimelineEntry | None:
        """The snapshot the last restore replaced, to restore it again; None if there is none."""
        timeline = self.app.timeline
        undo_id = timeline.undo_id
        if undo_id is None:
            self.app.notify("No restore to undo.", severity="warning")
            return None
        entry = next((e for e in timeline.entries if e.id == undo_id), None)
        return entry or TimelineEntry(undo_id, 0, "undo point", None, ())

    async def restore(self, entry: TimelineEntry) -> None:
        """Restore the workspace to a snapshot after a confirmation listing the paths.

        Runs in a worker: the confirmation is awaited with ``push_screen_wait``.
        """
        app = self.app
        session = app.session
        if session is None or app.snapshots != "on":
            app.notify(app.timeline.off_reason or "No session yet.", severity="warning")
            return
        if not session.view.allows("restore"):
            app.notify("Pause the agent before restoring files (ctrl+s).", severity="warning")
            return
        try:
            plan = await session.plan_restore(entry.id)
        except Exception as error:  # noqa: BLE001 - reported to the user
            app.notify(f"Cannot plan the restore: {error}", severity="error")
            return
        if (
            not getattr(plan, "changes", True)
            and not getattr(plan, "writes", None)
            and not getattr(plan, "deletes", None)
        ):
            app.notify(f"The workspace already matches snapshot #{entry.seq}.")
            return
        if not await app.push_screen_wait(ConfirmRestore(entry.seq, entry.label, plan)):
            return
        try:
            await session.restore(entry.id)
        except Exception as error:  # noqa: BLE001 - reported to the user
            app.notify(f"Restore failed: {error}", severity="error")

    async def rewind(self) -> None:
        """``/rewind``: pick one of your messages; the code, the conversation or both go back to
        just before it."""
        from agentcli.tui.rewind import rewind

        await rewind(self.app)

    # -- sessions ------------------------------------------------------------------------

    async def start(self, session: Session | None) -> None:
        """Show the first session: the one the app was given (resumed, with its history) or a
        new one. A new one that cannot be set up leaves the prompt read-only, saying why."""
        app = self.app
        if session is not None:
            await app.attach(session, history=True)
            return
        from agentcli.session.factory import SessionSetupError, new_session

        try:
            session = new_session(app.workspace, app.settings, default_permission_mode=TUI_PERMISSION_MODE)
        except SessionSetupError as error:
            app.notify(str(error), title="Cannot start a session", severity="error", timeout=30)
            app.prompt.mode = "readonly"
            return
        await app.attach(session)

    async def switch_session(self, entry: SessionEntry | None, *, settings: Settings | None = None) -> None:
        """Open a logged session with its history, or (``None``) start a new one (with
        ``settings`` when given: ``/workflow`` starts one on another workflow)."""
        app = self.app
        session = app.session
        if session is not None and session.view.allows("pause"):
            app.notify("Pause the agent before switching sessions (ctrl+s).", severity="warning")
            return
        if session is not None and entry is not None and entry.meta.id == session.id:
            # Reopened, it would be refused as in use: this app holds its lock.
            app.notify(f"Session {session.id} is the one open.")
            return
        from agentcli.session import factory

        try:
            if entry is None:
                new = factory.new_session(app.workspace, settings or app.settings,
                                          default_permission_mode=TUI_PERMISSION_MODE)
                await app.attach(new)
                app.notify(f"New session started ({new.workflow.name} workflow).")
                return
            opened = factory.resume_session(entry, self._settings_for(entry),
                                            default_permission_mode=TUI_PERMISSION_MODE)
        except Exception as error:  # noqa: BLE001 - SessionSetupError, ConfigError: shown
            app.notify(str(error), title="Cannot open the session", severity="error", timeout=15)
            return
        await app.attach(opened, history=True)
        app.notify(f"Opened session {opened.id}.")

    def _settings_for(self, entry: SessionEntry) -> Settings:
        from agentcli.config import load_settings
        from agentcli.session import factory

        return load_settings(Path(entry.meta.workspace), overrides=factory.resume_settings_overrides(entry, {}))

    # -- quitting ------------------------------------------------------------------------

    async def quit(self, *, keep_draft: bool = True) -> None:
        """Leave the app with code 0; a run in progress is paused first, so its log says so.

        The widgets stop following the session before it is paused: the pause's events (a reply
        cut off, the turn's end) go to the log only, never to a stream that is being torn down.
        A draft in the prompt goes into the prompt history (``keep_draft``; ``/quit`` has none).
        """
        kept = await self.keep_draft() if keep_draft else None
        bridge = self.app.bridge
        session = bridge.session
        if session is not None:
            bridge.stop_following()
            # A question stays waiting in the log (a resume asks it again): see ``pausable``.
            if pausable(session.view):
                try:
                    await session.pause("the app was closed")
                except Exception as error:  # noqa: BLE001 - closing anyway; the log shows the cut
                    self.app.log.error(f"pausing on quit failed: {error!r}")
            bridge.detach()
        self.app.exit(0, message=kept)

    async def keep_draft(self) -> Text | None:
        """Put unsent prompt text into the prompt history, where ↑ finds it in any later session
        of this workspace; returns what to say on exit (None: there was no draft).

        The history rather than the session log: a draft is the user's, not the conversation's;
        it belongs to the workspace (a new session finds it too) and ↑ is where people look.
        If it cannot be kept there, the words are printed on exit instead: never lost.
        """
        import asyncio

        from rich.text import Text

        prompt = self.app.prompt
        draft = prompt.draft.strip()
        if not draft:
            return None
        history = prompt.history
        if history is None:  # quit before it was loaded
            from agentcli.prompt.history import PromptHistory, history_path

            history = await asyncio.to_thread(PromptHistory, history_path(self.app.workspace))
        await asyncio.to_thread(history.add, draft)
        if history.problem is None and history.entries and history.entries[-1] == draft:
            return Text("agentcli: your unsent prompt is kept in the prompt history: "
                        "↑ in the prompt brings it back.")
        why = history.problem or "too long for the history"
        return Text(f"agentcli: your unsent prompt could not be kept ({why}); here it is:\n\n{draft}")
