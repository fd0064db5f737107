"""A deterministic model that plays recorded turns from a file: the demo, and recorded sessions.

It needs no network and no key. Each model call plays the next turn: its text streamed in small
pieces (with an optional delay, so a demo looks live), then its tool calls.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agentcli.events import ToolCallRequest
from agentcli.llm.types import ModelRequest, ModelResponse, StreamItem, TextChunk, Usage


class RecordingError(Exception):
    """A recording file is missing or malformed; the message names the file and the field."""


class RecordedCall(BaseModel):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """A JSON object, or raw text (recordings of a model that sent broken JSON)."""


class RecordedTurn(BaseModel):
    text: str = ""
    tool_calls: list[RecordedCall] = Field(default_factory=list)
    usage: tuple[int, int] | None = None
    """Input and output tokens."""


class Recording(BaseModel):
    model: str = "replay"
    chunk_chars: int = Field(12, ge=1)
    chunk_delay_s: float = Field(0.0, ge=0)
    turns: list[RecordedTurn]


def load_recording(path: Path) -> Recording:
    try:
        return Recording.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RecordingError(f"cannot read recording {path}: {error.strerror}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise RecordingError(f"invalid recording {path}: {where}: {first['msg']}") from None


class ReplayModel:
    """A :class:`~agentcli.llm.types.ModelClient` that plays a :class:`Recording` turn by turn."""

    def __init__(self, recording: Recording, *, chunk_delay_s: float | None = None) -> None:
        self.recording = recording
        self.position = 0
        """Index of the next turn to play; a resumed session sets it past the turns already played."""
        self._delay = recording.chunk_delay_s if chunk_delay_s is None else chunk_delay_s

    @classmethod
    def from_file(cls, path: Path, **kwargs: Any) -> ReplayModel:
        return cls(load_recording(path), **kwargs)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        turn = self._next_turn()
        step = self.recording.chunk_chars
        for start in range(0, len(turn.text), step):
            if self._delay:
                await asyncio.sleep(self._delay)
            yield TextChunk(turn.text[start : start + step])
        calls = [
            ToolCallRequest(
                id=f"replay_{self.position}_{index}",
                name=call.name,
                arguments=call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments),
            )
            for index, call in enumerate(turn.tool_calls)
        ]
        usage = Usage(*turn.usage) if turn.usage else None
        yield ModelResponse(
            text=turn.text,
            tool_calls=calls,
            finish_reason="tool_calls" if calls else "stop",
            usage=usage,
            cost=None,
            model=self.recording.model,
        )

    def _next_turn(self) -> RecordedTurn:
        if self.position >= len(self.recording.turns):
            self.position += 1
            # Never a silent stop, even when the recording runs out.
            return RecordedTurn(
                tool_calls=[RecordedCall(name="pause", arguments={"reason": "the recording has no more turns"})]
            )
        turn = self.recording.turns[self.position]
        self.position += 1
        return turn
