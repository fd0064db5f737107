"""What every tool shares: its context, its result, and the declaration every tool is.

A tool is one declaration: its name, its argument model, ``run``, and the facts the rest of the
agent needs — how the permission policy judges it, which argument names what it acts on,
whether it may change files, and how to show a call on one line. Permissions, the progress
watchdog, snapshots and both front ends read these facts; none of them names a tool.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from agentcli.config import ToolSettings
from agentcli.events import Event

Control = Literal["complete", "clarify", "pause"]

Permission = Literal["control", "internal", "read", "write", "command"]
"""How the permission policy judges a tool's calls: ``control`` (ends the turn) and ``internal``
(plans, thoughts) always run; ``read`` runs; ``write`` runs when it is the usual write; ``command``
runs project code and asks unless a rule or the mode allows it."""

TargetKind = Literal["path", "command"]
"""What a tool's target argument holds: a workspace path, or a shell command line."""

ChangesFiles = Literal["never", "when_ok", "always"]
"""Whether a call may change files: ``when_ok`` tools change exactly the files they report, and
only when they succeed; after an ``always`` tool (a command) any file may have changed."""

PREVIEW_CHARS = 120
"""A one-line preview is cut here (front ends may cut it shorter)."""


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
    links_approved: bool = False
    """The user, a rule or mode ``all`` let this call through, so it may use a hard-linked file
    (whose other name may be outside the workspace). Otherwise one is refused when opened:
    it may have been linked after the permission check, which saw a file with one name."""


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
    events: tuple[Event, ...] = ()
    """Events the session emits for this call once it has finished (a thought, a new plan)."""

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
    permission: ClassVar[Permission] = "command"
    """How the permission policy judges a call (a tool that declares nothing asks)."""
    target: ClassVar[str | None] = None
    """The argument naming what a call acts on (``path``, ``command``), if there is one."""
    target_kind: ClassVar[TargetKind | None] = None
    target_default: ClassVar[str | None] = None
    """The target when the call leaves the argument out (``.`` for a folder to list)."""
    changes_files: ClassVar[ChangesFiles] = "never"
    """Whether a call may change files: a snapshot is captured after one that may have."""
    shows_contents: ClassVar[bool] = False
    """The result shows file contents (reading a secret file asks; listing its name does not)."""
    research: ClassVar[bool] = False
    """Offered where a phase lists ``@research`` (MCP tools the user marked as research tools)."""

    @abstractmethod
    async def run(self, args: A, ctx: ToolContext) -> ToolResult:
        """Do the work. Raise :class:`ToolError` for failures the model should see."""

    @classmethod
    def target_of(cls, args: Mapping[str, object]) -> str | None:
        """The call's target (its path or command) as the model gave it, or None."""
        if cls.target is None:
            return None
        value = args.get(cls.target, cls.target_default)
        return value if isinstance(value, str) else None

    @classmethod
    def may_change_files(cls, result: ToolResult) -> bool:
        """Whether this finished call may have changed files (a failed write did not)."""
        return cls.changes_files == "always" or (cls.changes_files == "when_ok" and result.ok)

    @classmethod
    def preview(cls, args: Mapping[str, object]) -> str:
        """The call on one line: its target, else its first text argument, else its arguments."""
        target = cls.target_of(args)
        if target is not None:
            return one_line(target)
        text = next((value for value in args.values() if isinstance(value, str) and value.strip()), None)
        if text is not None:
            return one_line(text)
        return one_line(", ".join(f"{key}={value!r}" for key, value in args.items()))

    @classmethod
    def summary(cls, args: Mapping[str, object]) -> str:
        """What the call would do, in words, for a permission prompt (``Run `pytest -q` ``)."""
        preview = cls.preview(args)
        return f"Call {cls.name}" + (f" ({preview})" if preview else "")

    _schema: ClassVar[dict[str, Any] | None] = None

    @classmethod
    def schema(cls) -> dict[str, Any]:
        """The OpenAI function-calling description of this tool (built once per class)."""
        if cls.__dict__.get("_schema") is None:
            cls._schema = cls._build_schema()
        schema: dict[str, Any] = cls.__dict__["_schema"]  # this class's own, never a base class's
        return schema

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


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters with an ellipsis."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= limit else first[: limit - 1] + "…"
