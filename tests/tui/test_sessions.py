"""Sessions: a new one on start, others from the command palette, panes that fit 80x24."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from agentcli.config import Settings, data_home
from agentcli.llm.replay import ReplayModel
from agentcli.session.log import list_sessions
from agentcli.tui.widgets import AgentBlock, UserBlock
from tests.tui.helpers import (
    drain,
    make_app,
    make_session,
    palette_highlights,
    recording,
    wait_for,
    wait_idle,
    write_recording,
)

REC = recording(("Reading it.", [("read_file", {"path": "textstats.py"})]),
                ("All good.", [("complete", {"summary": "looked"})]))


async def test_with_no_session_the_app_starts_a_new_recorded_one(project: Path, tmp_path: Path) -> None:
    model = write_recording(tmp_path / "rec.json", REC)
    app = make_app(project, None, settings=Settings(model=model), initial_prompt="look at it")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(pilot, app)
        assert app.session is not None and app.session.last_turn is not None
        assert app.session.last_turn.outcome == "completed"
        session_id = app.session.id
    [entry] = list_sessions(data_home())
    assert entry.meta.id == session_id and entry.meta.title == "look at it"


async def test_a_session_from_the_palette_opens_with_its_history(project: Path, tmp_path: Path) -> None:
    model = write_recording(tmp_path / "rec.json", REC)
    old = make_session(project, ReplayModel(REC), session_id="01d5e5510000", record=True, data_dir=data_home(),
                       model=model)
    await old.run_turn("what does textstats do?")
    old.close()

    app = make_app(project, None, settings=Settings(model=model))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the new session")
        assert app.session is not None and app.session.id != "01d5e5510000"
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: len(app.screen_stack) > 1, what="the palette")
        await pilot.press(*"session: open 01d5")
        await wait_for(pilot, lambda: palette_highlights(app, "01d5"), what="the palette to find the session")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session is not None and app.session.id == "01d5e5510000", what="switch")
        await wait_for(pilot, lambda: app.session_ready, what="the session to attach")
        await drain(pilot)
        assert [b.render().plain for b in app.query(UserBlock)] == ["what does textstats do?"]
        assert [b.source for b in app.query(AgentBlock)] == ["Reading it.", "All good."]
        assert app.tools.option_list.option_count == 2
        assert app.graph.counts[("idle", "thinking")] == 1
        assert app.status.session_id == "01d5e5510000"


HOLD_THE_LOG = """
import sys
from pathlib import Path
from agentcli.session.log import SessionLog
log = SessionLog.reopen(Path(sys.argv[1]))
print("open", flush=True)
sys.stdin.read()  # until the test closes the pipe
log.close()
"""


async def test_a_session_another_process_writes_is_refused_with_a_notice(project: Path, tmp_path: Path) -> None:
    model = write_recording(tmp_path / "rec.json", REC)
    old = make_session(project, ReplayModel(REC), session_id="01d5e5510000", record=True, data_dir=data_home(),
                       model=model)
    await old.run_turn("what does textstats do?")
    old.close()
    [entry] = list_sessions(data_home())
    holder = await asyncio.create_subprocess_exec(sys.executable, "-c", HOLD_THE_LOG, str(entry.directory),
                                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdin is not None and holder.stdout is not None
        assert await holder.stdout.readline() == b"open\n"
        before = (entry.directory / "events.jsonl").read_bytes()
        app = make_app(project, None, settings=Settings(model=model))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.session_ready, what="the new session")
            current = app.session
            await pilot.press("ctrl+p")
            await wait_for(pilot, lambda: len(app.screen_stack) > 1, what="the palette")
            await pilot.press(*"session: open 01d5")
            await wait_for(pilot, lambda: palette_highlights(app, "01d5"), what="the palette to find the session")
            await pilot.press("enter")
            refusal = f"session 01d5e5510000 is in use by another agentcli (pid {holder.pid})"
            await wait_for(pilot, lambda: any(refusal in str(n.message) for n in app._notifications),
                           what="the refusal")
            assert app.session is current and app.session_ready, "the open session stays open"
        assert (entry.directory / "events.jsonl").read_bytes() == before
    finally:
        holder.stdin.close()
        await holder.wait()
    assert holder.returncode == 0


async def test_ctrl_n_starts_a_new_session(project: Path, tmp_path: Path) -> None:
    model = write_recording(tmp_path / "rec.json", REC)
    app = make_app(project, None, settings=Settings(model=model), initial_prompt="first")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(pilot, app)
        first = app.session
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: app.session is not first and app.session_ready, what="a new session")
        assert not app.query(UserBlock) and not app.query(AgentBlock)
        assert app.graph.counts == {} and not app.graph.trail, "the graph starts afresh"
    assert len(list_sessions(data_home())) == 2


async def test_at_80x24_the_side_panes_open_on_demand(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(REC)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        sidebar = app.query_one("#sidebar")
        assert app.screen.has_class("-narrow") and not sidebar.display
        assert app.conversation.size.width >= 78
        await pilot.press("ctrl+b")
        await drain(pilot)
        assert sidebar.display
        await pilot.press("ctrl+g")
        await drain(pilot)
        assert not app.query_one("#graph-pane").display
        await pilot.press("f2")
        await drain(pilot)
        assert app.focused is app.timeline.option_list
        await pilot.press("f4")
        assert app.focused is app.prompt.input


async def test_at_80x24_a_pane_key_opens_the_closed_side_bar_on_its_pane(project: Path) -> None:
    """The first ctrl+g at 80 columns used to hide the graph inside the closed side bar: nothing
    changed on the screen, and only a second press showed it."""
    app = make_app(project, make_session(project, ReplayModel(REC)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        sidebar = app.query_one("#sidebar")
        graph = app.query_one("#graph-pane")
        assert not sidebar.display
        await pilot.press("ctrl+g")
        await drain(pilot)
        assert sidebar.display and graph.display
        assert app.focused is app.graph, "opening the overlay, the pane takes the focus (esc closes it)"
        await pilot.press("ctrl+g")  # hides the focused pane: back to the prompt, the overlay closed
        await drain(pilot)
        assert not graph.display and not sidebar.display and app.focused is app.prompt.input
        await pilot.press("ctrl+g")
        await drain(pilot)
        assert sidebar.display and graph.display, "a hidden pane in a closed bar comes back with it"
        await pilot.press("f2")  # the timeline takes the whole overlay while it has the focus
        await drain(pilot)
        assert app.focused is app.timeline.option_list and not graph.display
        await pilot.press("ctrl+g")
        await drain(pilot)
        assert graph.display and app.focused is app.graph, "the eclipsed graph is shown, and takes the overlay"


async def test_wide_screens_show_every_pane_and_toggle_them(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(REC)))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        for pane in ("graph", "tools", "timeline"):
            assert app.query_one(f"#{pane}-pane").display
        await pilot.press("ctrl+t")
        await drain(pilot)
        assert not app.query_one("#tools-pane").display
        await pilot.press("ctrl+b")
        await drain(pilot)
        assert not app.query_one("#sidebar").display
