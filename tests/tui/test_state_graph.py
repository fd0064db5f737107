"""The live graph on real sessions: what is lit, the transition just taken, visits, the trail,
where the agent can go next, the one-line form at 80×24 and the legend on ``?``."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.content import Content

from agentcli.llm.replay import ReplayModel
from agentcli.tui.widgets import GraphStrip, GraphTrail, StateGraph
from tests.tui.helpers import drain, logged_then_resumed, make_app, make_session, recording, wait_for, wait_idle

FIX = recording(
    ("Looking at the code first.", [("read_file", {"path": "textstats.py"})]),
    ("Listing.", [("list_files", {})]),
    ("Done.", [("complete", {"summary": "fixed it"})]),
)


def styled(content: Content, text: str) -> str:
    """The styles that cover every character of the first ``text`` in ``content``, joined."""
    start = content.plain.index(text)
    end = start + len(text)
    return " ".join(str(span.style) for span in content.spans if span.start <= start and span.end >= end)


def lit(graph: StateGraph) -> set[str]:
    """The states drawn reversed in the accent colour: where the agent is, as a user sees it."""
    content = graph.render()
    return {name for name in graph.names.values()
            if f"[ {name.rsplit('.', 1)[-1]} ]" in content.plain
            and "reverse" in styled(content, f"[ {name.rsplit('.', 1)[-1]} ]")}


async def test_a_turn_lights_idle_counts_visits_and_leaves_a_trail(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_idle(pilot, app)
        await drain(pilot)
        graph = app.graph
        assert graph.counts[("thinking", "executingTool")] == 3
        assert graph.counts[("reviewingProgress", "thinking")] == 2
        assert graph.visits["thinking"] == 3 and graph.visits["executingTool"] == 3
        assert lit(graph) == {"idle", "work"}
        text = graph.render().plain
        assert "[ thinking ]×3" in text and "[ executingTool ]×3" in text
        # The transition just taken (complete: executingTool -> idle) is the bright one.
        assert graph.last_step is not None and graph.last_step.label == "is_complete"
        last, after = app.graph_trail.render().plain.split("\nnext: ")
        assert last.startswith("last: … ") and last.replace("\n", " ").endswith("→is_complete→ idle")
        assert after.replace("\n", " ") == ("capturingBaseline, awaitingPermission, executingTool, thinking, "
                                            "compacting, halted")


def bright_edges(graph: StateGraph) -> set[str]:
    """The edges drawn bright from end to end (lines shared by several edges, such as a lane into
    idle, light up with the one taken: whole edges only count)."""
    content = graph.render()
    drawing = graph.drawing(graph._width)
    seen: dict[str, list[bool]] = {}
    for row, spans in enumerate(drawing.spans):
        for span in spans:
            if span.tag.startswith("edge:"):
                seen.setdefault(span.tag, []).append(_bright(content, drawing.lines, row, span))
    return {tag for tag, cells in seen.items() if all(cells)}


async def test_the_transition_just_taken_is_drawn_bright(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(StateGraph, "fade_s", None)  # bright until the next one, however slow the machine
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_idle(pilot, app)
        await drain(pilot)
        assert bright_edges(app.graph) == {"edge:executingTool>idle"}


async def test_the_transition_just_taken_fades_and_settles(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It stayed bright while the agent waited, pointing at a step long done; now it dims, then is
    drawn like the other edges out of idle (the trail still ends with it)."""
    monkeypatch.setattr(StateGraph, "fade_s", (0.2, 0.4))
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_idle(pilot, app)
        graph = app.graph
        await wait_for(pilot, lambda: graph.glow == 0 and not bright_edges(graph), what="the edge to settle")
        assert "→is_complete→ idle" in app.graph_trail.render().plain.replace("\n", " ")
        # A new transition is bright again, and settles again.
        await pilot.press(*"more", "enter")
        await wait_for(pilot, lambda: graph.visits["thinking"] == 4, what="the next turn")
        await wait_for(pilot, lambda: graph.glow == 0 and not bright_edges(graph), what="the edge to settle again")


async def test_a_reopened_session_draws_no_transition_as_just_taken(project: Path, tmp_path: Path) -> None:
    reopened = await logged_then_resumed(project, FIX, tmp_path / "fix.json", "go")
    app = make_app(project, reopened)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.session_ready and app.graph.visits["thinking"] == 3, what="the history")
        await drain(pilot)
        assert app.graph.last_step is not None and app.graph.glow == 0
        assert not bright_edges(app.graph), "a transition from an earlier run is not the one just taken"


def _bright(content: Content, lines: list[str], row: int, span: object) -> bool:
    offset = sum(len(line) + 1 for line in lines[:row])
    start, end = offset + span.start, offset + span.end  # type: ignore[attr-defined]
    return any("bold" in str(s.style) and "graph-active" in str(s.style) and s.start <= start and s.end >= end
               for s in content.spans)


async def test_at_80x24_the_trail_and_the_state_show_without_a_key(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot, app)
        await drain(pilot)
        strip = app.query_one(GraphStrip)
        assert strip.display and strip.region.height == 1 and strip.region.width == 80
        line = strip.render()
        assert line.plain.startswith("state … ") and line.plain.rstrip().endswith("idle  ^g graph")
        assert "reverse" in styled(line, "idle")
        assert "→is_complete→" in line.plain


async def test_the_strip_is_hidden_when_the_side_panes_show(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(FIX)))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert not app.query_one(GraphStrip).region.height
        assert app.query_one(GraphTrail).region.height >= 2


async def test_question_mark_in_the_pane_shows_the_legend(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(FIX)))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready and app.graph.is_mounted, what="the graph")
        app.graph.focus()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: "times the agent has entered it" in app.graph.render().plain,
                       what="the legend")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: "times the agent has entered it" not in app.graph.render().plain,
                       what="the legend to close")
