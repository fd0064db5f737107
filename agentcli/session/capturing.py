"""The work of ``capturingBaseline`` and ``capturingSnapshot``: write the workspace's tree.

Before a turn, the capture records what changed while the agent waited (the user's own edits,
a restore, a session resumed after a week); after a call that may have changed files, it
records what the call did, also when a pause or a failure cut the call short. An unchanged
tree adds no timeline entry, so either costs nothing on the timeline when nothing changed. A
store that fails is reported and the run goes on: the user sees the error and that the step
could not be snapshotted.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from agentcli.events import ErrorOccurred, FileChange, Notice, SnapshotCaptured, ToolCallRequest
from agentcli.session.outcomes import CallOutcome, CaptureOutcome
from agentcli.session.turn import Turn

if TYPE_CHECKING:
    from agentcli.snapshots import CaptureResult, Snapshot


def snapshot_event(snap: Snapshot, skipped: list[str], duration_s: float) -> SnapshotCaptured:
    return SnapshotCaptured(
        snapshot_id=snap.id,
        seq=snap.seq,
        tree=snap.tree,
        reason=snap.reason,
        tool_call_id=snap.tool_call_id,
        tool_name=snap.tool_name,
        files=[FileChange(path=f.path, status=f.status, added=f.added, removed=f.removed) for f in snap.files],
        skipped=skipped,
        duration_s=round(duration_s, 6),
    )


class Capturing:
    """Captures the workspace for the two capturing states."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    async def capture_baseline(self) -> CaptureOutcome:
        """Invoked on entering ``capturingBaseline``, before a turn's first model call."""
        turn = self.turn
        turn.start_work("capturing the workspace before the turn")
        if turn.captures == 0:
            reason = "session resumed" if turn.resumed else "session start"
        else:
            reason = "changed between turns"
        # A turn's start is where users restore to most: record modes and empty folders too.
        outcome = CaptureOutcome(await self.capture(reason, record_layout=True))
        turn.end_work()
        return outcome

    async def capture_after_call(self, data: CallOutcome) -> CaptureOutcome:
        """Invoked on entering ``capturingSnapshot``, with the call that may have changed files."""
        turn = self.turn
        call, result = data.call, data.result
        turn.start_work(f"capturing the workspace after {call.name}")
        # A write says exactly what it changed; after a command anything may have.
        hint = list(result.files_changed) if data.tool.changes_files == "when_ok" and result.files_changed else None
        # After a command, the store's watcher knows which paths it touched (or walks the tree).
        watched = data.tool.changes_files == "always"
        captured = await self.capture(f"after {call.name}", call=call, paths_hint=hint, watched=watched)
        outcome = CaptureOutcome(captured, after=data)
        turn.end_work()
        return outcome

    async def finish_capture(self) -> None:
        """On leaving a capturing state: a capture a pause cut short still records what the store
        wrote (see :meth:`capture`) before the chart goes on and the turn's end is announced."""
        await self.turn.settle()

    async def capture_cut_off(self, call: ToolCallRequest, how: str) -> None:
        """After a call that was stopped (``how``: interrupted, failed) while it may have changed
        files: the watcher's hints spare the tree walk, so the pause is not held up by it."""
        await self.capture(f"after {call.name} ({how})", call=call, watched=True)

    async def capture(
        self,
        reason: str,
        *,
        call: ToolCallRequest | None = None,
        paths_hint: list[str] | None = None,
        watched: bool = False,
        record_layout: bool = False,
    ) -> SnapshotCaptured | None:
        """Capture a snapshot off the event loop; a store failure is reported, not raised."""
        turn = self.turn
        store = turn.snapshots
        if store is None:
            return None
        turn.captures += 1
        work = asyncio.ensure_future(asyncio.to_thread(
            store.capture,
            session_id=turn.session_id,
            reason=reason,
            tool_call_id=call.id if call else None,
            tool_name=call.name if call else None,
            paths_hint=paths_hint,
            record_layout=record_layout,
            watched=watched,
        ))
        try:
            await asyncio.wait([work])  # wait, not await: a pause cancels this task, never the capture
        except asyncio.CancelledError:
            # A pause while the store writes: the thread cannot be stopped and its snapshot
            # lands in the store all the same, so it is recorded too (the state's exit waits
            # for it), or the timeline the user undoes from would lack what the call did.
            await asyncio.wait([work])
            self._record(work)
            raise
        return self._record(work)

    def _record(self, work: asyncio.Future[CaptureResult]) -> SnapshotCaptured | None:
        """The capture's outcome as events: the snapshot, the paths skipped, or the failure."""
        from agentcli.snapshots import SnapshotError

        turn = self.turn
        try:
            captured = work.result()
        except (SnapshotError, OSError) as error:
            turn.emit(
                ErrorOccurred(kind="snapshot", message=f"snapshot failed: {error}", exception=type(error).__name__)
            )
            return None
        skipped = [f"{item.path} ({item.reason})" for item in captured.skipped]
        snap = captured.snapshot
        if snap is None:
            if skipped:
                turn.emit(Notice(kind="snapshot_skipped", text="not snapshotted: " + ", ".join(skipped[:10]),
                                 severity="warning"))
            return None
        event = snapshot_event(snap, skipped, captured.duration_s)
        turn.emit(event)
        return event
