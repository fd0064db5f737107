"""The model's reasoning in the stream: a dimmed block above its reply, open while the model
reasons, folded to one line when the reply starts, opened again with enter, kept in history."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import ModelRoles, ReasoningRoles, RetrySettings, data_home
from agentcli.events import AssistantMessage, Event, ReasoningDelta, RetryScheduled, TextDelta, UserMessage
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.llm.replay import ReplayModel
from agentcli.session import factory
from agentcli.session.log import find_session
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.widgets import AgentBlock, Conversation, ReasoningBlock
from agentcli.tui.widgets._block_styles import BlockStyles
from agentcli.tui.widgets._blocks import _WrappedLines
from agentcli.tui.widgets._conversation import MAX_MOUNTED
from tests.support.anthropic_server import AnthropicServer, Call, Reply
from tests.tui.helpers import GatedModel, ThinkingModel, make_app, make_session, recording, wait_for, wait_idle
from tests.tui.test_stream import StreamApp, window_work_done

FIXED = recording(
    ("I'll read the implementation first.", [("read_file", {"path": "textstats.py"})]),
    ("The bug is in `words()`: it splits on single spaces.", [("complete", {"summary": "found it"})]),
)
THOUGHTS = {
    0: "The user asks why the tests fail.\nRead textstats.py before guessing.",
    1: "words() splits on one space:\n\n    text.lower().split(\" \")\n\nso runs of spaces make empty words.",
}


def header(block: ReasoningBlock) -> str:
    return block.header(block.content_size.width).plain


def stream_order(app_conversation: Conversation) -> list[str]:
    """The stream's blocks top to bottom, as kinds: reasoning, agent, other."""
    kinds = []
    for child in app_conversation.children:
        if isinstance(child, ReasoningBlock):
            kinds.append("reasoning")
        elif isinstance(child, AgentBlock):
            kinds.append("agent")
        elif child.display:
            kinds.append(type(child).__name__)
    return kinds


async def test_reasoning_streams_open_and_folds_to_one_line_when_the_reply_starts(project: Path) -> None:
    # The reply stops after its first words: the reasoning must fold when the reply starts, not when it ends.
    inner = GatedModel(FIXED, gate_turn=0, gate_after=8)
    model = ThinkingModel(inner, THOUGHTS, hold_turn=0)
    app = make_app(project, make_session(project, model), initial_prompt="Why do the tests fail?")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: model.held, what="the model to reason")
        await wait_for(pilot, lambda: any(b.text == THOUGHTS[0] for b in app.query(ReasoningBlock)),
                       what="all the reasoning")
        block = app.query_one(ReasoningBlock)
        assert block.expanded and block.live and header(block) == "▾ thinking…"
        # The text is in; its layout follows on the next refresh (a loaded machine may not have run it yet).
        await wait_for(pilot, lambda: block.size.height == 3, what="the header and the reasoning's two lines")
        assert not app.query(AgentBlock), "no reply yet"

        model.gate.set()
        await wait_for(pilot, lambda: inner.reached_gate, what="the reply to start")
        await wait_for(pilot, lambda: not block.expanded, what="the reasoning to fold")
        assert not block.live and block.size.height == 1
        assert header(block) == "▸ thought for 2 lines — enter expands"
        assert app.query(AgentBlock), "the reply is streaming under it"
        inner.gate.set()
        await wait_idle(pilot, app)
        assert stream_order(app.conversation)[:4] == ["UserBlock", "reasoning", "agent", "ToolCallBlock"]
        assert len(app.query(ReasoningBlock)) == 2, "one block per reply"
        assert all(not b.expanded for b in app.query(ReasoningBlock))


async def test_enter_or_a_click_opens_folded_reasoning_and_closes_it_again(project: Path) -> None:
    app = make_app(project, make_session(project, ThinkingModel(ReplayModel(FIXED), THOUGHTS)),
                   initial_prompt="Why do the tests fail?")
    async with app.run_test(size=(80, 16)) as pilot:
        await wait_idle(pilot, app)
        block = app.query(ReasoningBlock)[1]
        conversation = app.conversation
        record = next(r for r in app.conversation.records if r.widget is block)
        assert not block.expanded and block.size.height == 1 and record.collapsed
        block.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: block.size.height == 6, what="the reasoning to open")
        assert block.expanded and header(block) == "▾ thought for 5 lines — enter collapses"
        assert not record.collapsed, "the stream remembers the block was opened"
        # Opened near the end of a followed stream, it grows upwards: the view keeps its start in sight.
        await wait_for(pilot, lambda: conversation.scroll_y <= block.virtual_region.y
                       < conversation.scroll_y + conversation.scrollable_content_region.height, what="the header")
        assert app.active_bindings["enter"].binding.description == "Collapse"
        await pilot.press("enter")
        await wait_for(pilot, lambda: block.size.height == 1, what="the reasoning to fold")
        assert record.collapsed and app.active_bindings["enter"].binding.description == "Expand"
        await pilot.click(block)
        await wait_for(pilot, lambda: block.expanded, what="a click to open it")


async def test_an_interrupted_reply_keeps_its_reasoning_live_and_when_reopened(project: Path) -> None:
    model = ThinkingModel(ReplayModel(FIXED), THOUGHTS, hold_turn=0)
    session = make_session(project, model, session_id="7e5501a00000", record=True, data_dir=data_home())
    app = make_app(project, session, initial_prompt="Why do the tests fail?")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: model.held, what="the model to reason")
        await wait_for(pilot, lambda: any(b.text == THOUGHTS[0] for b in app.query(ReasoningBlock)),
                       what="all the reasoning")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.control_state == "paused", what="the pause")
        block = app.query_one(ReasoningBlock)
        await wait_for(pilot, lambda: not block.live, what="the reasoning to end")
        # Cut off while the model reasoned: left open, as it was being read, and marked.
        assert block.expanded and block.has_class("-interrupted") and block.text == THOUGHTS[0]

    session.close()
    entry = find_session(data_home(), "7e5501a00000")
    reopened = factory.resume_session(entry, session.settings, model_client=ReplayModel(FIXED))
    app = make_app(project, reopened)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        block = app.query_one(ReasoningBlock)
        await wait_for(pilot, lambda: block.content_size.width > 0, what="the stream to be laid out")
        assert block.text == THOUGHTS[0] and not block.expanded and block.has_class("-interrupted")
        assert header(block) == "▸ thought for 2 lines — enter expands"
    reopened.close()


async def test_a_thinking_claude_model_through_litellm_shows_each_replys_reasoning(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole path: Anthropic's thinking deltas through litellm's parser, the session's
    coalescer and the bridge, for a reply with text and for one that only calls a tool."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with AnthropicServer(api_key="test-key") as server:
        server.add(Reply(thinking="Read the module before\nguessing at the bug.", text="Reading it first.",
                         calls=[Call("read_file", {"path": "textstats.py"})]),
                   Reply(thinking="Nothing left to check.", calls=[Call("complete", {"summary": "read it"})]))
        retry = RetrySettings(attempts=2, base_delay_s=0.01)
        session = make_session(project, LiteLLMClient(retry), model="anthropic/claude-sonnet-4-5-20250929",
                               api_base=server.base_url, retry=retry,
                               models=ModelRoles(reasoning=ReasoningRoles(default=2048)))
        app = make_app(project, session, initial_prompt="Why do the tests fail?")
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_idle(pilot, app, timeout=60)
            blocks = list(app.query(ReasoningBlock))
            assert [b.text for b in blocks] == ["Read the module before\nguessing at the bug.",
                                                "Nothing left to check."]
            assert all(not b.expanded for b in blocks)
            assert stream_order(app.conversation)[:5] == ["UserBlock", "reasoning", "agent", "ToolCallBlock",
                                                          "reasoning"]


async def test_history_restores_reasoning_from_the_reply_or_its_deltas() -> None:
    events: list[Event] = [
        UserMessage(text="first"),
        ReasoningDelta(text="streamed, then "), ReasoningDelta(text="recorded"),
        TextDelta(text="answer one"),
        AssistantMessage(text="answer one", reasoning="streamed, then recorded"),
        UserMessage(text="second"),
        ReasoningDelta(text="void: the call failed"),
        RetryScheduled(attempt=1, max_attempts=3, delay_s=0.1, error="overloaded"),
        ReasoningDelta(text="only as deltas"),
        AssistantMessage(text="answer two"),
        UserMessage(text="paused mid-reply"),
        AssistantMessage(text="half an ans", reasoning="a whole thought", interrupted=True),
        UserMessage(text="third"),
        ReasoningDelta(text="cut off mid-thought"),  # a crash: no reply was recorded
    ]
    app = StreamApp()
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load_history(events)
        await pilot.pause()
        kinds = [(r.kind, r.text) for r in conversation.records if r.kind in ("reasoning", "agent")]
        assert kinds == [("reasoning", "streamed, then recorded"), ("agent", "answer one"),
                         ("reasoning", "only as deltas"), ("agent", "answer two"),
                         ("reasoning", "a whole thought"), ("agent", "half an ans"),
                         ("reasoning", "cut off mid-thought")]
        blocks = list(conversation.query(ReasoningBlock))
        assert all(not b.expanded for b in blocks)
        # What was cut off is marked: the reply's text, or the reasoning when no text had come.
        assert [b.has_class("-interrupted") for b in blocks] == [False, False, False, True]
        assert conversation.query(AgentBlock)[2].has_class("-interrupted")
        assert conversation.query(AgentBlock).first().has_class("-reasoned"), "the reply sits under its reasoning"


async def test_streamed_reasoning_mounts_one_block_and_appends_to_it() -> None:
    app = StreamApp()
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)

        def blocks() -> int:  # the stream's hidden BlockStyles comes with the first agent text
            return sum(not isinstance(child, BlockStyles) for child in conversation.children)

        before = blocks()
        pieces = [f"step {n} of a long thought, " + ("\n" if n % 7 == 0 else "") for n in range(300)]
        for piece in pieces:
            conversation.post_message(SessionEventPosted(ReasoningDelta(text=piece)))
        await wait_for(pilot, lambda: bool(conversation.query(ReasoningBlock))
                       and conversation.query_one(ReasoningBlock).text == "".join(pieces), what="the deltas")
        assert blocks() == before + 1
        block = conversation.query_one(ReasoningBlock)
        assert block.expanded and block.live
        conversation.post_message(SessionEventPosted(TextDelta(text="The answer.")))
        await wait_for(pilot, lambda: not block.expanded, what="the reply to fold the reasoning")
        assert blocks() == before + 2


def test_an_append_wraps_again_only_the_line_it_grows() -> None:
    lines = _WrappedLines("first line\nsecond")
    assert lines.height(40) == 2
    first, second = lines.line(0, 40), lines.line(1, 40)
    lines.append(" line grows\nand a third")
    assert lines.line(0, 40) is first, "kept"
    assert lines.line(1, 40) is not second and lines.line(1, 40).plain == "second line grows"
    assert lines.text == "first line\nsecond line grows\nand a third"
    assert lines.height(40) == 3 and lines.height(8) == 7  # first|line, second|line|grows, and a|third


async def test_reasoning_blocks_page_like_the_others_and_stay_as_the_user_left_them() -> None:
    events: list[Event] = []
    for n in range(300):
        events += [UserMessage(text=f"question {n}"), AssistantMessage(text=f"answer {n}", reasoning=f"thought {n}")]
    app = StreamApp()
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load_history(events)
        await pilot.pause()
        assert len(conversation.records) == 900 and conversation.mounted_blocks <= MAX_MOUNTED
        last = conversation.query(ReasoningBlock).last()
        record = next(r for r in conversation.records if r.widget is last)
        last.action_expand()
        await wait_for(pilot, lambda: not record.collapsed, what="the stream to note the block is open")
        while record.widget is not None:  # page back until the block is unloaded
            await conversation.action_show_earlier()
        # Blocks mounted ahead of need in steps meanwhile: the window is trimmed by the next one.
        await wait_for(pilot, lambda: window_work_done(app), what="the steps ahead to finish")
        assert conversation.mounted_blocks <= MAX_MOUNTED
        await conversation.action_jump_to_end()
        assert isinstance(record.widget, ReasoningBlock) and record.widget.expanded, "mounted again as left: open"
