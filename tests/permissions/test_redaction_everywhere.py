"""A secret typed by the user or written by the model is redacted on screen and in requests.

Tool output was redacted, and the log; but a key in the user's prompt went to the model in every
request, and the model's own text showed a key on screen. Every event a front end renders and
every message sent to the model now goes through the same redactor.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.config import Settings
from agentcli.events import Event
from agentcli.llm.types import ModelRequest, StreamItem
from agentcli.secrets import Redactor
from agentcli.session.factory import new_session
from tests.support.sessions import replay

SECRET = "sk-live-abcdefghijklmnop1234"
SHAPED = "ghp_" + "A1b2C3d4E5" * 4  # a GitHub token by its shape, in no variable


class Recording:
    """The replay model, keeping every request it was sent (the network edge)."""

    def __init__(self, *turns: tuple[str, list[tuple[str, dict[str, object] | str]]]) -> None:
        self.model = replay(*turns)
        self.requests: list[ModelRequest] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.requests.append(request)
        async for item in self.model.stream(request):
            yield item


async def test_secrets_in_the_prompt_and_the_reply_are_redacted_on_screen_and_in_requests(
    workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    client = Recording(
        (f"Your key {SECRET} and the token {SHAPED} are set.", [("read_file", {"path": "a.txt"})]),
        ("", [("complete", {"summary": "done"})]),
    )
    (workspace / "a.txt").write_text("hello\n")
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "data",  # type: ignore[arg-type]
                          default_permission_mode="all")
    seen: list[Event] = []
    session.subscribe(seen.append)
    await session.run_turn(f"use {SECRET} and {SHAPED}")
    session.close()
    rendered = json.dumps([repr(event) for event in seen])
    assert SECRET not in rendered and SHAPED not in rendered
    assert "[redacted:OPENAI_API_KEY]" in rendered
    sent = json.dumps([request.messages for request in client.requests], default=str)
    assert len(client.requests) == 2
    assert SECRET not in sent and SHAPED not in sent
    assert "[redacted:OPENAI_API_KEY]" in sent


async def test_a_secret_in_a_queued_message_is_redacted_on_screen_and_in_requests(
    workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    client = Recording(("Reading.", [("read_file", {"path": "a.txt"})]), ("", [("complete", {"summary": "done"})]))
    (workspace / "a.txt").write_text("hello\n")
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "data",  # type: ignore[arg-type]
                          default_permission_mode="all")
    seen: list[Event] = []
    session.subscribe(seen.append)
    session.queue(f"also try {SECRET}", attached=f"token {SHAPED}")
    assert SECRET not in session.queued[0]
    await session.run_turn("read a.txt")
    session.close()
    rendered = json.dumps([repr(event) for event in seen])
    assert "also try [redacted:OPENAI_API_KEY]" in rendered
    assert SECRET not in rendered and SHAPED not in rendered
    sent = json.dumps([request.messages for request in client.requests], default=str)
    assert "also try [redacted:OPENAI_API_KEY]" in sent
    assert SECRET not in sent and SHAPED not in sent


_WORDS = ["the", "key", "is", SECRET, SHAPED, "sk-", "s", "gh", "AKIA" + "Z" * 16, "https://bob:hunter22@host/x",
          "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "my pass words", "\n", " "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), max_size=12), st.lists(st.integers(1, 40), min_size=1, max_size=30))
def test_streamed_text_is_redacted_as_the_whole_text_would_be(words: list[str], cuts: list[int]) -> None:
    redactor = Redactor({"OPENAI_API_KEY": SECRET, "DB_PASSWORD": "my pass words"})
    text = " ".join(words)
    shown: list[str] = []
    stream = redactor.stream(shown.append)
    position = 0
    for size in cuts * 20:
        if position >= len(text):
            break
        stream.add(text[position : position + size])
        position += size
    stream.add(text[position:])
    stream.flush()
    assert "".join(shown) == redactor(text)
    for piece in shown:
        assert SECRET[:12] not in piece and SHAPED[:12] not in piece and "hunter22" not in piece


async def test_a_key_streamed_in_small_chunks_never_shows_in_a_delta(
    workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.events import TextDelta
    from agentcli.llm.replay import RecordedCall, RecordedTurn, ReplayModel
    from agentcli.llm.replay import Recording as Script

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    text = f"Here it is: {SECRET} and {SHAPED} done."
    done = RecordedCall(name="complete", arguments={"summary": "s"})
    # Slower than the coalescer, so each chunk of three characters is a delta of its own.
    turn = RecordedTurn(text=text, tool_calls=[done], usage=(10, 5))
    script = Script(turns=[turn], chunk_chars=3, chunk_delay_s=0.06)
    session = new_session(workspace, Settings(), model_client=ReplayModel(script), data_dir=isolated_dirs / "data")
    deltas: list[str] = []
    session.subscribe(lambda event: deltas.append(event.text) if isinstance(event, TextDelta) else None)
    await session.run_turn("show me")
    session.close()
    assert len(deltas) > 5
    assert all(SECRET[:6] not in delta and SHAPED[:6] not in delta for delta in deltas), deltas
    assert "".join(deltas) == "Here it is: [redacted:OPENAI_API_KEY] and [redacted:github-token] done."


async def test_the_models_reasoning_is_redacted_on_screen(
    workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.events import AssistantMessage, ReasoningDelta, ToolCallRequest
    from agentcli.llm.types import ModelResponse, ReasoningChunk

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    class Thinker:
        """A model that thinks aloud about the key, in small pieces (the network edge)."""

        def __getattr__(self, name: str) -> object:
            return getattr(replay(("", [])), name)

        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
            thought = f"The key is {SECRET}, I should not print it."
            for start in range(0, len(thought), 4):
                yield ReasoningChunk(thought[start : start + 4])
            done = ToolCallRequest(id="c1", name="complete", arguments='{"summary": "s"}')
            yield ModelResponse(text="", tool_calls=[done], finish_reason="tool_calls", usage=None, cost=None,
                                model="m", reasoning=thought)

    session = new_session(workspace, Settings(), model_client=Thinker(), data_dir=isolated_dirs / "data")  # type: ignore[arg-type]
    shown: list[str] = []
    session.subscribe(lambda event: shown.append(event.text) if isinstance(event, ReasoningDelta) else (
        shown.append(event.reasoning or "") if isinstance(event, AssistantMessage) else None))
    await session.run_turn("think")
    session.close()
    assert shown and all(SECRET[:6] not in text for text in shown)
    assert any("[redacted:OPENAI_API_KEY]" in text for text in shown)


async def test_a_key_in_a_tool_calls_arguments_is_shown_redacted_and_used_as_written(
    workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.events import ToolCallStarted

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    client = replay(("", [("write_file", {"path": "config.txt", "content": f"key = {SECRET}\n"})]),
                    ("", [("complete", {"summary": "done"})]))
    session = new_session(workspace, Settings(), model_client=client, data_dir=isolated_dirs / "data",
                          default_permission_mode="all")
    started: list[ToolCallStarted] = []
    session.subscribe(lambda event: started.append(event) if isinstance(event, ToolCallStarted) else None)
    await session.run_turn("write the config")
    session.close()
    assert started and all(SECRET not in event.arguments + event.preview for event in started)
    assert (workspace / "config.txt").read_text() == f"key = {SECRET}\n"
