"""Rewind, its undo and ``!command``, on real Sessions with real snapshots in a temporary
workspace; the model is a replayed recording (the network edge)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import data_home
from agentcli.events import ConversationRewound, ToolCallFinished
from agentcli.llm.replay import ReplayModel
from agentcli.session import SessionStateError
from agentcli.session.log import find_session, read_events
from agentcli.session.resume import rebuild
from tests.tui.helpers import make_session, recording

TWO_TURNS = recording(
    ("Writing.", [("write_file", {"path": "a.txt", "content": "one\n"})]),
    ("Done.", [("complete", {"summary": "wrote one"})]),
    ("Changing.", [("write_file", {"path": "a.txt", "content": "two\n"})]),
    ("Adding.", [("write_file", {"path": "b.txt", "content": "new\n"})]),
    ("Done.", [("complete", {"summary": "wrote two"})]),
)


async def _two_turns(workspace: Path):  # type: ignore[no-untyped-def]
    session = make_session(workspace, ReplayModel(TWO_TURNS), snapshots=True, record=True, data_dir=data_home())
    await session.run_turn("write one")
    before_second = session.turn.messages.view()
    await session.run_turn("make it two and add b")
    return session, before_second


async def test_rewind_both_then_undo_leaves_files_and_model_view_as_they_were(git_workspace: Path) -> None:
    session, before_second = await _two_turns(git_workspace)
    after_second = session.turn.messages.view()
    assert [p.text for p in session.rewind_points.points] == ["write one", "make it two and add b"]
    with pytest.raises(SessionStateError, match="no message #7"):
        await session.rewind(7)

    point = await session.rewind(2)
    assert point.text == "make it two and add b"
    assert (git_workspace / "a.txt").read_text() == "one\n"
    assert not (git_workspace / "b.txt").exists()
    view = session.turn.messages.view()
    assert view[: len(before_second)] == before_second
    assert "restored the workspace" in str(view[-1]["content"]), "the model is told the files went back"
    assert [p.number for p in session.rewind_points.points] == [1]

    await session.undo_rewind()
    assert (git_workspace / "a.txt").read_text() == "two\n"
    assert (git_workspace / "b.txt").read_text() == "new\n"
    assert session.turn.messages.view() == after_second
    assert [p.number for p in session.rewind_points.points] == [1, 2]
    with pytest.raises(SessionStateError, match="no rewind to undo"):
        await session.undo_rewind()
    session.close()


async def test_a_resumed_session_follows_the_rewound_branch(git_workspace: Path) -> None:
    session, before_second = await _two_turns(git_workspace)
    await session.rewind(2, code=False)
    assert (git_workspace / "b.txt").exists(), "only the conversation went back"
    expected = session.turn.messages.view()
    assert expected == before_second
    session.close()
    events = list(read_events(find_session(data_home(), session.id).directory))
    assert any(isinstance(e, ConversationRewound) for e in events)
    rebuilt = rebuild(events)
    assert rebuilt.messages == expected
    assert [p.number for p in rebuilt.rewind.points] == [1]


async def test_rewind_refuses_while_the_agent_is_waiting_for_an_answer(git_workspace: Path) -> None:
    rec = recording(("Which one?", [("clarify", {"question": "a or b?", "options": ["a", "b"]})]))
    session = make_session(git_workspace, ReplayModel(rec), snapshots=True, data_dir=data_home())
    await session.run_turn("do it")
    with pytest.raises(SessionStateError, match="answer its question"):
        await session.rewind(1)


async def test_a_user_command_runs_snapshotted_and_its_output_reaches_the_model(git_workspace: Path) -> None:
    session = make_session(git_workspace, ReplayModel(recording(("Seen.", [("complete", {"summary": "ok"})]))),
                           snapshots=True, data_dir=data_home())
    seen: list[object] = []
    session.subscribe(seen.append)
    finished = await session.run_shell("echo hello > c.txt && cat c.txt")
    assert finished.ok and "hello" in finished.output
    assert (git_workspace / "c.txt").read_text() == "hello\n"
    assert any(isinstance(e, ToolCallFinished) and e.call_id == finished.call_id for e in seen)
    timeline = await session.timeline()
    assert any(s.reason == "after !command" for s in timeline), "the command's change is on the timeline"
    note = session.turn.messages.view()[-1]
    assert note["role"] == "user" and "$ echo hello > c.txt && cat c.txt" in str(note["content"])
    await session.run_turn("what did it print?")
    assert any("hello" in str(m["content"]) for m in session.turn.messages.view() if m["role"] == "user")


async def test_a_deny_rule_refuses_a_user_command(git_workspace: Path) -> None:
    from agentcli.config import PermissionSettings

    session = make_session(git_workspace, ReplayModel(recording(("x", [("complete", {"summary": "ok"})]))),
                           permissions=PermissionSettings(deny=["bash:rm *"]))
    with pytest.raises(SessionStateError, match="not run"):
        await session.run_shell("rm -rf important")


async def test_a_secret_in_a_user_command_is_redacted_on_screen_and_for_the_model(
    git_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.events import ToolCallStarted

    secret = "sk-live-abcdefghijklmnop1234"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    session = make_session(git_workspace, ReplayModel(recording(("Seen.", [("complete", {"summary": "ok"})]))),
                           snapshots=True, data_dir=data_home())
    started: list[ToolCallStarted] = []
    session.subscribe(lambda e: started.append(e) if isinstance(e, ToolCallStarted) else None)
    finished = await session.run_shell(f"echo {secret} > /dev/null")
    assert finished.ok
    [call] = started
    assert secret not in call.arguments and secret not in call.preview
    note = str(session.turn.messages.view()[-1]["content"])
    assert "$ echo [redacted:OPENAI_API_KEY] > /dev/null" in note and secret not in note
