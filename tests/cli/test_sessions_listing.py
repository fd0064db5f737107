"""`agentcli sessions` in a narrow and a wide terminal: every column is there, figures whole."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.config import Settings
from agentcli.events import ToolCallRequest
from agentcli.llm.types import ModelRequest, ModelResponse, StreamItem, Usage
from agentcli.session.factory import new_session
from agentcli.session.log import read_meta
from tests.support.sessions import replay


class CachedModel:
    """Ends every turn at once, reporting usage with part of the input read from the prompt cache."""

    def __init__(self, calls: list[Usage]) -> None:
        self.calls = iter(calls)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        call = ToolCallRequest(id="c", name="complete", arguments='{"summary": "s"}')
        yield ModelResponse(text="", tool_calls=[call], finish_reason="tool_calls", usage=next(self.calls), cost=0.01,
                            model="anthropic/claude")


@pytest.mark.parametrize("width", [80, 160])
async def test_every_column_shows_and_states_and_figures_are_whole(
    width: int, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.cli import app

    title = "Find out why the tests of the text statistics module fail and fix the bug for good"
    session = new_session(workspace, Settings(), model_client=replay(("", [("complete", {"summary": "s"})])),
                          default_permission_mode="all")
    await session.run_turn(title)
    session.close()
    monkeypatch.setenv("COLUMNS", str(width))
    listing = CliRunner().invoke(app, ["sessions", "--all"]).output
    header, row = listing.splitlines()[:2]
    every = ["id", "age", "title", "state", "steps", "tokens", "cache", "peak", "cost", "workspace"]
    # At 160 every column shows; at 80 the least telling figures give way, so the title keeps room.
    dropped = {"peak", "steps", "cache"} if width == 80 else set()
    assert header.split() == [c for c in every if c not in dropped]
    assert session.id in row and "completed" in row and "no price" in row  # a replay has no price
    if width == 160:
        start = header.index("cache")  # the column is read where its heading stands: "no price" holds a space
        assert row[start:].split()[0] == "—", "nothing read from a cache"
    assert all(len(line) <= width for line in listing.splitlines())
    assert (title[:50] in row) == (width == 160)  # the title gives way first


async def test_the_cache_column_shows_the_share_of_input_read_from_the_prompt_cache(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.cli import app

    model = CachedModel([Usage(input_tokens=1000, output_tokens=10, cache_write_tokens=900),
                         Usage(input_tokens=1200, output_tokens=10, cache_read_tokens=1000, cache_write_tokens=150)])
    session = new_session(workspace, Settings(), model_client=model, default_permission_mode="all")
    await session.run_turn("first")
    await session.run_turn("second")
    session.close()
    assert session.log is not None
    meta = read_meta(session.log.directory)
    assert (meta.input_tokens, meta.cache_read_tokens) == (2200, 1000)  # writes are not reads

    monkeypatch.setenv("COLUMNS", "100")
    header, row = CliRunner().invoke(app, ["sessions", "--all"]).output.splitlines()[:2]
    assert row.startswith(session.id)
    columns = header.split()
    assert "cache" in columns and row.split()[columns.index("cache") - len(columns)] == "45%", row  # 1,000 of 2,200


def test_titles_and_file_names_in_brackets_are_text_not_markup(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.cli import app

    title = "why does [/] close [bold]this"
    model = replay(("", [("write_file", {"path": "[/]odd [b].txt", "content": "x\n"})]),
                   ("", [("complete", {"summary": "s"})]))
    session = new_session(workspace, Settings(), model_client=model, default_permission_mode="all")
    asyncio.run(session.run_turn(title))  # not an async test: the snapshot commands run their own loop
    session.close()
    monkeypatch.setenv("COLUMNS", "200")
    for command in (["sessions", "--cwd", str(workspace)], ["sessions", "--all"]):
        listed = CliRunner().invoke(app, command)
        assert listed.exit_code == 0, listed.output  # a MarkupError, and every later listing too
        assert title in listed.output
    timeline = CliRunner().invoke(app, ["--cwd", str(workspace), "snapshots"])
    assert timeline.exit_code == 0 and "[/]odd [b].txt +1 −0" in timeline.output, timeline.output
    # The first snapshot has nothing before it: it is the workspace as found, not "no file changes".
    assert "the workspace as found" in timeline.output and "no file changes" not in timeline.output
    changed = CliRunner().invoke(app, ["--cwd", str(workspace), "diff", "1"])
    assert changed.exit_code == 0 and "[/]odd [b].txt  +1 −0" in changed.output, changed.output


async def test_a_session_no_call_reported_usage_for_lists_no_cost(workspace: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcli.cli import app

    session = new_session(workspace, Settings(), model_client=replay(), default_permission_mode="all")
    await session.run_turn("the model fails before saying anything")
    session.close()
    monkeypatch.setenv("COLUMNS", "160")
    header, row = CliRunner().invoke(app, ["--cwd", str(workspace), "sessions"]).output.splitlines()[:2]
    assert "$0.0000" not in row, "as in the TUI: a cost only once a call reported its usage"
    assert row[header.index("cost"):].split()[0] == "—"


def test_a_transcript_explains_no_price_once() -> None:
    import io

    from rich.console import Console

    from agentcli.events import TurnEnded, UsageReported
    from agentcli.headless import TextPrinter

    out = io.StringIO()
    printer = TextPrinter(Console(file=out, width=200), echo_user=True)
    for turn in (1, 2):
        printer(UsageReported(model="ollama/x", input_tokens=10, output_tokens=5, cost=None,
                              total_input_tokens=10 * turn, total_output_tokens=5 * turn, total_cost=None))
        printer(TurnEnded(outcome="completed", reason="done", steps=1))
    printed = out.getvalue()
    assert printed.count(" · no price · 1 step") == 2, printed
    assert printed.count("no price: litellm has no price for a model this session used") == 1, printed
