"""What the work of a state returns: the data the chart's guards read to pick the next state.

Each running state's work (a model call, a tool call, a capture) returns one of these. The
chart receives it as the ``data`` of the state's completion event (``done.invoke.<state>``),
and its guards choose the transition from it; the work itself never names an event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentcli.events import SnapshotCaptured, ToolCallRequest
from agentcli.llm.types import ModelCallError, ModelResponse
from agentcli.tools.base import Control, Tool, ToolResult


@dataclass(frozen=True)
class ModelOutcome:
    """How one model call ended: a reply, or an error the retries could not get past."""

    response: ModelResponse | None = None
    error: ModelCallError | None = None

    @property
    def tool_calls(self) -> list[ToolCallRequest]:
        return self.response.tool_calls if self.response is not None else []

    @property
    def silent(self) -> bool:
        """The model replied without calling any tool (not even a control tool)."""
        return self.response is not None and not self.response.tool_calls

    @property
    def truncated(self) -> bool:
        """The reply was cut off by the output length limit."""
        return self.response is not None and self.response.finish_reason == "length"


@dataclass(frozen=True)
class CallOutcome:
    """One tool call that ran (or was refused) and the result the model reads."""

    call: ToolCallRequest
    result: ToolResult
    tool: type[Tool[Any]]
    """The tool's declaration: the facts about what the call may have done."""

    @property
    def control(self) -> Control | None:
        """``complete``, ``clarify`` or ``pause`` when a control tool ended the turn."""
        return self.result.control if self.result.ok else None

    @property
    def may_have_changed_files(self) -> bool:
        return self.tool.may_change_files(self.result)


@dataclass(frozen=True)
class CaptureOutcome:
    """A capture of the workspace; ``snapshot`` is None when nothing changed (or it failed)."""

    snapshot: SnapshotCaptured | None = None
    after: CallOutcome | None = None
    """The call this capture followed; None for the capture before a turn."""

    @property
    def changed(self) -> tuple[str, ...]:
        """The paths the snapshot found changed."""
        return tuple(change.path for change in self.snapshot.files) if self.snapshot is not None else ()


@dataclass(frozen=True)
class Settled:
    """A finished tool call with everything known about it, ready for the progress review."""

    outcome: CallOutcome
    changed: tuple[str, ...] = field(default_factory=tuple)
    """Paths a snapshot saw change after the call (beyond those the tool reported)."""


def settled(data: CallOutcome | CaptureOutcome) -> Settled:
    """What the review step reviews, whether the call was captured after or not."""
    if isinstance(data, CaptureOutcome):
        if data.after is None:
            raise TypeError("a capture before a turn settles no tool call")
        return Settled(data.after, data.changed)
    return Settled(data)
