"""Stuck detection end to end, through litellm against the local server."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.events import ProgressReported, StuckDetected, ToolCallFinished
from tests.e2e.test_litellm_stream import _session
from tests.support.openai_server import Call, OpenAIServer, Reply


async def test_a_model_repeating_a_failing_edit_forever_is_halted_by_its_fifth_call(
    workspace: Path, server: OpenAIServer
) -> None:
    (workspace / "main.py").write_text("print('hello')\n")
    server.default = Reply(calls=[Call("edit_file", {"path": "main.py", "old_string": "print('helo')", "new_string": "x"})])
    session, rec = _session(workspace, server, max_steps=50)
    ended = await session.run_turn("fix the typo")
    assert ended.outcome == "halted"
    edits = rec.of(ToolCallFinished)
    assert len(edits) <= 5 and not any(e.ok for e in edits)
    verdicts = rec.of(StuckDetected)
    assert [v.severity for v in verdicts] == ["recover", "halt"]
    assert "main.py" in verdicts[0].evidence and "old_string not found" in verdicts[0].evidence
    assert verdicts[1].rule in ended.reason
    # The hint reached the model before it repeated itself once more.
    hinted = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert any("you appear to be stuck" in text and "main.py" in text for text in hinted)
    # Guidance lifts the halt: the user can resume with a new instruction.
    server.default = None
    server.add(Reply(calls=[Call("complete", {"summary": "gave up on the typo as told"})]))
    await session.resume("stop editing, just finish")
    assert (await session.wait_turn()).outcome == "completed"


# 300 steps in the session is the scale check (9 s; tests/progress checks the tracker alone on the
# same 300 edits, and on 1,000 steps, in milliseconds); 40 steps cross four progress reports.
@pytest.mark.parametrize("edits", [40, pytest.param(300, marks=pytest.mark.slow)])
async def test_distinct_productive_edits_complete_unflagged(workspace: Path, server: OpenAIServer, edits: int) -> None:
    def productive(request: dict[str, object]) -> Reply:
        done = sum(1 for m in request["messages"] if m["role"] == "tool")  # type: ignore[union-attr,index]
        if done >= edits:
            return Reply(calls=[Call("complete", {"summary": f"{edits} modules written"})], usage=None)
        return Reply(calls=[Call("write_file", {"path": f"pkg/mod_{done:03d}.py", "content": f"VALUE = {done}\n"})],
                     usage=None, chunk_size=64)

    server.default = productive
    session, rec = _session(workspace, server, max_steps=edits + 100)
    ended = await session.run_turn(f"write the {edits} modules")
    assert ended.outcome == "completed", ended.reason
    assert len(list((workspace / "pkg").iterdir())) == edits
    assert rec.of(StuckDetected) == []
    summaries = rec.of(ProgressReported)
    assert len(summaries) == edits // 10 and len(summaries[-1].files_modified) == edits
    assert summaries[-1].failures == 0
