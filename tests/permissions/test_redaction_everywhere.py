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

from agentcli.config import Settings
from agentcli.events import Event
from agentcli.llm.types import ModelRequest, StreamItem
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
