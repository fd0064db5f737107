"""What every tool shares: its context, its result and the base class."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from agentcli.config import ToolSettings

Control = Literal["complete", "clarify", "pause"]


class ToolError(Exception):
    """An expected failure the model should read and act on (missing file, bad edit...)."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may touch: the workspace, and the limits it must keep to."""

    workspace: Path
    """Absolute, symlinks resolved."""
    settings: ToolSettings = field(default_factory=ToolSettings)
    sandbox: bool = False
    """Run ``bash`` under bubblewrap: workspace writable, the rest read-only, no network."""
    call_id: str = ""
    """The id of the call being run (a subagent nests its events under it)."""


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one call; ``output`` is the text the model reads."""

    ok: bool
    output: str
    error: str | None = None
    files_changed: tuple[str, ...] = ()
    """Workspace-relative paths the tool wrote (a hint for the snapshot store)."""
    control: Control | None = None
    """Set by complete, clarify and pause: the call ends the turn."""
    data: dict[str, Any] = field(default_factory=dict)
    """Structured details for front ends (the clarify question and options...)."""

    @classmethod
    def failure(cls, message: str) -> ToolResult:
        return cls(ok=False, output=f"Error: {message}", error=message)


class Arguments(BaseModel):
    """Base of every tool's arguments: unknown keys are refused so typos reach the model."""

    model_config = ConfigDict(extra="forbid")


A = TypeVar("A", bound=Arguments)


class Tool(ABC, Generic[A]):
    """One tool. Subclasses set the class attributes and implement :meth:`run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    arguments: ClassVar[type[Arguments]]
    modifies_files: ClassVar[bool] = False
    """True when the tool may change files: a snapshot is captured after it runs."""
    read_only: ClassVar[bool] = True

    @abstractmethod
    async def run(self, args: A, ctx: ToolContext) -> ToolResult:
        """Do the work. Raise :class:`ToolError` for failures the model should see."""

    _schema: ClassVar[dict[str, Any] | None] = None

    @classmethod
    def schema(cls) -> dict[str, Any]:
        """The OpenAI function-calling description of this tool (built once per class)."""
        if cls.__dict__.get("_schema") is None:
            cls._schema = cls._build_schema()
        return cls.__dict__["_schema"]

    @classmethod
    def _build_schema(cls) -> dict[str, Any]:
        parameters = cls.arguments.model_json_schema()
        parameters.pop("title", None)
        for prop in parameters.get("properties", {}).values():
            prop.pop("title", None)
        return {
            "type": "function",
            "function": {"name": cls.name, "description": cls.description, "parameters": parameters},
        }


class BlockingTool(Tool[A]):
    """A tool whose work is blocking file IO: it runs in a worker thread, off the event loop."""

    async def run(self, args: A, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self.run_blocking, args, ctx)

    @abstractmethod
    def run_blocking(self, args: A, ctx: ToolContext) -> ToolResult:
        """Do the work synchronously. Raise :class:`ToolError` for failures the model should see."""
