"""The statechart: its graph as data, and the transitions a run takes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentcli.events import AssistantMessage, ModelNote, StateChanged, ToolCallFinished, TurnEnded
from agentcli.llm.types import ModelRequest, ModelResponse, StreamItem, TextChunk
from agentcli.session import SessionStateError
from agentcli.session.chart import CONTROL_STATES, WAITING_STATES, chart_class, chart_graph
from agentcli.workflow import builtin_workflow
from tests.support.sessions import make_session, replay
from tests.support.waiting import eventually, processes_with


def test_graph_exposes_both_regions_and_every_control_state() -> None:
    graph = chart_graph(chart_class(builtin_workflow("single")))
    assert graph.node("agent").kind == "parallel"
    assert {n.id for n in graph.children("agent")} == {"control", "phase"}
    assert [n.id for n in graph.children("control")] == list(CONTROL_STATES)
    assert [n.name for n in graph.children("phase")] == ["work"]
    assert graph.node("idle").initial


def test_graph_edges_name_events_and_guards() -> None:
    graph = chart_graph(chart_class(builtin_workflow("single")))
    edges = {(e.source, e.event, e.target): e.cond for e in graph.edges}
    assert edges[("idle", "user_message", "capturingBaseline")] == "has_snapshots"
    assert edges[("idle", "user_message", "thinking")] is None
    assert edges[("thinking", "done.invoke.thinking", "executingTool")] == "has_tool_calls"
    assert edges[("thinking", "done.invoke.thinking", "awaitingPermission")] == "needs_approval"
    assert edges[("thinking", "done.invoke.thinking", "reminded")] is None  # a reply without tools
    assert edges[("reminded", "done.invoke.reminded", "paused")] is None  # and again: pause
    assert edges[("thinking", "", "halted")] == "over_step_limit"  # taken on entry, no event
    assert edges[("executingTool", "done.invoke.executingTool", "idle")] == "is_complete"
    assert edges[("executingTool", "done.invoke.executingTool", "awaitingClarification")] == "is_clarify"
    assert edges[("executingTool", "done.invoke.executingTool", "capturingSnapshot")] == "modifies_files"
    assert edges[("reviewingProgress", "", "halted")] == "is_stuck"
    assert edges[("reviewingProgress", "", "executingTool")] == "has_pending_calls"
    assert ("paused", "resume", "thinking") in edges
    assert ("control", "error.execution", "halted") in edges  # any failure, in any state
    # No implicit initial entries masquerading as user-visible transitions.
    assert all(e.source != "agent" for e in graph.edges)


def test_every_running_state_has_work_or_moves_on_and_every_waiting_state_takes_a_command() -> None:
    """Nothing can stall: a state either runs work that completes, or leaves at once on its own,
    or waits for a user command it has a transition for."""
    chart = chart_class(builtin_workflow("single"))
    for name in CONTROL_STATES:
        state = chart.states_map[name]
        events = {event for t in state.transitions for event in t.events}
        eventless = [t for t in state.transitions if t.is_eventless]
        if name in WAITING_STATES:
            assert events & {"user_message", "answer", "approve", "resume"}, name
        elif eventless and not list(eventless[-1].cond):
            continue  # a choice step: its last transition has no guard, so it always leaves
        else:
            assert f"done.invoke.{name}" in events, name
            assert "pause" in events, name


async def test_every_tool_call_is_a_transition(workspace: Path) -> None:
    client = replay(
        ("", [("write_file", {"path": "a.txt", "content": "x\n"}), ("read_file", {"path": "a.txt"})]),
        ("", [("complete", {"summary": "done"})]),
    )
    session, rec = make_session(workspace, client)
    ended = await session.run_turn("go")
    assert ended.outcome == "completed" and ended.reason == "done"
    path = [(e.source, e.event, e.cond, e.target) for e in rec.of(StateChanged)]
    done = "done.invoke."
    assert path == [
        ("idle", "user_message", None, "thinking"),
        ("thinking", done + "thinking", "has_tool_calls", "executingTool"),
        ("executingTool", done + "executingTool", None, "reviewingProgress"),
        ("reviewingProgress", "", "has_pending_calls", "executingTool"),  # the second call of the reply
        ("executingTool", done + "executingTool", None, "reviewingProgress"),
        ("reviewingProgress", "", None, "thinking"),
        ("thinking", done + "thinking", "has_tool_calls", "executingTool"),
        ("executingTool", done + "executingTool", "is_complete", "idle"),
    ]
    assert session.configuration == ["agent", "control", "idle", "phase", "phase_work"]


async def test_max_steps_halts(workspace: Path) -> None:
    loop_turn = ("", [("list_files", {})])
    session, rec = make_session(workspace, replay(*[loop_turn] * 10), max_steps=3)
    ended = await session.run_turn("go")
    assert ended.outcome == "halted"
    assert "step limit reached (3" in ended.reason
    assert len(rec.of(ToolCallFinished)) == 3
    assert session.control_state == "halted"


async def test_stop_without_control_tool_gets_one_reminder_then_pauses(workspace: Path) -> None:
    session, rec = make_session(workspace, replay(("I think it's done.", []), ("Really done.", [])))
    ended = await session.run_turn("go")
    assert ended.outcome == "paused"
    assert ended.reason == "stopped without complete/clarify/pause"
    assert [n.kind for n in rec.of(ModelNote)] == ["reminder"]
    reminders = [m for m in session.turn.messages if m["role"] == "user" and "complete" in m["content"]]
    assert len(reminders) == 1


async def test_reminder_is_enough_when_the_model_then_completes(workspace: Path) -> None:
    session, _ = make_session(workspace, replay(("Done.", []), ("", [("complete", {"summary": "ok"})])))
    assert (await session.run_turn("go")).outcome == "completed"


async def test_clarify_waits_for_an_answer_then_continues(workspace: Path) -> None:
    client = replay(
        ("", [("clarify", {"question": "Tabs or spaces?", "options": ["tabs", "spaces"]})]),
        ("", [("complete", {"summary": "used spaces"})]),
    )
    session, rec = make_session(workspace, client)
    ended = await session.run_turn("format it")
    assert (ended.outcome, ended.reason) == ("clarify", "Tabs or spaces?")
    assert session.control_state == "awaitingClarification"
    with pytest.raises(SessionStateError):
        await session.send_user_message("something else")
    await session.answer("spaces")
    ended = await session.wait_turn()
    assert ended.outcome == "completed"
    last_user = [m for m in session.turn.messages if m["role"] == "user"][-1]
    assert "spaces" in last_user["content"] and "Tabs or spaces?" in last_user["content"]


async def test_calls_after_a_control_tool_get_results_and_do_not_run(workspace: Path) -> None:
    client = replay(("", [("complete", {"summary": "s"}), ("write_file", {"path": "never.txt", "content": ""})]))
    session, rec = make_session(workspace, client)
    await session.run_turn("go")
    assert not (workspace / "never.txt").exists()
    results = {m["tool_call_id"] for m in session.turn.messages if m["role"] == "tool"}
    calls = {c["id"] for m in session.turn.messages if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    assert results == calls


class SlowClient:
    """Streams text forever, slowly: a pause must cancel it.

    The sleep between chunks is the model's behaviour (a slow stream), not a wait of the test's:
    the test acts once ``started`` says the first chunk reached the session.
    """

    def __init__(self) -> None:
        self.cancelled = False
        self.started = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        try:
            for n in range(10_000):
                yield TextChunk(f"word{n} ")
                self.started.set()
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        yield ModelResponse(text="", tool_calls=[], finish_reason="stop", usage=None, cost=None, model="slow")


async def test_pause_while_thinking_cancels_the_stream_and_keeps_the_text(workspace: Path) -> None:
    client = SlowClient()
    session, rec = make_session(workspace, client)
    await session.send_user_message("talk")
    # Set when the session asks for the second chunk, so the first ("word0 ") is in its reply.
    await client.started.wait()
    await session.pause()
    ended = await session.wait_turn()
    assert ended.outcome == "paused" and ended.reason == "paused by the user"
    assert client.cancelled
    interrupted = [e for e in rec.of(AssistantMessage) if e.interrupted]
    assert len(interrupted) == 1 and interrupted[0].text.startswith("word0 ")
    # The turn ended after the interrupted reply was recorded, never before.
    assert rec.events.index(interrupted[0]) < rec.events.index(ended)


async def test_pause_while_executing_kills_the_command_and_pairs_every_call(workspace: Path) -> None:
    marker = workspace / "survived"
    sleep = f"sleep 30.{uuid.uuid4().int % 10**6:06d}"  # this test's command, told apart from others'
    client = replay(
        ("", [("bash", {"command": f"{sleep}; touch {marker}"}), ("read_file", {"path": "x"})]),
        ("", [("complete", {"summary": "resumed and done"})]),
    )
    session, rec = make_session(workspace, client)
    await session.send_user_message("go")
    await eventually(lambda: session.control_state == "executingTool" and processes_with(sleep),
                     what="the command to run")
    await session.pause()
    ended = await session.wait_turn()
    assert ended.outcome == "paused"
    finished = rec.of(ToolCallFinished)
    assert [f.interrupted for f in finished] == [True, False]
    assert "Interrupted" in finished[0].output and "Not run" in finished[1].output
    # Killed, not left to finish: gone long before its 30 s are up, and the marker never written.
    await eventually(lambda: not processes_with(sleep), what="the command to be killed", timeout=20)
    assert not marker.exists()
    await session.resume()
    assert (await session.wait_turn()).outcome == "completed"


async def test_turn_end_event_is_emitted_once_per_turn(workspace: Path) -> None:
    session, rec = make_session(workspace, replay(("", [("complete", {"summary": "a"})]), ("", [("complete", {"summary": "b"})])))
    await session.run_turn("one")
    await session.run_turn("two")
    assert [e.reason for e in rec.of(TurnEnded)] == ["a", "b"]


async def test_pausing_sets_a_pending_question_or_approval_aside(workspace: Path) -> None:
    from agentcli.events import ToolCallFinished as Finished

    client = replay(("", [("clarify", {"question": "Which?"})]), ("", [("bash", {"command": "ls"})]),
                    ("", [("complete", {"summary": "done"})]))
    session, rec = make_session(workspace, client)
    session.turn.policy.mode = "ask"
    assert (await session.run_turn("go")).outcome == "clarify"
    await session.pause()
    assert session.control_state == "paused" and session.pending_question is None
    await session.resume("whichever")
    assert (await session.wait_turn()).outcome == "approval"  # the bash call waits for approval
    assert session.control_state == "awaitingPermission"
    await session.pause()
    assert session.control_state == "paused" and session.pending_permission is None
    assert "waited for approval" in rec.of(Finished)[-1].output  # the call still got its result
    await session.resume()
    assert (await session.wait_turn()).outcome == "completed"
