"""The tool calls of a session as the TUI shows them: one record per call, shared by two views.

The conversation (inline blocks) and the tool-call panel both render from this store, which the
event bridge updates *before* it posts the event to the widgets, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agentcli.describe import NO_PRICE, NO_PRICE_WHY, call_preview

if TYPE_CHECKING:  # types only: the event classes are built after the TUI's first frame
    from agentcli.events import ToolCallFinished, ToolCallStarted

CallStatus = Literal["running", "ok", "error", "interrupted"]


@dataclass
class ToolCallInfo:
    """One tool call: what was asked, and what came back."""

    call_id: str
    name: str
    arguments: str
    """The raw JSON text the model sent."""
    started: float
    """Clock reading when the call started (the app's clock, so tests can freeze it)."""
    preview: str = ""
    """The arguments on one line, as the headless printer shows them (``describe.call_preview``)."""
    status: CallStatus = "running"
    output: str = ""
    error: str | None = None
    duration_s: float | None = None
    files_changed: tuple[str, ...] = ()

    def elapsed(self, now: float) -> float:
        """Seconds the call took, or has been running so far."""
        return self.duration_s if self.duration_s is not None else max(0.0, now - self.started)

    @property
    def pretty_arguments(self) -> str:
        import json  # here, not with the module: the first frame needs none of it (~1.5 ms)

        try:
            return json.dumps(json.loads(self.arguments or "{}"), indent=2, ensure_ascii=False)
        except json.JSONDecodeError:
            return self.arguments


class ToolCalls:
    """Every call of the session by id, in the order they started."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._calls: dict[str, ToolCallInfo] = {}

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._calls

    def __getitem__(self, call_id: str) -> ToolCallInfo:
        return self._calls[call_id]

    def get(self, call_id: str) -> ToolCallInfo | None:
        return self._calls.get(call_id)

    def __iter__(self) -> Iterator[ToolCallInfo]:
        return iter(self._calls.values())

    def __len__(self) -> int:
        return len(self._calls)

    @property
    def running(self) -> list[ToolCallInfo]:
        return [call for call in self._calls.values() if call.status == "running"]

    def clear(self) -> None:
        self._calls.clear()

    def started(self, event: ToolCallStarted) -> ToolCallInfo:
        info = ToolCallInfo(event.call_id, event.name, event.arguments, started=self._clock(),
                            preview=call_preview(event, limit=80))
        self._calls[event.call_id] = info
        return info

    def finished(self, event: ToolCallFinished) -> ToolCallInfo:
        info = self._calls.get(event.call_id)
        if info is None:  # a result without a start (a call the turn's end left unrun)
            info = ToolCallInfo(event.call_id, event.name, "", started=self._clock())
            self._calls[event.call_id] = info
        info.status = "interrupted" if event.interrupted else ("ok" if event.ok else "error")
        info.output = event.output
        info.error = event.error
        info.duration_s = event.duration_s
        info.files_changed = tuple(event.files_changed)
        return info


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def format_tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 100_000:
        return f"{count / 1000:.1f}k"
    return f"{count // 1000}k"


NO_PRICE_HELP = f"{NO_PRICE.capitalize()}: {NO_PRICE_WHY} (/cost has the totals)."
"""The header's tooltip on a cost it cannot give: the words headless prints under its totals."""
