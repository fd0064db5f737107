"""Building TUI apps on real Sessions for tests: replayed or gated models at the network edge only."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.containers import Vertical
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static

from agentcli.config import RetrySettings, Settings, data_home
from agentcli.llm.replay import RecordedCall, RecordedTurn, Recording, ReplayModel
from agentcli.llm.types import ModelRequest, ModelResponse, ReasoningChunk, StreamItem, TextChunk, Usage
from agentcli.session import Session
from agentcli.session.log import SessionLog
from agentcli.tui.app import AgentApp
from agentcli.tui.widgets._block_styles import BlockStyles
from agentcli.workflow import builtin_workflow
from tests.support.waiting import DEADLINE_S, POLL_S

DEMO = Path(__file__).resolve().parents[2] / "agentcli" / "data" / "demo"
SESSION_ID = "5e55a1d0c0de"
"""A fixed session id, so snapshots do not change from run to run."""

Turn = tuple[str, list[tuple[str, dict[str, Any] | str]]]


def frozen_clock() -> float:
    """A clock that never moves: every elapsed time reads 0.0s."""
    return 1000.0


def recording(*turns: Turn, chunk_chars: int = 12) -> Recording:
    return Recording(
        model="replay/test",
        chunk_chars=chunk_chars,
        turns=[
            RecordedTurn(text=text, tool_calls=[RecordedCall(name=n, arguments=a) for n, a in calls], usage=(1200, 40))
            for text, calls in turns
        ],
    )


class GatedModel:
    """Plays a recording, but holds turn ``gate_turn`` after its first ``gate_after`` characters.

    Stands in for a model that is mid-reply, so a test can look at (or pause) a live stream.
    """

    def __init__(self, rec: Recording, *, gate_turn: int = 0, gate_after: int = 40, delay_s: float = 0.0) -> None:
        self.inner = ReplayModel(rec, chunk_delay_s=delay_s)
        self.gate_turn = gate_turn
        self.gate_after = gate_after
        self.gate = asyncio.Event()
        self.calls = 0
        self.reached_gate = False
        self.sent_before_gate = 0
        """Characters of text the gated turn streamed before it stopped at the gate."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        turn = self.calls
        self.calls += 1
        sent = 0
        async for item in self.inner.stream(request):
            if turn == self.gate_turn and isinstance(item, TextChunk):
                if sent >= self.gate_after and not self.gate.is_set():
                    self.sent_before_gate = sent
                    self.reached_gate = True
                    await self.gate.wait()
                sent += len(item.text)
            elif turn == self.gate_turn and isinstance(item, ModelResponse) and not self.gate.is_set():
                self.reached_gate = True
                await self.gate.wait()
            yield item


class ThinkingModel:
    """Makes a scripted model a thinking one: a turn's reasoning streams first, then the reply the
    inner model (``ReplayModel``, ``GatedModel``) plays.

    With ``hold_turn`` set, that turn stops after its reasoning until ``gate`` is set: a model
    still reasoning, for a test to look at (or interrupt).
    """

    def __init__(self, inner: ReplayModel | GatedModel, thoughts: dict[int, str], *,
                 hold_turn: int | None = None, chunk_chars: int = 16) -> None:
        self.inner = inner
        self.thoughts = thoughts
        """The reasoning of each turn, by its index in the recording."""
        self.hold_turn = hold_turn
        self.chunk_chars = chunk_chars
        self.gate = asyncio.Event()
        self.held = False
        """The held turn has streamed all its reasoning and waits at the gate."""
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        turn = self.calls
        self.calls += 1
        thought = self.thoughts.get(turn, "")
        for start in range(0, len(thought), self.chunk_chars):
            yield ReasoningChunk(thought[start : start + self.chunk_chars])
        if turn == self.hold_turn:
            self.held = True
            await self.gate.wait()
        async for item in self.inner.stream(request):
            yield dataclasses.replace(item, reasoning=thought) if isinstance(item, ModelResponse) else item


def make_session(
    workspace: Path,
    client: Any,
    *,
    session_id: str = SESSION_ID,
    record: bool = False,
    data_dir: Path | None = None,
    snapshots: bool = False,
    permission_mode: str | None = None,
    workflow: str = "single",
    **settings: Any,
) -> Session:
    """A real Session on a scripted model (optionally logged and snapshotted, like the factory does)."""
    fields: dict[str, Any] = {"retry": RetrySettings(attempts=2, base_delay_s=0.01), "model": "replay:test.json",
                              **settings}
    extra: dict[str, Any] = {}
    if snapshots:
        from agentcli.session import factory

        extra["snapshots"] = factory.snapshot_store(workspace, Settings(**fields), data_dir or data_home())
    if permission_mode is not None:
        extra["default_permission_mode"] = permission_mode
    session = Session(
        workspace=workspace,
        settings=Settings(**fields),
        workflow=builtin_workflow(workflow),
        model_client=client,
        session_id=session_id,
        **extra,
    )
    # Tool durations show on screen: a fixed clock keeps screenshots the same on a loaded machine.
    session.turn.clock = frozen_clock
    if record:
        assert data_dir is not None
        log = SessionLog.create(data_dir, session_id, session.workspace, model=fields["model"], workflow=workflow)
        session.subscribe(log)
        session.log = log
    return session


async def logged_then_resumed(workspace: Path, rec: Recording, recording_file: Path, task: str, *,
                              session_id: str = "01d5e5510000", **kwargs: Any) -> Session:
    """Run ``task`` to the end of its turn in a logged session, close it, and resume it as
    ``agentcli resume`` does (``factory.resume_session``): nothing has run in the new one yet."""
    from agentcli.session import factory
    from agentcli.session.log import find_session

    model = write_recording(recording_file, rec)
    old = make_session(workspace, ReplayModel(rec), session_id=session_id, record=True, data_dir=data_home(),
                       model=model, **kwargs)
    await old.run_turn(task)
    old.close()
    entry = find_session(data_home(), session_id)
    settings = Settings(**{**factory.resume_settings_overrides(entry, {}), "retry": old.settings.retry})
    return factory.resume_session(entry, settings, default_permission_mode="ask")


def logged_outcomes(session: Session) -> list[tuple[str, str]]:
    """(outcome, reason) of every turn's end in the session's log."""
    from agentcli.events import TurnEnded
    from agentcli.session.log import read_events

    assert session.log is not None
    return [(e.outcome, e.reason) for e in read_events(session.log.directory) if isinstance(e, TurnEnded)]


def make_app(workspace: Path, session: Session | None, settings: Settings | None = None, **kwargs: Any) -> AgentApp:
    kwargs.setdefault("clock", frozen_clock)
    kwargs.setdefault("warm_up", False)
    if settings is None:
        settings = session.settings if session is not None else Settings(model="replay:none.json")
    return AgentApp(workspace=workspace, settings=settings, session=session, **kwargs)


def write_recording(path: Path, rec: Recording) -> str:
    """Save a recording and return the model string that replays it."""
    path.write_text(rec.model_dump_json(), encoding="utf-8")
    return f"replay:{path}"


def demo_project(target: Path) -> Path:
    shutil.copytree(DEMO / "project", target, dirs_exist_ok=True)
    return target


async def wait_for(pilot: Pilot, predicate: Callable[[], object], timeout: float = DEADLINE_S, what: str = "") -> None:
    """Let the app run until ``predicate`` holds (failing the test after ``timeout`` seconds).

    The deadline is generous on purpose: it is how long a condition that should hold may take on
    a loaded machine, not how long it takes here.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or predicate}")
        await pilot.pause(POLL_S)  # the poll interval: the app runs between checks


async def drain(pilot: Pilot) -> None:
    """Wait until every widget on the screen has handled the messages already posted to it.

    That is what ``pilot.pause()`` without a delay waits for (a marker at the end of each
    widget's queue), before it also lets the process go idle: no clock is involved. Use it
    before checking that something did *not* happen, which no condition can wait for.
    """
    await pilot.pause()


async def wait_idle(pilot: Pilot, app: AgentApp, timeout: float = DEADLINE_S) -> None:
    """Wait until the session's turn has ended and the widgets have drawn it."""
    await wait_for(pilot, lambda: app.session_ready, timeout, "the session to attach")
    await wait_for(
        pilot,
        lambda: app.session is not None and app.session.last_turn is not None
        and app.view is not None and app.view.waiting_for in ("task", "guidance", "answer"),
        timeout,
        "the turn to end",
    )
    await wait_for(pilot, lambda: not app.conversation.rendering, timeout, "the streamed text to render")
    # The turn's end reached the app; the events before it may still be queued at the widgets.
    await drain(pilot)


def palette_highlights(app: App[Any], text: str) -> bool:
    """The command palette has finished searching and its highlighted entry contains ``text``.

    The palette searches in a worker and adds hits in batches: enter pressed before that picks
    whatever was first, or nothing.
    """
    from textual.command import CommandList, CommandPalette

    palette = app.screen
    if not isinstance(palette, CommandPalette):
        return False
    if any(w.group == CommandPalette._GATHER_COMMANDS_GROUP and not w.is_finished for w in app.workers):
        return False
    hits = palette.query_one(CommandList)
    index = hits.highlighted
    return index is not None and text in hits.get_option_at_index(index).prompt.plain


def pane_titles_current(app: AgentApp) -> bool:
    """The tool-call and snapshot pane titles count what the panes show.

    The app recounts them on a half-second tick (and as calls and snapshots arrive, before the
    timeline has added the entry), so a count can lag what the pane lists for up to a tick.
    """
    titles = {title.id: title.render().plain for title in app.query(".pane-title").results(Static)}
    tools, timeline = titles.get("tools-title"), titles.get("timeline-title")
    snapshots = str(len(app.timeline.entries)) if app.snapshots == "on" else app.snapshots
    return tools == f"tool calls ({len(app.calls)})" and timeline == f"snapshots ({snapshots})"


def footer_current(app: AgentApp) -> bool:
    """The footer offers what the app allows now: Resume when it may resume, else Pause.

    The footer recomposes after the next refresh once the bindings change, not when the view does.
    """
    from textual.widgets._footer import FooterKey

    keys = {key.description for key in app.query(FooterKey)}
    resumable = app.check_action("resume", ()) is True
    return ("Resume" in keys) == resumable and ("Pause" in keys) == (not resumable)


def screen_settled(app: AgentApp) -> bool:
    """Everything the app draws after the fact shows the session as it is now: the pane titles,
    the diff preview and the footer (the snapshots compare the whole screen)."""
    return app.session_ready and pane_titles_current(app) and preview_shown(app) and footer_current(app)


async def wait_streamed_text_shown(pilot: Pilot, app: AgentApp) -> None:
    """Wait until every character streamed so far is in its Markdown widget, for a reply that is
    still streaming (``wait_idle`` waits for a finished one).

    A slice leaves the stream's pending text just before its append starts (and takes the
    widget's lock), so "nothing pending, nothing appending" is checked again after the widgets
    have handled what was queued: by then an append that was about to start has the lock.
    """
    conversation = app.conversation

    def appended() -> bool:
        streams = [s for s in conversation._draining.values() if not s.done]
        return conversation.pending_chars == 0 and not any(s.markdown.lock.is_locked for s in streams)

    while True:
        await wait_for(pilot, appended, what="the streamed text to be in its widget")
        await drain(pilot)
        if appended():
            return


def preview_shown(app: AgentApp) -> bool:
    """The timeline's diff preview shows the selected snapshot (computed in a worker, after a pause)."""
    timeline = app.timeline
    entry = timeline.selected
    if timeline.differ is None or entry is None:
        return True
    title = app.query_one("#diff-text", Static).render().plain.partition("\n")[0]
    # "#5 → working tree", or "#4 → #5" against the previous snapshot
    return title == f"#{entry.seq} → working tree" or title.endswith(f" → #{entry.seq}")


__all__ = [
    "DEMO",
    "SESSION_ID",
    "GatedModel",
    "ThinkingModel",
    "Usage",
    "demo_project",
    "drain",
    "footer_current",
    "frozen_clock",
    "logged_outcomes",
    "logged_then_resumed",
    "make_app",
    "make_session",
    "palette_highlights",
    "pane_titles_current",
    "preview_shown",
    "recording",
    "screen_settled",
    "write_recording",
    "wait_for",
    "wait_idle",
    "wait_streamed_text_shown",
]


class BlockHost(Vertical):
    """A column that styles the finished agent messages in it, as the Conversation does
    (``FinishedAgentBlock`` reads its component classes from the nearest ``block_styles``)."""

    DEFAULT_CSS = "BlockHost { height: 1fr; }"

    def __init__(self, *children: Widget, id: str | None = None) -> None:
        self.block_styles = BlockStyles()
        super().__init__(self.block_styles, *children, id=id)
