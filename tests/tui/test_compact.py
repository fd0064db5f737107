"""Compacting the model's view from the TUI: the palette's ``context: compact``, with the prompt's
text as what the summary should keep."""

from __future__ import annotations

from pathlib import Path

from agentcli.events import ContextCompacted
from agentcli.llm.replay import RecordedCall, RecordedTurn, Recording, ReplayModel
from agentcli.tui.widgets import NoticeBlock
from tests.tui.helpers import make_app, make_session, wait_for, wait_idle


def _model() -> ReplayModel:
    turns = [RecordedTurn(text="Reading.", tool_calls=[RecordedCall(name="list_files", arguments={})]),
             RecordedTurn(text="Done.", tool_calls=[RecordedCall(name="complete", arguments={"summary": "listed"})]),
             RecordedTurn(text="The user asked for a listing; it was made. Nothing is in progress.")]
    return ReplayModel(Recording(turns=turns))


async def test_compact_from_the_palette_shows_a_marker_and_keeps_the_session_idle(project: Path) -> None:
    session = make_session(project, _model())
    compacted: list[ContextCompacted] = []
    session.subscribe(lambda e: compacted.append(e) if isinstance(e, ContextCompacted) else None)
    # A task long enough that the summary is shorter than the part it replaces (a summary that
    # would grow the view is not used).
    task = "list the files; " + "say which of them are sources and which are tests. " * 8
    app = make_app(project, session, initial_prompt=task)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot, app)
        app.prompt.input.value = "the listing"
        app.action_compact()
        await wait_for(pilot, lambda: bool(compacted), what="the compaction")
        await wait_for(pilot, lambda: any("context compacted" in block.render().plain
                                          for block in app.query(NoticeBlock)), what="the marker")
        await wait_for(pilot, lambda: app.view is not None and app.view.control == "idle", what="idle again")
        assert compacted[0].reason == "manual"
        assert app.prompt.input.value == ""  # the focus was sent with the request
        first = session.turn.messages[0]["content"]
        assert first.startswith("[Summary of the earlier part") and "listing" in first
