"""Helpers for tests that drive a Session and look at what it emitted."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from agentcli.config import RetrySettings, Settings
from agentcli.events import Event
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.llm.replay import RecordedCall, RecordedTurn, Recording, ReplayModel
from agentcli.llm.types import ModelClient
from agentcli.session import Session
from agentcli.workflow import builtin_workflow

E = TypeVar("E")


@dataclass
class Recorder:
    """Subscribes to a session and keeps every event."""

    events: list[Event] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]

    @property
    def types(self) -> list[str]:
        return [event.type for event in self.events]


def make_session(workspace: Path, client: ModelClient, **settings: object) -> tuple[Session, Recorder]:
    fields = {"retry": RetrySettings(attempts=3, base_delay_s=0.01), **settings}
    session = Session(
        workspace=workspace,
        settings=Settings(**fields),  # type: ignore[arg-type]
        workflow=builtin_workflow("single"),
        model_client=client,
    )
    recorder = Recorder()
    session.subscribe(recorder)
    return session, recorder


def litellm_session(workspace: Path, settings: Settings) -> tuple[Session, Recorder]:
    """A session calling ``settings.model`` through litellm's real code path (a local server)."""
    session = Session(workspace=workspace, settings=settings, workflow=builtin_workflow("single"),
                      model_client=LiteLLMClient(settings.retry))
    recorder = Recorder()
    session.subscribe(recorder)
    return session, recorder


def replay(*turns: tuple[str, list[tuple[str, dict[str, object] | str]]]) -> ReplayModel:
    """A replay model from (text, [(tool, arguments)]) pairs."""
    return ReplayModel(
        Recording(
            turns=[
                RecordedTurn(text=text, tool_calls=[RecordedCall(name=n, arguments=a) for n, a in calls], usage=(10, 5))
                for text, calls in turns
            ]
        )
    )
