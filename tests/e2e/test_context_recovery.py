"""A provider that holds less than the agent assumed: what the session does once it says so.

The local servers refuse a request past their window with the provider's own 400, naming the
figures; the session believes them, cuts what it already holds to the window now known, and
carries on, or pauses saying why nothing could make room and what the user can do.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentcli.config import ContextSettings, ModelLimitSettings, ModelRoles, RetrySettings, Settings
from agentcli.describe import describe
from agentcli.events import ContextCompacted, UserMessage
from agentcli.session.factory import new_session, resume_session
from agentcli.session.log import list_sessions
from agentcli.session.rewind import RewindTracker
from tests.llm_servers.conftest import API_KEY
from tests.support.anthropic_server import AnthropicServer
from tests.support.anthropic_server import Call as AnthropicCall
from tests.support.anthropic_server import Reply as AnthropicReply
from tests.support.openai_server import Call, OpenAIServer, Reply, count_tokens
from tests.support.sessions import Recorder

MODEL = "openai/small-local-model"


def _settings(server: OpenAIServer, window: int, **context: Any) -> Settings:
    return Settings(model=MODEL, api_base=server.base_url, retry=RetrySettings(attempts=2, base_delay_s=0.01),
                    models=ModelRoles(limits={MODEL: ModelLimitSettings(context_window=window)}),
                    context=ContextSettings(**context))


def _summaries_then(answer: Any) -> Any:
    """A model that writes a summary when asked for one (a request without tools)."""
    return lambda body: Reply(text="Read big.txt; it holds numbered lines.") if not body.get("tools") else answer(body)


async def test_outputs_already_held_are_cut_to_a_window_the_provider_states_and_the_turn_goes_on(
    workspace: Path, isolated_dirs: Path
) -> None:
    """The config says 64k, the server holds 8k: the read made under the 64k assumption is
    cut to a quarter of the 8k the refusal names, the compaction makes real room, and the step is
    sent again and answered."""
    (workspace / "big.txt").write_text("".join(f"{n:05d} {'z' * 73}\n" for n in range(400)))  # 32k chars
    with OpenAIServer(context_limit=8192).start() as server:
        server.add(Reply(calls=[Call("read_file", {"path": "big.txt"})]))
        server.default = _summaries_then(lambda body: Reply(calls=[Call("complete", {"summary": "read it"})]))
        data = isolated_dirs / "d"
        session = new_session(workspace, _settings(server, 65536), data_dir=data, default_permission_mode="all")
        rec = Recorder()
        session.subscribe(rec)
        ended = await asyncio.wait_for(session.run_turn("read big.txt"), 60)
        view = session.turn.messages.view()
        session.close()
    assert ended.outcome == "completed", ended
    assert len(server.rejected) == 1
    compaction = rec.of(ContextCompacted)[0]
    assert compaction.reason == "overflow" and compaction.tokens_after < compaction.tokens_before, compaction
    assert compaction.replaced == 0 and compaction.output_limit is not None, "the cut alone made room"
    shown = describe(compaction)
    assert shown is not None and f"tool outputs cut to {compaction.output_limit:,} characters" in shown.detail
    assert not [body for body in server.requests if not body.get("tools")], "no summary was needed"
    last = server.requests[-1]
    assert count_tokens(last) + last["max_tokens"] <= 8192
    output = next(m["content"] for m in last["messages"] if m["role"] == "tool")
    assert len(output) <= compaction.output_limit + 100 and "characters cut" in output
    assert output.startswith("     1\t00000") and "00399" in output, "the head and the tail are kept"
    again = resume_session(list_sessions(data, workspace)[0], _settings(server, 65536), data_dir=data)
    assert again.turn.messages.view() == view, "a resume cuts the outputs the same way"
    again.close()


def _long_summary(body: dict[str, Any]) -> Reply:
    """What a real model does with a small older part: a summary longer than what it stands for."""
    return Reply(text="Summary. " + "The user greeted the agent and it answered in kind. " * 60)


async def test_a_summary_longer_than_what_it_replaces_is_not_used_and_the_pause_says_why(
    workspace: Path, isolated_dirs: Path
) -> None:
    """The latest message alone overflows the window; the older part is one short exchange.
    Summarizing it would grow the request ("215.0k → 215.2k"): the view is left as it was, no
    marker claims a compaction, and the pause says nothing could make room and what to do."""
    with OpenAIServer(context_limit=8192).start() as server:
        server.add(Reply(calls=[Call("complete", {"summary": "hello"})]))
        server.default = lambda body: _long_summary(body) if not body.get("tools") else Reply(
            calls=[Call("complete", {"summary": "read"})])
        session = new_session(workspace, _settings(server, 65536), data_dir=isolated_dirs / "d", record=False,
                              default_permission_mode="all")
        rec = Recorder()
        session.subscribe(rec)
        assert (await asyncio.wait_for(session.run_turn("hello"), 60)).outcome == "completed"
        before = session.turn.messages.view()
        pasted = "".join(f"log line {n:05d} " + "q" * 60 + "\n" for n in range(600))  # ~10k tokens
        ended = await asyncio.wait_for(session.run_turn(pasted), 60)
    assert ended.outcome == "paused", ended
    assert "does not fit" in ended.reason and "8,192-token window" in ended.reason
    assert "compacting could not make room" in ended.reason and "no shorter" in ended.reason
    assert "narrower step" in ended.reason
    assert not rec.of(ContextCompacted)
    assert session.turn.messages.view()[:len(before)] == before, "the view lost nothing"
    assert len(server.rejected) == 1, "not sent again when nothing changed"


async def test_every_marker_shows_the_request_shrinking(workspace: Path, isolated_dirs: Path) -> None:
    """Overflows and threshold compactions over a long run: each marker's figures are the same
    measure, and after is below before."""
    for number in range(1, 16):
        (workspace / f"f{number}.txt").write_text("".join(f"{number:04d} {'x' * 70}\n" for _ in range(100)))
    step = {"n": 0}

    def answer(body: dict[str, Any]) -> Reply:
        step["n"] += 1
        if step["n"] > 15:
            return Reply(calls=[Call("complete", {"summary": "read them"})])
        return Reply(calls=[Call("read_file", {"path": f"f{step['n']}.txt"})])

    with OpenAIServer(context_limit=8192).start() as server:
        server.default = lambda body: _long_summary(body) if not body.get("tools") else answer(body)
        session = new_session(workspace, _settings(server, 32768), data_dir=isolated_dirs / "d", record=False,
                              default_permission_mode="all")
        rec = Recorder()
        session.subscribe(rec)
        ended = await asyncio.wait_for(session.run_turn("read every file"), 120)
    assert ended.outcome == "completed", ended
    markers = rec.of(ContextCompacted)
    assert markers and len(server.rejected) == 1
    assert all(m.tokens_after < m.tokens_before for m in markers), [(m.tokens_before, m.tokens_after) for m in markers]


async def test_anthropic_stating_a_smaller_window_is_believed_and_the_same_step_goes_on(
    workspace: Path, isolated_dirs: Path, monkeypatch: Any
) -> None:
    """Claude's own figure is 200k; this server holds 40k and refuses the prompt plus ``max_tokens``
    past it, as the API does. The window it names lowers the output limit sent, which by itself
    makes room: the step is sent again and answered, with nothing cut or summarized."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    (workspace / "big.txt").write_text("".join(f"{n:05d} {'z' * 73}\n" for n in range(320)))  # under a quarter of 40k
    with AnthropicServer(context_window=40_000).start() as server:
        server.add(AnthropicReply(calls=[AnthropicCall("read_file", {"path": "big.txt"})]))
        server.default = lambda body: AnthropicReply(text="Read big.txt.") if not body.get("tools") else (
            AnthropicReply(calls=[AnthropicCall("complete", {"summary": "read it"})]))
        settings = Settings(model="anthropic/claude-sonnet-4-5-20250929", api_base=server.base_url,
                            retry=RetrySettings(attempts=2, base_delay_s=0.01))
        session = new_session(workspace, settings, data_dir=isolated_dirs / "d", record=False,
                              default_permission_mode="all")
        rec = Recorder()
        session.subscribe(rec)
        ended = await asyncio.wait_for(session.run_turn("read big.txt"), 60)
    assert ended.outcome == "completed", ended
    refused = [r for r in server.responses() if r.status != 200]
    assert len(refused) == 1
    assert server.requests[-1]["max_tokens"] <= 10_000
    assert not [body for body in server.requests if not body.get("tools")], "nothing needed summarizing"
    assert not rec.of(ContextCompacted)


def test_a_cut_alone_moves_no_rewind_point() -> None:
    """Cutting outputs replaces no message: each user message keeps its place in the view (a
    summary would move the later ones to just after it)."""
    tracker = RewindTracker()
    tracker.see(UserMessage(text="read big.txt"), 0)
    tracker.see(UserMessage(text="now the tests"), 3)
    tracker.see(ContextCompacted(summary="", replaced=0, tokens_before=9000, tokens_after=4000, reason="overflow",
                                 output_limit=8000), 4)
    assert [point.message_index for point in tracker.points] == [0, 3]
    tracker.see(ContextCompacted(summary="s", replaced=3, tokens_before=4000, tokens_after=2000), 4)
    assert [point.message_index for point in tracker.points] == [None, 1]


async def test_a_compaction_asked_for_that_would_grow_the_view_says_so_and_changes_nothing(
    workspace: Path, isolated_dirs: Path
) -> None:
    with OpenAIServer(context_limit=10**6).start() as server:
        server.add(*(Reply(calls=[Call("complete", {"summary": said})]) for said in ("hello", "ok")))
        server.default = _long_summary
        session = new_session(workspace, _settings(server, 200_000), data_dir=isolated_dirs / "d", record=False,
                              default_permission_mode="all")
        rec = Recorder()
        session.subscribe(rec)
        assert (await asyncio.wait_for(session.run_turn("hi"), 60)).outcome == "completed"
        assert (await asyncio.wait_for(session.run_turn("and again"), 60)).outcome == "completed"
        view = session.turn.messages.view()
        await session.compact()
        ended = await asyncio.wait_for(session.wait_turn(), 60)
    assert ended.outcome == "completed"
    assert ended.reason == "compacting could not make room: a summary would be no shorter than what it replaces"
    assert not rec.of(ContextCompacted) and session.turn.messages.view() == view
