"""The header's token figure: the share of input read from the prompt cache, and ``~`` for estimates."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from pathlib import Path

from textual.app import App
from textual.widget import Widget

from agentcli.config import data_home
from agentcli.events import ToolCallRequest, UsageReported
from agentcli.llm.types import ModelRequest, ModelResponse, StreamItem, Usage
from agentcli.session import factory
from agentcli.session.log import find_session
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.themes import ROLE_DEFAULTS
from agentcli.tui.widgets import StatusHeader
from tests.tui.helpers import make_app, make_session, wait_for, wait_idle


class HeaderApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def compose(self) -> Iterable[Widget]:
        yield StatusHeader()


def usage(total_in: int, total_out: int, cached: int = 0, *, estimated: bool = False) -> UsageReported:
    return UsageReported(model="m", input_tokens=total_in, output_tokens=total_out, cost=None,
                         total_input_tokens=total_in, total_output_tokens=total_out, total_cost=None,
                         total_cache_read_tokens=cached, estimated=estimated)


async def test_the_cache_share_shows_once_the_session_read_from_the_cache() -> None:
    app = HeaderApp()
    async with app.run_test(size=(120, 3)) as pilot:
        header = app.query_one(StatusHeader)
        header.post_message(SessionEventPosted(usage(42_100, 1_200)))
        await wait_for(pilot, lambda: header.input_tokens == 42_100)
        assert "42.1k in / 1.2k out" in header.render().plain
        header.post_message(SessionEventPosted(usage(84_200, 2_400, cached=73_300)))
        await wait_for(pilot, lambda: header.input_tokens == 84_200)
        assert "84.2k in (87% cached) / 2.4k out" in header.render().plain


async def test_estimated_usage_is_marked_for_the_rest_of_the_session() -> None:
    app = HeaderApp()
    async with app.run_test(size=(120, 3)) as pilot:
        header = app.query_one(StatusHeader)
        header.post_message(SessionEventPosted(usage(1_012, 57, estimated=True)))
        header.post_message(SessionEventPosted(usage(2_024, 114)))  # reported: the totals still hold an estimate
        await wait_for(pilot, lambda: header.input_tokens == 2_024)
        assert "~2.0k in / ~114 out" in header.render().plain


class CachedModel:
    """Reads from the prompt cache as an Anthropic model does from its second call on."""

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.calls += 1
        last = self.calls == 2
        call = ToolCallRequest(id=f"c{self.calls}", name="complete" if last else "read_file",
                               arguments='{"summary": "s"}' if last else '{"path": "textstats.py"}')
        read = 0 if self.calls == 1 else 9_000
        yield ModelResponse(text="", tool_calls=[call], finish_reason="tool_calls", cost=0.01, model="m",
                            usage=Usage(input_tokens=10_000, output_tokens=100, cache_read_tokens=read))


async def test_the_header_shows_the_cache_share_of_a_live_and_of_a_reopened_session(project: Path) -> None:
    session = make_session(project, CachedModel(), session_id="cac4e0000000", record=True, data_dir=data_home())
    app = make_app(project, session, initial_prompt="go")
    async with app.run_test(size=(130, 30)) as pilot:
        await wait_idle(pilot, app)
        assert "20.0k in (45% cached) / 200 out" in app.status.render().plain
    session.close()

    reopened = factory.resume_session(find_session(data_home(), "cac4e0000000"), session.settings,
                                      model_client=CachedModel())
    app = make_app(project, reopened)
    async with app.run_test(size=(130, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert "20.0k in (45% cached) / 200 out" in app.status.render().plain
    reopened.close()


async def test_the_context_figure_follows_requests_and_compactions() -> None:
    from agentcli.events import ContextCompacted

    app = HeaderApp()
    async with app.run_test(size=(160, 3)) as pilot:
        header = app.query_one(StatusHeader)
        request = UsageReported(model="m", input_tokens=42_000, output_tokens=10, cost=None, total_input_tokens=42_000,
                                total_output_tokens=10, total_cost=None, context_window=200_000)
        header.post_message(SessionEventPosted(request))
        await wait_for(pilot, lambda: header.context_tokens == 42_000)
        assert "ctx 42.0k/200k ▰▱▱▱▱" in header.render().plain
        header.post_message(SessionEventPosted(ContextCompacted(summary="s", replaced=9, tokens_before=170_000,
                                                                tokens_after=21_000, window=200_000)))
        await wait_for(pilot, lambda: header.context_tokens == 21_000)
        assert "ctx 21.0k/200k" in header.render().plain
        full = UsageReported(model="m", input_tokens=170_000, output_tokens=10, cost=None, total_input_tokens=1,
                             total_output_tokens=1, total_cost=None, context_window=200_000)
        header.post_message(SessionEventPosted(full))
        await wait_for(pilot, lambda: header.context_tokens == 170_000)
        assert "ctx 170k/200k ▰▰▰▰▱" in header.render().plain


async def test_a_session_without_a_known_window_shows_no_context_figure() -> None:
    app = HeaderApp()
    async with app.run_test(size=(160, 3)) as pilot:
        header = app.query_one(StatusHeader)
        header.post_message(SessionEventPosted(usage(1_000, 10)))
        await wait_for(pilot, lambda: header.input_tokens == 1_000)
        assert "ctx" not in header.render().plain


async def test_at_80_columns_the_header_keeps_the_model_and_the_session_id() -> None:
    """At 80x24 the header ended at the model, cut: the session id (what resume needs) never
    showed."""
    app = HeaderApp()
    async with app.run_test(size=(80, 3)) as pilot:
        header = app.query_one(StatusHeader)
        header.state, header.phase, header.waiting_for = "idle", "work", "task"
        header.model, header.workspace, header.session_id = "openai/gpt-4o", "~/src/project", "5e55a1d0c0de"
        header.post_message(SessionEventPosted(usage(14_100, 517)))
        await wait_for(pilot, lambda: header.input_tokens == 14_100)
        shown = header.render().plain
        assert shown.startswith("○ idle · work · 14.1k in / 517 out")
        assert shown.index("5e55a1d0c0de") + len("5e55a1d0c0de") <= header.content_size.width, shown
        assert "openai/gpt-4o" in shown
    app = HeaderApp()
    async with app.run_test(size=(200, 3)) as pilot:
        header = app.query_one(StatusHeader)
        header.state, header.phase, header.model = "idle", "work", "replay:recording.json"
        await wait_for(pilot, lambda: header.content_size.width > 0)
        assert header.render().plain.startswith("○ idle  ·  phase work  ·  "), "room enough: as before"


async def test_the_cost_shows_once_known_and_an_unknown_price_says_so() -> None:
    app = HeaderApp()
    async with app.run_test(size=(120, 3)) as pilot:
        header = app.query_one(StatusHeader)
        header.model = "m"
        await pilot.pause()
        assert "$" not in header.render().plain, "no cost before a call reported one"
        priced = UsageReported(model="m", input_tokens=1_000, output_tokens=50, cost=0.0123,
                               total_input_tokens=1_000, total_output_tokens=50, total_cost=0.0123)
        header.post_message(SessionEventPosted(priced))
        await wait_for(pilot, lambda: header.input_tokens == 1_000)
        assert "$0.0123" in header.render().plain and header.tooltip is None
        header.post_message(SessionEventPosted(usage(2_000, 100)))  # a model with no price: total unknown
        await wait_for(pilot, lambda: header.input_tokens == 2_000)
        line = header.render().plain
        assert "no price" in line and "?" not in line and "$" not in line, line
        assert isinstance(header.tooltip, str) and "no price" in header.tooltip, "the header explains it"
