"""The Session's snapshot timeline commands: list, diff, plan a restore, restore.

Front ends reach the snapshot store only through these (DESIGN: "they ask the Session"). The
store's own errors (an unknown snapshot, a conflict) name what went wrong and are raised as they
are; anything else is logged with its traceback and raised as :class:`CommandFailed`.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from agentcli.events import ErrorOccurred, Event, SnapshotRestored
from agentcli.session.capturing import snapshot_event
from agentcli.session.errors import CommandFailed, SessionStateError
from agentcli.session.turn import Turn
from agentcli.session.view import SessionView

if TYPE_CHECKING:
    from agentcli.snapshots import DiffResult, RestorePlan, RestoreResult, Snapshot, SnapshotStore

T = TypeVar("T")


class TimelineCommands:
    """Mixed into :class:`~agentcli.session.session.Session`, whose state these commands use."""

    id: str
    turn: Turn

    @property
    def view(self) -> SessionView:
        raise NotImplementedError

    def _emit(self, event: Event) -> None:
        raise NotImplementedError

    @property
    def snapshots_enabled(self) -> bool:
        return self.turn.snapshots is not None

    def _store(self) -> SnapshotStore:
        store = self.turn.snapshots
        if store is None:
            raise SessionStateError("snapshots are off for this session ([snapshots] enabled = false)")
        return store

    async def _in_thread(self, what: str, work: Callable[[], T]) -> T:
        """Run blocking store work off the event loop; an unexpected failure is logged and named."""
        from agentcli.snapshots import SnapshotError

        try:
            return await asyncio.to_thread(work)
        except (SnapshotError, SessionStateError):
            raise
        except Exception as error:
            name = type(error).__name__
            self._emit(ErrorOccurred(kind="snapshot", message=f"{what} failed: {name}: {error}", exception=name,
                                     traceback="".join(traceback.format_exception(error))))
            raise CommandFailed(f"{what} failed: {name}: {error}") from error

    async def timeline(self) -> list[Snapshot]:
        """This session's snapshots, oldest first."""
        store = self._store()
        return await self._in_thread("reading the timeline", lambda: store.timeline(self.id))

    async def diff(self, a: str, b: str | None = None) -> DiffResult:
        """Per-file diffs from snapshot ``a`` to snapshot ``b`` (or to the working tree)."""
        store = self._store()
        return await self._in_thread(
            "the diff", lambda: store.diff(store.resolve(a, self.id), store.resolve(b, self.id) if b else None))

    async def plan_restore(self, ref: str) -> RestorePlan:
        """Exactly which paths restoring snapshot ``ref`` would write, delete or re-mode."""
        store = self._store()
        return await self._in_thread("planning the restore", lambda: store.plan_restore(store.resolve(ref, self.id)))

    async def restore(self, ref: str, *, note: bool = True) -> RestoreResult:
        """Make the workspace match snapshot ``ref``; the state it replaces becomes a snapshot too.

        Only while the agent waits (idle, asking, paused, halted): never under a running tool.
        ``note=False`` leaves the model untold (an undone rewind puts back a view that already
        matches the files).
        """
        view = self.view
        if not view.allows("restore"):
            raise SessionStateError(f"cannot restore while the agent is {view.control}; pause it first")
        store = self._store()
        target = await self._in_thread("finding the snapshot", lambda: store.resolve(ref, self.id))
        result = await self._in_thread("the restore", lambda: store.restore(target, session_id=self.id))
        for snap in (result.undo, result.after):
            if snap is not None and snap.session_id == self.id:
                self._emit(snapshot_event(snap, [], 0.0))
        plan = result.plan
        self._emit(SnapshotRestored(target_id=target.id, target_seq=target.seq, undo_snapshot_id=result.undo.id,
                                    written=plan.writes + plan.chmods, deleted=plan.deletes))
        text = (f"The user restored the workspace to snapshot {target.seq} ({target.reason}); "
                f"{len(plan.writes)} files were written and {len(plan.deletes)} deleted. Re-read files before editing.")
        if note:
            self.turn.add_note("restored", text)
        return result
