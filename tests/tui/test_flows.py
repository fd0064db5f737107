"""Pilot tests: what a user does in the TUI, against real Sessions on replayed models."""

from __future__ import annotations

from pathlib import Path

from textual._context import active_message_pump

from agentcli.events import (
    AssistantMessage,
    ClarificationAnswered,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    TurnEnded,
    UserMessage,
)
from agentcli.llm.replay import ReplayModel
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.widgets import AgentBlock, NoticeBlock, ToolCallBlock, UserBlock
from tests.tui.helpers import GatedModel, drain, make_app, make_session, recording, wait_for, wait_idle

class Seen(list):
    """A ``message_hook`` that notes which widget (or the app) received each message."""

    def __call__(self, message: object) -> None:
        self.append((active_message_pump.get(None), message))


def session_events(seen: Seen, receiver: object) -> list[object]:
    """The session events ``receiver`` got, in the order it handled them."""
    return [m.event for r, m in seen if r is receiver and isinstance(m, SessionEventPosted)]


FIX = recording(
    ("Looking at the code first.", [("read_file", {"path": "textstats.py"})]),
    ("## Plan\n\n- fix `words()`\n- add a test", [("list_files", {})]),
    ("Done.", [("complete", {"summary": "fixed it"})]),
)


async def test_typing_a_task_runs_it_and_streams_the_answer(project: Path) -> None:
    seen = Seen()
    session = make_session(project, ReplayModel(FIX))
    app = make_app(project, session)
    async with app.run_test(size=(120, 40), message_hook=seen) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="session")
        await pilot.click("#prompt-input")
        await pilot.press(*"fix the bug", "enter")
        await wait_idle(pilot, app)

        assert [b.render().plain for b in app.query(UserBlock)] == ["fix the bug"]
        agent_texts = [b.source for b in app.query(AgentBlock)]
        assert agent_texts == ["Looking at the code first.", "## Plan\n\n- fix `words()`\n- add a test", "Done."]
        # The markdown was rendered as blocks, not shown as source.
        assert app.query_one(AgentBlock).parent is app.conversation
        assert len(app.query(ToolCallBlock)) == 3
        assert app.session is not None and app.session.last_turn is not None
        assert app.session.last_turn.outcome == "completed"
        assert app.prompt.input.value == ""
        assert app.status.input_tokens == 3600
        conversation = app.conversation

    # The session's events reached the widgets in order, as messages (never rendered inside the session).
    kinds = [type(e) for e in session_events(seen, conversation)]
    assert kinds.index(UserMessage) < kinds.index(TextDelta) < kinds.index(AssistantMessage)
    assert kinds[-1] is TurnEnded


async def test_streamed_text_appears_before_the_reply_ends(project: Path) -> None:
    model = GatedModel(recording(("First part of the answer. " * 4 + "Second part.", [("complete", {"summary": "ok"})])),
                       gate_after=30)
    app = make_app(project, make_session(project, model), initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: model.reached_gate, what="the gate")
        await wait_for(pilot, lambda: len(app.query(AgentBlock)) == 1 and app.query_one(AgentBlock).source != "",
                       what="streamed text")
        block = app.query_one(AgentBlock)
        partial = block.source
        assert partial.startswith("First part") and "Second part" not in partial
        assert app.control_state == "thinking"
        assert app.prompt.mode == "busy"
        assert app.graph.configuration[:0] == () and "thinking" in app.graph.configuration
        model.gate.set()
        await wait_idle(pilot, app)
        assert app.query_one(AgentBlock) is block, "one Markdown widget per message, streamed into"
        assert block.source.endswith("Second part.")


async def test_pause_mid_stream_then_resume(project: Path) -> None:
    rec = recording(("A long answer that will be cut off in the middle of a sentence.", [("list_files", {})]),
                    ("Resumed and finished.", [("complete", {"summary": "done"})]))
    model = GatedModel(rec, gate_after=20)
    app = make_app(project, make_session(project, model), initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: model.reached_gate, what="mid-stream")
        await wait_for(pilot, lambda: bool(app.query(AgentBlock)) and bool(app.query_one(AgentBlock).source))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.control_state == "paused", what="paused")
        # The state reached the app; the interrupted reply and its notice may still be queued.
        await wait_for(pilot, lambda: any("interrupted" in n.render().plain for n in app.query(NoticeBlock)),
                       what="the interruption notice")
        await drain(pilot)
        block = app.query_one(AgentBlock)
        assert block.has_class("-interrupted")
        assert "cut off" not in block.source
        assert "paused by the user" in app.prompt.hint
        assert app.prompt.mode == "guidance"
        assert app.check_action("resume", ()) is True and app.check_action("pause", ()) is False
        assert any("interrupted" in n.render().plain for n in app.query(NoticeBlock))

        model.gate.set()  # the model would go on; resuming starts a new call
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.session is not None and app.session.last_turn is not None
                       and app.session.last_turn.outcome == "completed", what="completion")
        assert app.query(AgentBlock).last().source == "Resumed and finished."


async def test_escape_pauses_a_running_tool(project: Path) -> None:
    rec = recording(("Running something slow.", [("bash", {"command": "sleep 20"})]))
    app = make_app(project, make_session(project, ReplayModel(rec)), initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.control_state == "executingTool" and bool(app.query(ToolCallBlock)),
                       what="the tool to run")
        block = app.query_one(ToolCallBlock)
        assert "running" in block.render().plain
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.control_state == "paused", what="paused")
        await wait_for(pilot, lambda: block.info.status != "running", what="the call's result")
        assert block.info.status == "interrupted"
        assert "⏸" in block.render().plain


async def test_clarify_shows_the_question_and_a_number_answers_it(project: Path) -> None:
    seen = Seen()
    rec = recording(
        ("I need to know one thing.", [("clarify", {"question": "Which style?", "options": ["tabs", "spaces"]})]),
        ("Thanks.", [("complete", {"summary": "used spaces"})]),
    )
    session = make_session(project, ReplayModel(rec))
    app = make_app(project, session, initial_prompt="format it")
    async with app.run_test(size=(100, 30), message_hook=seen) as pilot:
        await wait_idle(pilot, app)
        assert app.control_state == "awaitingClarification"
        question = app.query_one("#question")
        assert question.display and app.prompt.has_class("-answer")
        assert "Which style?" in app.query_one("#question-text").render().plain
        assert app.prompt.mode == "answer"
        await pilot.click("#prompt-input")
        await pilot.press("2", "enter")
        await wait_for(pilot, lambda: session.last_turn is not None and session.last_turn.outcome == "completed")
        assert not app.prompt.has_class("-answer")
    answers = [e for e in session_events(seen, app.conversation) if isinstance(e, ClarificationAnswered)]
    assert answers and answers[0].answer == "spaces"


async def test_picking_an_option_answers(project: Path) -> None:
    rec = recording(
        ("?", [("clarify", {"question": "Which style?", "options": ["tabs", "spaces"]})]),
        ("Thanks.", [("complete", {"summary": "used tabs"})]),
    )
    session = make_session(project, ReplayModel(rec))
    app = make_app(project, session, initial_prompt="format it")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(pilot, app)
        app.query_one("#question-options").focus()
        await pilot.press("enter")  # the first option is highlighted
        await wait_for(pilot, lambda: session.last_turn is not None and session.last_turn.outcome == "completed")
        assert [b.render().plain for b in app.query(UserBlock)][-1] == "↳ tabs"


async def test_halted_shows_the_reason_and_guidance_resumes(project: Path) -> None:
    rec = recording(("Reading.", [("read_file", {"path": "textstats.py"})]),
                    ("Finishing.", [("complete", {"summary": "done after guidance"})]))
    session = make_session(project, ReplayModel(rec), max_steps=1)
    app = make_app(project, session, initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(pilot, app)
        assert app.control_state == "halted"
        assert "step limit" in app.prompt.hint
        assert app.prompt.mode == "guidance"
        await pilot.click("#prompt-input")
        await pilot.press(*"just finish", "enter")
        await wait_for(pilot, lambda: session.last_turn is not None and session.last_turn.outcome == "completed")
        assert [b.render().plain for b in app.query(UserBlock)][-1] == "just finish"


async def test_graph_lights_states_and_counts_transitions(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_idle(pilot, app)
        graph = app.graph
        assert graph.counts[("idle", "thinking")] == 1
        assert graph.counts[("thinking", "executingTool")] == 3
        assert graph.counts[("executingTool", "reviewingProgress")] == 2
        assert graph.counts[("reviewingProgress", "thinking")] == 2
        assert graph.counts[("executingTool", "idle")] == 1
        assert graph.configuration == ("agent", "control", "idle", "phase", "phase_work")
        text = graph.render().plain
        assert "[ thinking ]×3" in text and "[ idle ]×2" in text, "visits are written on the states"


async def test_selecting_a_call_in_either_place_shows_it_in_the_other(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_idle(pilot, app)
        blocks = list(app.query(ToolCallBlock))
        blocks[0].focus()
        # Waits rather than fixed pauses: the selection travels by messages, slower under load.
        await wait_for(pilot, lambda: app.tools.selected == blocks[0].info.call_id, what="the panel to follow")
        assert app.tools.option_list.highlighted == 0
        assert "textstats.py" in app.query_one("#tool-detail-text").render().plain

        app.tools.option_list.focus()
        await pilot.press("down")
        await wait_for(pilot, lambda: app.tools.selected == blocks[1].info.call_id, what="the next call")
        await wait_for(pilot, lambda: blocks[1].expanded, what="the stream to follow")
        assert "arguments" in blocks[1].render().plain


async def test_tool_call_blocks_expand_with_arguments_and_result(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot, app)
        block = app.query(ToolCallBlock).first()
        assert not block.expanded
        block.focus()
        await pilot.press("enter")
        assert block.expanded
        text = block.render().plain
        assert '"path": "textstats.py"' in text and "def words" in text
        await pilot.press("enter")
        assert not block.expanded


async def test_tool_results_are_recorded_for_the_panel(project: Path) -> None:
    seen = Seen()
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(120, 40), message_hook=seen) as pilot:
        await wait_idle(pilot, app)
        finished = [e for e in session_events(seen, app.tools) if isinstance(e, ToolCallFinished)]
        assert len(finished) == 3
        assert all(app.calls[e.call_id].status == "ok" for e in finished)
        assert app.tools.option_list.option_count == 3
        assert app.query_one("#tools-title").render().plain == "tool calls (3)"


async def test_state_changes_arrive_in_chart_order(project: Path) -> None:
    seen = Seen()
    app = make_app(project, make_session(project, ReplayModel(FIX)), initial_prompt="go")
    async with app.run_test(size=(120, 40), message_hook=seen) as pilot:
        await wait_idle(pilot, app)
    targets = [e.target for e in session_events(seen, app.graph) if isinstance(e, StateChanged)]
    assert targets == ["thinking", "executingTool", "reviewingProgress", "thinking", "executingTool",
                       "reviewingProgress", "thinking", "executingTool", "idle"]
