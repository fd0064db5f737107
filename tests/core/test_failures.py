"""Every piece of work a state invokes can fail, and no failure leaves a session without an end.

An exception is injected into each: the model stream, every tool, the capture before a turn and
after a call, a restore, the checks and the explore subagent. The turn ends (in ``halted`` with
outcome ``error``), the log has an ``ErrorOccurred`` with the exception's type and traceback, and
the session goes on when resumed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.config import Settings
from agentcli.events import AssistantMessage, ErrorOccurred, ToolCallFinished, ToolCallStarted, TurnEnded
from agentcli.llm.types import ModelRequest, StreamItem, TextChunk
from agentcli.session import CommandFailed, Session
from agentcli.session.factory import new_session, resume_session
from agentcli.session.log import list_sessions, read_events
from agentcli.workflow.model import Phase, Workflow
from tests.support.sessions import Recorder, make_session, replay

EVERY_TOOL = Workflow(
    name="every-tool",
    description="One phase that offers every tool, workflow tools included.",
    phases=[Phase(name="work", tools=["*", "think", "create_plan", "update_plan", "run_checks", "finish_phase",
                                       "explore"])],
    initial="work",
)

VALID_ARGUMENTS: dict[str, dict[str, Any]] = {
    "read_file": {"path": "a.txt"},
    "write_file": {"path": "b.txt", "content": "b\n"},
    "edit_file": {"path": "a.txt", "old_string": "a", "new_string": "A"},
    "list_files": {},
    "glob": {"pattern": "*.txt"},
    "grep": {"pattern": "a"},
    "bash": {"command": "true"},
    "complete": {"summary": "done"},
    "clarify": {"question": "which?"},
    "pause": {"reason": "waiting"},
    "think": {"thought": "hm", "thought_number": 1, "total_thoughts": 1, "next_thought_needed": False},
    "create_plan": {"steps": [{"title": "one", "acceptance": "it works"}]},
    "update_plan": {"step": 1},
    "run_checks": {},
    "finish_phase": {"summary": "done"},
    "explore": {"task": "where is a?"},
}
"""Arguments each tool accepts, so the injected failure comes from inside its ``run``."""


class Injected(RuntimeError):
    """The failure the tests inject."""


def _every_tool_session(workspace: Path, client: Any) -> tuple[Session, Recorder]:
    session = Session(workspace=workspace, settings=Settings(), workflow=EVERY_TOOL, model_client=client)
    recorder = Recorder()
    session.subscribe(recorder)
    return session, recorder


def _assert_failed_and_paired(session: Session, rec: Recorder, ended: TurnEnded, where: str) -> None:
    assert ended.outcome == "error" and "Injected" in ended.reason and where in ended.reason, ended
    assert session.view.control == "halted"
    error = rec.of(ErrorOccurred)[-1]
    assert error.exception == "Injected" and error.fatal and error.traceback and "raise Injected" in error.traceback
    started = {e.call_id for e in rec.of(ToolCallStarted)}
    assert started <= {e.call_id for e in rec.of(ToolCallFinished)}, "every call that started has a result"


def test_every_tool_has_a_case() -> None:
    session, _ = _every_tool_session(Path("."), replay())
    assert set(session.turn.tools.names) == set(VALID_ARGUMENTS)


@pytest.mark.parametrize("tool", sorted(VALID_ARGUMENTS))
async def test_a_tool_that_raises_ends_the_turn_halted_and_the_session_goes_on(
    tool: str, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "a.txt").write_text("a\n")
    client = replay(("", [(tool, VALID_ARGUMENTS[tool])]), ("", [("complete", {"summary": "recovered"})]))
    session, rec = _every_tool_session(workspace, client)

    async def explode(*args: Any, **kwargs: Any) -> Any:
        raise Injected(f"{tool} broke")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(session.turn.tools[tool], "run", explode)
        ended = await asyncio.wait_for(session.run_turn("go"), 20)
    _assert_failed_and_paired(session, rec, ended, f"running {tool}")
    result = rec.of(ToolCallFinished)[-1]
    assert result.name == tool and not result.ok and "failed unexpectedly" in result.output
    await session.resume("try something else")
    assert (await asyncio.wait_for(session.wait_turn(), 20)).outcome == "completed"


class BrokenStream:
    """Streams some text, then fails in a way no model client should (a bug, not an API error)."""

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.calls += 1
        if self.calls == 1:
            yield TextChunk("Let me look")
            raise Injected("the stream broke")
        async for item in replay(("", [("complete", {"summary": "ok"})])).stream(request):
            yield item


async def test_a_model_stream_that_raises_keeps_the_text_and_ends_the_turn(workspace: Path) -> None:
    session, rec = make_session(workspace, BrokenStream())
    ended = await asyncio.wait_for(session.run_turn("go"), 20)
    _assert_failed_and_paired(session, rec, ended, "calling the model")
    cut = rec.of(AssistantMessage)[-1]
    assert cut.interrupted and cut.text == "Let me look"
    await session.resume()
    assert (await asyncio.wait_for(session.wait_turn(), 20)).outcome == "completed"


@pytest.mark.parametrize("when", ["before the turn", "after write_file"])
async def test_a_capture_that_raises_ends_the_turn(
    when: str, workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.snapshots import SnapshotStore

    client = replay(("", [("write_file", {"path": "x.txt", "content": "x"})]), ("", [("complete", {"summary": "s"})]))
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "d", record=False,
                          default_permission_mode="all")
    rec = Recorder()
    session.subscribe(rec)
    real = SnapshotStore.capture

    def capture(store: SnapshotStore, **kwargs: Any) -> Any:
        if (kwargs.get("tool_name") is None) == (when == "before the turn"):
            raise Injected("the store broke")
        return real(store, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SnapshotStore, "capture", capture)
        ended = await asyncio.wait_for(session.run_turn("go"), 20)
    _assert_failed_and_paired(session, rec, ended, "capturing the workspace")
    await session.resume()
    assert (await asyncio.wait_for(session.wait_turn(), 20)).outcome == "completed"
    session.close()


async def test_a_store_error_during_capture_is_reported_and_the_run_goes_on(
    workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.snapshots import SnapshotError, SnapshotStore

    client = replay(("", [("write_file", {"path": "x.txt", "content": "x"})]), ("", [("complete", {"summary": "s"})]))
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "d", record=False,
                          default_permission_mode="all")
    rec = Recorder()
    session.subscribe(rec)

    def capture(store: SnapshotStore, **kwargs: Any) -> Any:
        raise SnapshotError("the disk is full")

    monkeypatch.setattr(SnapshotStore, "capture", capture)
    assert (await asyncio.wait_for(session.run_turn("go"), 20)).outcome == "completed"
    errors = [e for e in rec.of(ErrorOccurred) if e.kind == "snapshot"]
    assert len(errors) == 2 and "the disk is full" in errors[0].message  # before the turn, after the write
    session.close()


async def test_a_restore_that_raises_is_logged_and_the_session_goes_on(
    workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.snapshots import SnapshotStore

    client = replay(("", [("write_file", {"path": "x.txt", "content": "x"})]), ("", [("complete", {"summary": "s"})]),
                    ("", [("complete", {"summary": "again"})]))
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "d", record=False,
                          default_permission_mode="all")
    rec = Recorder()
    session.subscribe(rec)
    await session.run_turn("go")

    def restore(store: SnapshotStore, *args: Any, **kwargs: Any) -> Any:
        raise Injected("the restore broke")

    monkeypatch.setattr(SnapshotStore, "restore", restore)
    with pytest.raises(CommandFailed, match="the restore failed: Injected: the restore broke"):
        await session.restore("1")
    error = rec.of(ErrorOccurred)[-1]
    assert error.exception == "Injected" and error.traceback
    assert (await asyncio.wait_for(session.run_turn("next"), 20)).outcome == "completed"
    session.close()


async def test_checks_that_raise_end_the_turn(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentcli.tools.run_checks as run_checks

    def detect(workspace: Path) -> Any:
        raise Injected("detecting the checks broke")

    monkeypatch.setattr(run_checks, "detect_checks", detect)
    session, rec = _every_tool_session(workspace, replay(("", [("run_checks", {})])))
    ended = await asyncio.wait_for(session.run_turn("go"), 20)
    _assert_failed_and_paired(session, rec, ended, "running run_checks")


async def test_an_explore_subagent_whose_model_breaks_returns_an_error_result(workspace: Path) -> None:
    class ChildBreaks:
        """The parent asks for explore; the child's model call breaks; the parent then completes."""

        def __init__(self) -> None:
            self.calls = 0

        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
            self.calls += 1
            if self.calls == 2:
                raise Injected("the child's model broke")
                yield  # an async generator
            turn = ("", [("explore", {"task": "where?"})]) if self.calls == 1 else ("", [("complete", {"summary": "s"})])
            async for item in replay(turn).stream(request):
                yield item

    session, rec = _every_tool_session(workspace, ChildBreaks())
    ended = await asyncio.wait_for(session.run_turn("go"), 20)
    assert ended.outcome == "completed"
    result = next(e for e in rec.of(ToolCallFinished) if e.name == "explore")
    assert not result.ok and "ended without a summary (error" in result.output and "Injected" in result.output


def test_headless_exits_1_with_the_error_in_the_log_and_resume_goes_on(
    workspace: Path, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.cli import app
    from agentcli.config import data_home
    from agentcli.tools.files import ReadFile

    (workspace / "a.txt").write_text("a\n")
    recording = tmp_path / "recording.json"
    recording.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"tool_calls": [{"name": "complete", "arguments": {"summary": "recovered"}}]},
    ]}))

    async def explode(*args: Any, **kwargs: Any) -> Any:
        raise Injected("reading broke")

    runner = CliRunner()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ReadFile, "run", explode)
        first = runner.invoke(app, ["run", "go", "--model", f"replay:{recording}", "--cwd", str(workspace)])
    assert first.exit_code == 1, first.output
    assert "reading broke" in first.output and "Traceback" not in first.output  # the log has it
    entry = list_sessions(data_home(), workspace)[0]
    errors = [e for e in read_events(entry.directory) if isinstance(e, ErrorOccurred)]
    assert errors and errors[-1].exception == "Injected" and "reading broke" in (errors[-1].traceback or "")
    second = runner.invoke(app, ["resume", "--last", "go on", "--cwd", str(workspace), "-o", "jsonl"])
    assert second.exit_code == 0, second.output
    resumed = resume_session(entry, Settings())
    assert resumed.view.control == "idle"
    resumed.close()
