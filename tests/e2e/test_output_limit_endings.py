"""A turn the output limit keeps cutting short ends saying so, not "stopped without complete"."""

from __future__ import annotations

from pathlib import Path

from agentcli.config import ModelLimitSettings, ModelRoles, RetrySettings
from agentcli.describe import describe
from agentcli.events import ModelNote
from agentcli.llm.litellm_client import LiteLLMClient
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.sessions import make_session

MODEL = "openai/test-model"


def _session(workspace: Path, server: OpenAIServer):  # type: ignore[no-untyped-def]
    client = LiteLLMClient(RetrySettings(attempts=3, base_delay_s=0.01))
    limits = ModelRoles(limits={MODEL: ModelLimitSettings(max_output_tokens=1000)})
    return make_session(workspace, client, model=MODEL, api_base=server.base_url, models=limits)


def _cut_off() -> Reply:
    """A long write the output limit cut off inside its arguments (the call never finished)."""
    return Reply(text="Writing it all.", calls=[Call("write_file", '{"path": "big.txt", "content": "aaa')],
                 finish_reason="length")


async def test_two_cut_offs_in_a_row_pause_naming_the_output_limit_and_what_to_change(
    workspace: Path, server: OpenAIServer
) -> None:
    server.add(_cut_off(), _cut_off())
    session, rec = _session(workspace, server)
    ended = await session.run_turn("write big.txt")
    assert ended.outcome == "paused"
    assert "stopped without" not in ended.reason
    assert "cut off by the output limit of 1,000 tokens twice in a row" in ended.reason
    assert 'max_output_tokens under [models.limits."openai/test-model"]' in ended.reason
    assert "smaller steps" in ended.reason
    assert server.requests[1]["max_tokens"] == 1000
    notes = rec.of(ModelNote)
    assert [n.kind for n in notes] == ["truncated"], "not shown as a plain stop without complete"
    shown = describe(notes[0])
    assert shown is not None and "output limit cut the reply off" in shown.text


async def test_a_cut_off_after_a_plain_stop_names_the_limit_once(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(text="Thinking aloud, no call."), _cut_off())
    session, _ = _session(workspace, server)
    ended = await session.run_turn("write big.txt")
    assert ended.outcome == "paused"
    assert "cut off by the output limit of 1,000 tokens after a reminder" in ended.reason


async def test_two_plain_stops_still_say_no_control_tool_was_called(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(text="Done, I think."), Reply(text="Really done."))
    session, _ = _session(workspace, server)
    ended = await session.run_turn("go")
    assert ended.outcome == "paused" and ended.reason == "stopped without complete/clarify/pause"
