"""Visual snapshots of the main screens, on real Sessions with replayed models.

Clocks are frozen, the session id and the workspace path (``~/project``) are fixed, and the
input cursor does not blink, so the pictures are the same on every run. Update them with
``pytest tests/tui --snapshot-update`` only after looking at the report.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.pilot import Pilot

from agentcli.events import TextDelta
from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from agentcli.tui.screens import ConfirmRestore
from agentcli.tui.widgets import ReasoningBlock, ToolCallBlock
from tests.tui.helpers import (
    GatedModel,
    ThinkingModel,
    drain,
    logged_then_resumed,
    make_app,
    make_session,
    recording,
    screen_settled,
    wait_for,
    wait_idle,
    wait_streamed_text_shown,
)

FIXED = recording(
    ("I'll read the implementation first.", [("read_file", {"path": "textstats.py"})]),
    ("The bug is in `words()`:\n\n- it splits on single spaces\n- so runs of spaces make empty words\n\n"
     "Splitting with a regular expression fixes both.",
     [("edit_file", {"path": "textstats.py", "old_string": 'text.lower().split(" ")',
                     "new_string": 're.findall(r"[a-z0-9]+", text.lower())'})]),
    ("Done.", [("complete", {"summary": "found the bug in words()"})]),
)


def still(app: AgentApp) -> None:
    app.prompt.input.cursor_blink = False


def same_durations(app: AgentApp) -> None:
    """Tool durations are measured by the runtime on a real clock: show them all as 0.0s."""
    for info in app.calls:
        if info.duration_s is not None:
            info.duration_s = 0.0
    app.tools.load(app.calls)
    for block in app.query(ToolCallBlock):
        block.refresh()


def idle_app(project: Path, **kwargs: object) -> AgentApp:
    session = make_session(project, ReplayModel(FIXED), snapshots=True)
    return make_app(project, session, initial_prompt="Why do the tests fail?", **kwargs)


async def settle(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, AgentApp)
    still(app)
    await wait_idle(pilot, app)
    await wait_for(pilot, lambda: screen_settled(app), what="the titles, diff preview and footer to catch up")
    same_durations(app)
    await drain(pilot)


def test_idle_after_a_turn(project: Path, snap_compare) -> None:
    """You should see the finished turn: the task, three streamed answers (one a markdown list), three
    tool calls marked ✓, "✓ completed", the graph with `[ idle ]` lit, visits on the states
    (`thinking ×3`, `capturingSnapshot ×1`) and the line from executingTool back up to idle bright,
    "last: … →is_complete→ idle" under it, the tool panel showing the `complete` call, the timeline with the edit_file
    snapshot and its diff against the working tree, and the prompt ready for a task."""
    assert snap_compare(idle_app(project), terminal_size=(130, 40), run_before=settle)


def test_idle_at_80x24(project: Path, snap_compare) -> None:
    """You should see the stream using the whole width (side panes hidden under 110 columns), the
    status line, the graph as one line over the prompt ("state … executingTool →is_complete→ idle
    ^g graph", idle lit), the prompt, and the footer with ^s Pause, ^n New and the pane keys."""
    assert snap_compare(idle_app(project), terminal_size=(80, 24), run_before=settle)


def test_mid_run_streaming(project: Path, snap_compare) -> None:
    """You should see an answer half streamed in (it stops after "spaces"), `thinking` lit in the
    graph and the status line, and the prompt saying the agent is working and ctrl+s pauses."""
    model = GatedModel(FIXED, gate_turn=1, gate_after=50)
    session = make_session(project, model)
    streamed: list[int] = []
    session.subscribe(lambda event: streamed.append(len(event.text)) if isinstance(event, TextDelta) else None)
    app = make_app(project, session, initial_prompt="Why do the tests fail?")

    async def mid_run(pilot: Pilot) -> None:
        still(app)
        await wait_for(pilot, lambda: model.reached_gate, what="the gate")
        # Every character streamed before the gate has reached the app (the session coalesces text
        # on a timer, which a loaded machine can delay) and has been rendered.
        first_turn = len(FIXED.turns[0].text)
        await wait_for(pilot, lambda: sum(streamed) >= first_turn + model.sent_before_gate, what="the streamed text")
        await wait_streamed_text_shown(pilot, app)
        await wait_for(pilot, lambda: screen_settled(app), what="the titles, diff preview and footer to catch up")
        await drain(pilot)

    assert snap_compare(app, terminal_size=(130, 40), run_before=mid_run)


def test_awaiting_clarification(project: Path, snap_compare) -> None:
    """You should see the agent's question above the input with its two options numbered, the
    input in answer mode (secondary colour), and `awaitingClarification` lit in the graph."""
    rec = recording(("Before I change anything:", [("clarify", {
        "question": "Should punctuation inside words (don't, e-mail) count as part of the word?",
        "options": ["yes, keep apostrophes and hyphens", "no, split on them"]})]))
    app = make_app(project, make_session(project, ReplayModel(rec)), initial_prompt="Fix the word splitting")
    assert snap_compare(app, terminal_size=(120, 36), run_before=settle)


def test_halted(project: Path, snap_compare) -> None:
    """You should see "■ halted: step limit reached (1 model calls)" in the stream and above the
    input, the input in guidance mode (warning colour), ^s Resume in the footer, `halted` lit."""
    rec = recording(("Reading first.", [("read_file", {"path": "textstats.py"})]),
                    ("Never reached.", [("complete", {"summary": "-"})]))
    app = make_app(project, make_session(project, ReplayModel(rec), max_steps=1), initial_prompt="Fix it")
    assert snap_compare(app, terminal_size=(120, 36), run_before=settle)


def test_restore_confirmation(project: Path, snap_compare) -> None:
    """You should see a modal over the main screen asking to restore snapshot #2 (edit_file),
    listing "M textstats.py", "M test_textstats.py" and "D notes.txt", saying the restore can be
    undone, with Cancel focused and Restore in the warning colour."""
    app = idle_app(project)
    plan = SimpleNamespace(changes=[SimpleNamespace(path="textstats.py", action="write"),
                                    SimpleNamespace(path="test_textstats.py", action="write"),
                                    SimpleNamespace(path="notes.txt", action="delete")])

    async def confirm(pilot: Pilot) -> None:
        await settle(pilot)
        await app.push_screen(ConfirmRestore(2, "edit_file", plan))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRestore) and app.screen.focused is not None,
                       what="the confirmation, with a button focused")

    assert snap_compare(app, terminal_size=(120, 36), run_before=confirm)


@pytest.mark.parametrize("theme", ["agentcli-light", "agentcli-high-contrast"])
def test_themes(project: Path, snap_compare, theme: str) -> None:
    """You should see the idle screen of test_idle_after_a_turn in the light theme (dark text on a
    paper background) or the high-contrast theme (white on black, yellow active state)."""
    assert snap_compare(idle_app(project, theme=theme), terminal_size=(130, 40), run_before=settle)


def test_new_plan_build_session(project: Path, snap_compare) -> None:
    """You should see a new plan-build session before its first task: "○ idle · phase
    plan.analyze" in the status line, and in the graph's phase region only `analyze` lit (research,
    design, implement, validate and done dark), and the prompt ready for a task."""
    app = make_app(project, make_session(project, ReplayModel(FIXED), workflow="plan-build"))

    async def ready(pilot: Pilot) -> None:
        still(app)
        await wait_for(pilot, lambda: screen_settled(app), what="the session, its titles and footer")
        await drain(pilot)

    assert snap_compare(app, terminal_size=(130, 40), run_before=ready)


def test_resumed_into_a_pause(project: Path, tmp_path: Path, snap_compare) -> None:
    """You should see a session reopened after a pause (as `agentcli resume --last` opens it): its
    history (the task, the agent's reply, the `pause` call and "⏸ paused: need a review"),
    "○ paused" in the status line and `paused` lit in the graph, the hint "⏸ paused: need a review
    — ctrl+s resumes; …" above the input in guidance mode, and ^s Resume in the footer."""
    rec = recording(("I changed the splitting; a person should look before I go on.",
                     [("pause", {"reason": "need a review"})]),
                    ("Done.", [("complete", {"summary": "reviewed"})]))
    session = asyncio.run(logged_then_resumed(project, rec, tmp_path / "rec.json", "Fix the word splitting"))
    app = make_app(project, session)

    async def ready(pilot: Pilot) -> None:
        still(app)
        await wait_for(pilot, lambda: screen_settled(app), what="the session, its titles and footer")
        await drain(pilot)

    assert snap_compare(app, terminal_size=(120, 36), run_before=ready)


THOUGHTS = {
    0: "The user asks why the tests fail. Before guessing I should read textstats.py and see how it counts words.",
    1: ("words() lowercases the text and splits it on a single space:\n\n"
        "    text.lower().split(\" \")\n\n"
        "Two spaces in a row give an empty string, and an empty string counts as a word. Punctuation also "
        "stays glued to the word (\"fox.\" is not \"fox\"), which explains the second failing test.\n"
        "A regular expression over letters and digits handles both; I'll edit that one line."),
    2: "The edit is in; nothing else to change.",
}
"""What the model thinks before each reply of FIXED."""


def test_replies_under_folded_reasoning(project: Path, snap_compare) -> None:
    """You should see the finished turn with each reply under its reasoning folded to one dimmed
    line: "▸ thought for 2 lines — enter expands" above "I'll read the implementation first.",
    "▸ thought for 7 lines — enter expands" right above "The bug is in words():" and its list, and
    "▸ thought for 1 line — enter expands" above "Done."; no blank line between a header and its
    reply."""
    session = make_session(project, ThinkingModel(ReplayModel(FIXED), THOUGHTS), snapshots=True)
    app = make_app(project, session, initial_prompt="Why do the tests fail?")
    assert snap_compare(app, terminal_size=(100, 30), run_before=settle)


def test_mid_reasoning(project: Path, snap_compare) -> None:
    """You should see the first reply under its folded reasoning and its read_file call, then the
    second reply's reasoning open while the model still reasons: "▾ thinking…" over its lines in
    dimmed italics, indented two cells (the `text.lower().split(" ")` line four more, blank lines
    around it), no reply under it yet, and `thinking` in the status line."""
    model = ThinkingModel(ReplayModel(FIXED), THOUGHTS, hold_turn=1)
    app = make_app(project, make_session(project, model), initial_prompt="Why do the tests fail?")

    async def mid_reasoning(pilot: Pilot) -> None:
        still(app)
        await wait_for(pilot, lambda: model.held, what="the model to reason")
        await wait_for(pilot, lambda: any(block.text == THOUGHTS[1] for block in app.query(ReasoningBlock)),
                       what="all the reasoning")
        same_durations(app)
        await drain(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=mid_reasoning)
