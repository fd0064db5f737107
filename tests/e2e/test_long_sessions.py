"""Sessions longer than the model's window go on: compacted before they overflow, recovered when
the provider says they did, and resumed with the exact same view.

The local OpenAI-compatible server refuses any request whose prompt plus ``max_tokens`` passes
its limit, with OpenAI's own 400 (``context_length_exceeded``), and reports the prompt's size as
it counts it; litellm's real code path carries every request.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentcli.config import ContextSettings, ModelLimitSettings, ModelRoles, RetrySettings, Settings
from agentcli.events import ContextCompacted, TurnEnded, UsageReported
from agentcli.session.factory import new_session, resume_session
from agentcli.session.log import list_sessions
from tests.support.openai_server import Call, OpenAIServer, Reply, count_tokens
from tests.support.sessions import Recorder

MODEL = "openai/small-local-model"
LINE = "x" * 70


def _files(workspace: Path, count: int) -> None:
    """Files whose read_file output is about 2,000 tokens each (as the server counts)."""
    for number in range(1, count + 1):
        (workspace / f"f{number}.txt").write_text("\n".join(f"{number:04d} {LINE}" for _ in range(100)) + "\n")


def _model(server: OpenAIServer, steps: int) -> dict[str, int]:
    """A model that reads the files one per step, then completes; it writes a summary whenever
    it is asked for one (a request without tools)."""
    progress = {"step": 0, "summaries": 0}

    def answer(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            progress["summaries"] += 1
            return Reply(text=f"Read files 1 to {progress['step']} so far; each holds its number. Next: read on.")
        progress["step"] += 1
        if progress["step"] > steps:
            return Reply(calls=[Call("complete", {"summary": f"read {steps} files"})])
        return Reply(calls=[Call("read_file", {"path": f"f{progress['step']}.txt"})])

    server.default = answer
    return progress


def _settings(server: OpenAIServer, window: int, **context: Any) -> Settings:
    return Settings(model=MODEL, api_base=server.base_url, retry=RetrySettings(attempts=2, base_delay_s=0.01),
                    max_steps=500,
                    models=ModelRoles(limits={MODEL: ModelLimitSettings(context_window=window)}),
                    context=ContextSettings(**context))


@pytest.mark.parametrize("window", [8192, 32768])
async def test_two_hundred_steps_of_2k_token_outputs_complete_without_a_rejected_request(
    window: int, workspace: Path, isolated_dirs: Path
) -> None:
    _files(workspace, 200)
    with OpenAIServer(context_limit=window).start() as server:
        progress = _model(server, 200)
        session = new_session(workspace, _settings(server, window), data_dir=isolated_dirs / "d", record=False,
                              default_permission_mode="all")
        rec = Recorder()
        session.subscribe(rec)
        ended = await asyncio.wait_for(session.run_turn("read every file"), 240)
    assert ended.outcome == "completed", ended
    assert progress["step"] == 201 and not server.rejected
    compactions = rec.of(ContextCompacted)
    assert compactions and all(c.reason == "threshold" and c.tokens_after < c.tokens_before for c in compactions)
    assert max(count_tokens(body) + body["max_tokens"] for body in server.requests) <= window
    assert all(u.context_window == window for u in rec.of(UsageReported))


async def test_an_overflow_is_compacted_and_retried_once_and_the_stated_window_is_believed(
    workspace: Path, isolated_dirs: Path
) -> None:
    """The config says 32k, the server holds 8k: the first overflow is recovered from (the
    output limit the stated window allows, cut outputs or a summary, as much as it takes) and the
    step retried; from then on the agent compacts before the server's limit, never after."""
    _files(workspace, 30)
    with OpenAIServer(context_limit=8192).start() as server:
        _model(server, 30)
        session = new_session(workspace, _settings(server, 32768), data_dir=isolated_dirs / "d", record=False,
                              default_permission_mode="all")
        rec = Recorder()
        session.subscribe(rec)
        ended = await asyncio.wait_for(session.run_turn("read every file"), 120)
    assert ended.outcome == "completed", ended
    assert len(server.rejected) == 1, "the first overflow, and no other"
    compactions = rec.of(ContextCompacted)
    assert compactions and all(c.window == 8192 and c.tokens_after < c.tokens_before for c in compactions)


async def test_an_overflow_that_compacting_cannot_cure_pauses_with_the_figures(
    workspace: Path, isolated_dirs: Path
) -> None:
    """The user's own message is larger than the whole window: no output to cut, nothing older to
    summarize. (A tool output that large is cut to the window once it is known: see
    test_context_recovery.)"""
    with OpenAIServer(context_limit=4096).start() as server:
        server.default = lambda body: Reply(text="a summary") if not body.get("tools") else Reply(
            calls=[Call("complete", {"summary": "s"})])
        session = new_session(workspace, _settings(server, 65536), data_dir=isolated_dirs / "d", record=False,
                              default_permission_mode="all")
        ended = await asyncio.wait_for(session.run_turn(("y" * 79 + "\n") * 600), 60)
    assert ended.outcome == "paused" and "does not fit" in ended.reason and "4,096-token window" in ended.reason
    assert "compacting could not make room (there is nothing older to summarize)" in ended.reason
    assert len(server.rejected) == 1


async def test_resume_after_compaction_sends_the_same_view(workspace: Path, isolated_dirs: Path) -> None:
    _files(workspace, 20)
    data = isolated_dirs / "data" / "agentcli"
    with OpenAIServer(context_limit=8192).start() as server:
        _model(server, 12)
        first = new_session(workspace, _settings(server, 8192), data_dir=data, default_permission_mode="all")
        assert (await asyncio.wait_for(first.run_turn("read files"), 120)).outcome == "completed"
        view = first.turn.messages.view()
        first.close()
    entry = list_sessions(data, workspace)[0]
    again = resume_session(entry, _settings(server, 8192), data_dir=data)
    assert again.turn.messages.view() == view
    assert any(m["content"].startswith("[Summary of the earlier part") for m in view if m["role"] == "user")
    again.close()


async def test_compact_on_request_ends_where_it_was_asked(workspace: Path, isolated_dirs: Path) -> None:
    _files(workspace, 10)
    with OpenAIServer(context_limit=10**6).start() as server:
        _model(server, 6)
        session = new_session(workspace, _settings(server, 200_000), data_dir=isolated_dirs / "d", record=False,
                              default_permission_mode="all")
        rec = Recorder()
        session.subscribe(rec)
        assert (await asyncio.wait_for(session.run_turn("read files"), 60)).outcome == "completed"
        await session.compact("which files were read")
        ended = await asyncio.wait_for(session.wait_turn(), 60)
    assert ended.outcome == "completed" and "context compacted" in ended.reason
    assert session.view.control == "idle"
    compacted = rec.of(ContextCompacted)[-1]
    assert compacted.reason == "manual" and compacted.tokens_after < compacted.tokens_before
    summary_request = [body for body in server.requests if not body.get("tools")][-1]
    assert "which files were read" in summary_request["messages"][-1]["content"]
    assert isinstance(rec.events[-1], TurnEnded)


def test_agentcli_compact_summarizes_a_waiting_session(workspace: Path, isolated_dirs: Path) -> None:
    from typer.testing import CliRunner

    from agentcli.cli import app
    from agentcli.config import data_home
    from agentcli.session.log import read_events

    _files(workspace, 8)
    with OpenAIServer(context_limit=10**6).start() as server:
        _model(server, 6)
        model = ["--model", MODEL, "--api-base", server.base_url, "--cwd", str(workspace)]
        runner = CliRunner()
        assert runner.invoke(app, ["run", "read files", *model, "-o", "jsonl"]).exit_code == 0
        compacted = runner.invoke(app, ["compact", "--last", "--focus", "file numbers", *model])
    assert compacted.exit_code == 0, compacted.output
    assert "context compacted" in compacted.output
    events = list(read_events(list_sessions(data_home(), workspace)[0].directory))
    assert any(isinstance(e, ContextCompacted) and e.reason == "manual" for e in events)


def test_the_long_session_bench_runs_and_prints_its_figures() -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "bench" / "long_session.py"
    run = subprocess.run([sys.executable, str(script), "--steps", "12", "--window", "8192"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "outcome: completed" in run.stdout and "refused requests: 0" in run.stdout
    assert "compactions:" in run.stdout and "% of the window" in run.stdout
