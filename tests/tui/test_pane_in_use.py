"""At a roomy size the whole graph is drawn in the side bar; the tool list or the timeline in use
(f3, f2) then takes its rows. The timeline showed one snapshot row at 200x50, the tool details four."""

from __future__ import annotations

from pathlib import Path

from agentcli.llm.replay import ReplayModel
from tests.tui.helpers import drain, make_app, make_session, recording, wait_for


async def test_the_pane_in_use_takes_the_graphs_rows_and_gives_them_back(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(recording(("Done.", [])))))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        await drain(pilot)
        graph = app.query_one("#graph-pane")
        drawn = graph.region.height
        assert drawn > 12, "the roomy layout draws the whole graph"
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.timeline.option_list, what="the timeline")
        await wait_for(pilot, lambda: app.timeline.option_list.region.height >= 8, what="timeline rows")
        assert graph.region.height <= 12 and app.query_one("#graph-trail").region.height > 0
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.focused is app.tools.option_list, what="the tool list")
        await wait_for(pilot, lambda: app.query_one("#tools-pane").region.height >= 16, what="tool rows")
        await pilot.press("f4")
        await wait_for(pilot, lambda: graph.region.height == drawn, what="the graph drawn again")
