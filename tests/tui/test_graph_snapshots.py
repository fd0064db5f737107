"""Snapshots of the state graph on real sessions, at the three sizes it is drawn in: one line over
the prompt (80×24), the side pane (130×40) and the full drawing (200×50)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from tests.tui.helpers import GatedModel, drain, make_app, make_session, recording, screen_settled, wait_for

RUN = recording(
    ("I'll read the implementation first.", [("read_file", {"path": "textstats.py"})]),
    ("The bug is in `words()`: it splits on single spaces, so runs of spaces make empty words.", []),
)
ASKS = recording(
    ("One question first.", [("clarify", {"question": "Which style?", "options": ["tabs", "spaces"]})]),
)
SIZES = [(80, 24), (130, 40), (200, 50)]


def mid_run(project: Path) -> tuple[AgentApp, GatedModel]:
    """A single-workflow session held while it streams its second reply: `thinking` is lit, and
    the transition just taken is reviewingProgress →always→ thinking."""
    model = GatedModel(RUN, gate_turn=1, gate_after=20)
    return make_app(project, make_session(project, model), initial_prompt="Why do the tests fail?"), model


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_single_mid_run(project: Path, snap_compare, size: tuple[int, int]) -> None:
    """You should see `thinking` lit (reversed, orange) and the line from reviewingProgress back up
    to thinking bright; under the drawing "last: … reviewingProgress →always→ thinking" with thinking
    lit and "next:" listing where thinking leads. At 80×24 the side panes are hidden and one line
    over the prompt shows the trail ending in the lit `thinking`; at 130×40 the waiting states are
    under the loop; at 200×50 they are beside it, each with why it is entered (◀) and left (▶)."""
    app, model = mid_run(project)

    async def held(pilot: Pilot) -> None:
        app.prompt.input.cursor_blink = False
        await wait_for(pilot, lambda: model.reached_gate, what="the gate")
        await wait_for(pilot, lambda: app.graph.control_state == "thinking" and screen_settled(app),
                       what="the graph to show thinking")
        await drain(pilot)

    assert snap_compare(app, terminal_size=size, run_before=held)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_plan_build_asking(project: Path, snap_compare, size: tuple[int, int]) -> None:
    """You should see a plan-build session waiting for an answer: `awaitingClarification` lit, the
    `is_clarify` note under it bright (the transition just taken), the phase region as nested boxes
    — plan (analyze, research, design) then build (implement ⇄ validate) then done — with
    `analyze` lit and the plan box's border lit, and "last: … executingTool →is_clarify→
    awaitingClarification". At 80×24 the one line over the prompt ends in the lit state."""
    app = make_app(project, make_session(project, ReplayModel(ASKS), workflow="plan-build"),
                   initial_prompt="Format the file")

    async def asked(pilot: Pilot) -> None:
        app.prompt.input.cursor_blink = False
        await wait_for(pilot, lambda: app.session_ready and app.graph.control_state == "awaitingClarification"
                       and screen_settled(app),
                       what="the question")
        await drain(pilot)

    assert snap_compare(app, terminal_size=size, run_before=asked)
