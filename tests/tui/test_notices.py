"""The stream's notices are the describer's words, the same the headless printer prints."""

from __future__ import annotations

from agentcli.describe import describe
from agentcli.events import Notice, SnapshotCaptured, ToolCallFinished, ToolCallStarted
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.widgets import NoticeBlock
from tests.core.test_describe import SECRET_FRAME, SHOWN
from tests.tui.helpers import wait_for
from tests.tui.test_stream import StreamApp

DRAWN_AS_BLOCKS = (ToolCallStarted, ToolCallFinished)
"""Tool calls are keyed blocks of their own (name, preview, mark), not notices."""
ON_THE_TIMELINE = (SnapshotCaptured,)


async def test_every_notice_reads_as_the_describer_says() -> None:
    app = StreamApp()
    noticed = [event for event in SHOWN if not isinstance(event, DRAWN_AS_BLOCKS + ON_THE_TIMELINE)]
    async with app.run_test(size=(200, 60)) as pilot:
        conversation = app.query_one("#conversation")
        for event in SHOWN:
            conversation.post_message(SessionEventPosted(event))
        await wait_for(pilot, lambda: len(app.query(NoticeBlock)) == len(noticed), what="every notice")
        shown = [block.render().plain for block in app.query(NoticeBlock)]
    for event, text in zip(noticed, shown):
        description = describe(event)
        assert description is not None
        assert text.splitlines()[0].startswith(description.headline), type(event).__name__
        assert [line.strip() for line in text.splitlines()[1:]] == list(description.more), type(event).__name__
    assert not any(SECRET_FRAME in text or "Traceback" in text for text in shown)


async def test_a_turn_end_is_styled_by_its_outcome() -> None:
    app = StreamApp()
    async with app.run_test(size=(120, 30)) as pilot:
        conversation = app.query_one("#conversation")
        conversation.post_message(SessionEventPosted(SHOWN[12]))  # paused: the app was closed
        await wait_for(pilot, lambda: bool(app.query(NoticeBlock)), what="the notice")
        block = app.query_one(NoticeBlock)
        assert block.has_class("-turn") and block.has_class("-turn-paused")
        assert block.render().plain == "⏸ paused: the app was closed"


async def test_news_from_the_mcp_servers_is_not_styled_as_a_warning() -> None:
    app = StreamApp()
    async with app.run_test(size=(120, 30)) as pilot:
        conversation = app.query_one("#conversation")
        conversation.post_message(SessionEventPosted(
            Notice(kind="mcp", text="MCP servers ready in 0.4 s: time (2 tools)", severity="info")))
        gone_text = "MCP server 'gone' is not available: the command was not found"
        conversation.post_message(SessionEventPosted(Notice(kind="mcp", text=gone_text, severity="warning")))
        await wait_for(pilot, lambda: len(app.query(NoticeBlock)) == 2, what="both notices")
        ready, gone = app.query(NoticeBlock)
        assert ready.render().plain.startswith("≡ MCP servers ready")
        assert ready.has_class("-context") and not ready.has_class("-warning")
        assert gone.render().plain.startswith("! MCP server 'gone'") and gone.has_class("-warning")
