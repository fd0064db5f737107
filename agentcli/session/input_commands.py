"""The Session's commands for what the user types besides a task: messages queued while the
agent works, ``!command``, ``/rewind`` and its undo, ``/model``.

Mixed into :class:`~agentcli.session.session.Session` (as the timeline commands are), so the
front ends still find every command on the session; kept here so session.py stays readable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.config import Settings
from agentcli.events import (
    ConversationRewound,
    Event,
    ModelChanged,
    QueueChanged,
    QueuedMessage,
    ToolCallFinished,
    UserMessage,
    joined_queue,
)
from agentcli.llm.types import Message
from agentcli.session.errors import SessionStateError
from agentcli.session.rewind import RewindPoint, RewindTracker
from agentcli.session.turn import Turn
from agentcli.session.view import SessionView

if TYPE_CHECKING:
    from agentcli.snapshots import RestoreResult


class InputCommands:
    """Mixed into the Session, whose state these commands use."""

    turn: Turn
    settings: Settings
    rewind_points: RewindTracker
    _rewind_undo: tuple[ConversationRewound, list[Message], str | None] | None

    if TYPE_CHECKING:  # the Session's (and its timeline commands'), declared for the type checker
        # only: a stub here would come before the real ones in the Session's method order.
        @property
        def view(self) -> SessionView: ...

        @property
        def snapshots_enabled(self) -> bool: ...

        def _emit(self, event: Event) -> None: ...

        async def start(self) -> None: ...

        async def restore(self, ref: str, *, note: bool = True) -> RestoreResult: ...

        async def respond(self, text: str | None, *, attached: str = "", files: list[str] | None = None) -> None: ...

    # -- messages typed while the agent works --------------------------------------------

    def queue(self, text: str, *, attached: str = "", files: list[str] | None = None) -> None:
        """Hold a message typed while the agent works; it joins the conversation at the next step
        boundary (before the next model call). A turn that ends first leaves it queued for the
        front end to send (:meth:`take_queued`)."""
        self.turn.queued.append(self.turn.user_message(text, attached, files, queued=True))
        self._log_queue()

    @property
    def queued(self) -> list[str]:
        """The texts of the messages still queued, oldest first."""
        return [message.text for message in self.turn.queued]

    def unqueue(self) -> str | None:
        """Take back the newest queued message (``esc``); None if nothing is queued."""
        if not self.turn.queued:
            return None
        text = self.turn.queued.pop().text
        self._log_queue()
        return text

    def take_queued(self) -> QueuedMessage | None:
        """Every queued message as one, out of the queue (a pause puts them back into the prompt)."""
        messages = list(self.turn.queued)
        self.turn.queued.clear()
        if not messages:
            return None
        self._log_queue()
        return joined_queue(messages)

    async def send_queued(self) -> bool:
        """Send every queued message as the user's next words (:meth:`respond`): the turn ended
        before a step boundary took them. False if none was queued.

        The log keeps them queued until they are sent, and a resumed log that has the message
        but not the queue's change reads them as delivered (``rebuild``): a crash in between
        loses nothing and sends nothing twice.

        Raises:
            SessionStateError: what :meth:`respond` raises; the messages stay queued.
        """
        messages = list(self.turn.queued)
        if not messages:
            return False
        message = joined_queue(messages)
        # Out of the queue while the turn starts, or its first step boundary would send them again.
        self.turn.queued.clear()
        try:
            await self.respond(message.text, attached=message.attached, files=message.files)
        except BaseException:
            self.turn.queued.extendleft(reversed(messages))
            raise
        self._log_queue()
        return True

    def restore_queue(self, messages: list[QueuedMessage]) -> None:
        """Messages still queued when the session's process ended, as its log kept them."""
        self.turn.queued.extend(UserMessage(text=m.text, attached=m.attached, files=list(m.files), queued=True)
                                for m in messages)

    def _log_queue(self) -> None:
        # Logged so a session killed while messages wait gets them back on resume.
        self._emit(QueueChanged(messages=[QueuedMessage(m.text, m.attached, list(m.files)) for m in self.turn.queued]))

    async def run_shell(self, command: str) -> ToolCallFinished:
        """``!command``: run a shell command for the user between turns (policy, sandbox and
        snapshots as for the agent's bash calls); the model reads its output at its next request.

        Raises:
            SessionStateError: the agent is working, or a deny rule refuses the command.
        """
        from agentcli.session.shell import run_user_command

        await self.start()
        view = self.view
        if view.waiting_for is None:
            raise SessionStateError(f"the agent is {view.control}: pause it first (ctrl+s), then run the command")
        return await run_user_command(self.turn, command)

    # -- rewinding ------------------------------------------------------------------------

    async def rewind(self, number: int, *, code: bool = True, conversation: bool = True) -> RewindPoint:
        """Go back to just before user message ``number``: the code to the snapshot taken before
        its turn changed anything, the model's view to before the message, or both.

        The log keeps everything (a ``ConversationRewound`` and a ``SnapshotRestored``), and
        :meth:`undo_rewind` takes it back while nothing new has been said.

        Raises:
            SessionStateError: the agent works or waits for an answer, no such message, or the
                part asked for cannot go back (compacted away, no snapshot).
        """
        await self.start()
        view = self.view
        if view.waiting_for not in ("task", "guidance"):
            raise SessionStateError(f"cannot rewind while the agent is {view.control}; "
                                    "pause it (or answer its question) first")
        point = next((p for p in self.rewind_points.points if p.number == number), None)
        if point is None:
            raise SessionStateError(f"no message #{number} to rewind to")
        if conversation and point.message_index is None:
            raise SessionStateError(f"message #{number} was compacted into a summary: only the code can go back")
        if code and (point.snapshot_id is None or not self.snapshots_enabled):
            raise SessionStateError("no snapshot from before that message (snapshots off?): only the conversation "
                                    "can go back")
        dropped: list[Message] = []
        event: ConversationRewound | None = None
        if conversation:
            assert point.message_index is not None
            event = ConversationRewound(point=number, text=point.text, kept=point.message_index)
            dropped = self.turn.messages.rewind(point.message_index)
            self._emit(event)
        elif code:
            # Logged before the restore (and its note to the model), as a rewind of the
            # conversation is: a resume rebuilds the undo from the two events in this order.
            event = ConversationRewound(point=number, text=point.text, kept=len(self.turn.messages), code_only=True)
            self._emit(event)
        assert event is not None
        undo_snapshot = None
        if code:
            assert point.snapshot_id is not None
            undo_snapshot = (await self.restore(point.snapshot_id)).undo.id
        self._rewind_undo = (event, dropped, undo_snapshot)
        return point

    @property
    def can_undo_rewind(self) -> bool:
        return self._rewind_undo is not None

    async def undo_rewind(self) -> None:
        """Put back what the last rewind took: the files as they were, and the messages.

        Raises:
            SessionStateError: no rewind to undo (something was said since), or the agent works.
        """
        if self._rewind_undo is None:
            raise SessionStateError("no rewind to undo")
        view = self.view
        if view.waiting_for not in ("task", "guidance"):
            raise SessionStateError(f"cannot undo the rewind while the agent is {view.control}; pause it first")
        event, dropped, undo_snapshot = self._rewind_undo
        self._rewind_undo = None
        if dropped:
            self.turn.messages.rewind(event.kept, dropped)
            self._emit(ConversationRewound(point=event.point, text=event.text, kept=event.kept,
                                           restored=[dict(m) for m in dropped], undo=True))
        else:
            if len(self.turn.messages) > event.kept:
                self.turn.messages.rewind(event.kept)  # only the code went back: drop the note about it
            self._emit(ConversationRewound(point=event.point, text=event.text, kept=event.kept,
                                           code_only=event.code_only, undo=True))
        if undo_snapshot is not None:
            await self.restore(undo_snapshot, note=False)

    # -- switching the model ---------------------------------------------------------------

    async def model_problem(self, model: str) -> str | None:
        """Why ``model`` cannot serve this session, in one line, or None: checked before
        :meth:`set_model` logs it (a resumed session would inherit a model that cannot work).
        litellm's provider table is read on a thread (its first import takes seconds)."""
        import asyncio

        from agentcli.llm.check import unknown_model
        from agentcli.llm.litellm_client import LiteLLMClient
        from agentcli.session.factory import REPLAY_PREFIX

        model = model.strip()
        if model.startswith(REPLAY_PREFIX):
            if isinstance(self.turn.model_client, LiteLLMClient):
                return ("a recording plays only in a session started with it "
                        f"(agentcli -m {model}); this one talks to a model server")
            return None
        return await asyncio.to_thread(unknown_model, model, self.settings.api_base)

    def set_model(self, model: str, role: str = "default") -> None:
        """Use ``model`` (a litellm string) for ``role`` for the rest of this session, resumed too.

        Raises:
            SessionStateError: an unknown role, or an empty model string.
        """
        model = model.strip()
        if role not in ("default", "plan", "build", "explore"):
            raise SessionStateError(f"unknown model role {role!r}: use default, plan, build or explore")
        if not model:
            raise SessionStateError("give a model, e.g. anthropic/claude-sonnet-4-5")
        if role == "default":
            settings = self.settings.model_copy(update={"model": model})
        else:
            settings = self.settings.model_copy(
                update={"models": self.settings.models.model_copy(update={role: model})})
        self.settings = settings
        self.turn.settings = settings
        self._emit(ModelChanged(role=role, model=model))

