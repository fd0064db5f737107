"""What the stream shows for an event, as a record: the user's words, an agent chunk, the model's
reasoning, a notice.

A record is a block whether or not it is mounted (the window in ``_conversation`` decides that).
Notices are the describer's words (``agentcli.describe``, shared with the headless printer);
this module only picks the record kind and the classes the describer's role maps to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.widget import Widget

from agentcli.describe import Description, describe

if TYPE_CHECKING:  # the event classes are imported where events are read, after the first frame
    from agentcli.events import Event

CHUNK_CHARS = 4000
"""A long agent message is shown as several Markdown widgets of about this size, split between
paragraphs, so its older parts can be unloaded like older messages."""
STREAM_CHUNK_CHARS = 1500
"""A reply being streamed goes on in a new chunk after about this many characters. Only the
chunk being streamed into is ``Markdown`` (a widget per paragraph, item and table cell, and for a
table an unmounted widget per row and cell besides); each finished chunk becomes one widget. The
smaller the live chunk, the less each append lays out and the less a full garbage collection
walks: at 4,000 characters of lists and tables, about 300,000 objects (bench/tui_streaming.py)."""


@dataclass
class Record:
    """One block of the stream, whether or not it is mounted."""

    kind: str
    """user, answer, agent, reasoning, call, notice."""
    text: str = ""
    classes: str = ""
    call_id: str | None = None
    widget: Widget | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    sealed: bool = False
    """An agent chunk ended at a chunk boundary: its reply goes on in the next record, so its text
    never changes again and, once rendered, it can be drawn by one widget instead of Markdown."""
    collapsed: bool = False
    """A reasoning block shows its header line only (once the reply starts, or when the user
    closed it): kept here so a block unloaded and mounted again looks as it was left."""

    _weighed: tuple[int, int] = field(default=(-1, 0), init=False, repr=False, compare=False)
    """The text length the weight was last counted at, and that weight."""

    @property
    def weight(self) -> int:
        """Roughly what the block costs mounted: about a line of markdown each (what a chunk
        drawn flat caches), which is also about how many widgets ``Markdown`` would make of it."""
        if self.kind != "agent":
            return 1
        length, weight = self._weighed
        if length != len(self.text):  # the text only grows: weighed again when it did
            weight = _widgets_in(self.text)
            self._weighed = (len(self.text), weight)
        return weight


def _widgets_in(markdown: str) -> int:
    """Non-blank lines outside code fences, plus one per fence (at least 1).

    Counting paragraphs alone let a chunk of lists and tables (a widget or more per line) weigh
    a fifth of its widgets; the window then held thousands, and every full garbage collection
    walked them all (seconds while streaming, bench/tui_streaming.py)."""
    count, fenced = 0, False
    for line in markdown.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            count += fenced
        elif stripped and not fenced:
            count += 1
    return max(1, count)


def split_point(before: str, text: str, start: int = 0) -> int | None:
    """Where to end a message chunk in ``text``: just after a blank line outside a code fence.

    Args:
        before: The chunk's text so far (decides whether ``text`` starts inside a fence).
        text: The new text.
        start: Look for a blank line from here on.

    Returns:
        The index in ``text`` to cut at, or None if there is no safe place.
    """
    inside = before.count("```") % 2 == 1
    position = 0
    while (index := text.find("\n\n", max(position, start))) != -1:
        inside ^= text.count("```", position, index) % 2 == 1
        if not inside and index > 0:
            return index + 2
        position = index + 2
    return None


def chunk_markdown(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """A long message cut into chunks of about ``size`` at safe places (whole if there are none)."""
    chunks: list[str] = []
    while len(text) > size:
        cut = split_point(text[:size], text[size:])
        if cut is None:
            break
        chunks.append(text[: size + cut])
        text = text[size + cut :]
    chunks.append(text)
    return chunks


def agent_records(text: str, classes: str = "") -> list[Record]:
    """A finished agent message as records, one per chunk."""
    return [Record("agent", chunk, " ".join(filter(None, (classes, "-cont" if n else ""))))
            for n, chunk in enumerate(chunk_markdown(text))]


def reply_records(text: str, reasoning: str, *, interrupted: bool) -> list[Record]:
    """A finished reply as records: its reasoning (collapsed to its header), then its text.

    Of a reply cut off, the part it was in is marked: the text, or the reasoning if no text came.
    """
    mark = "-interrupted" if interrupted else ""
    records = [Record("reasoning", reasoning, "" if text else mark, collapsed=True)] if reasoning else []
    if text:
        records += agent_records(text, " ".join(filter(None, (mark, "-reasoned" if reasoning else ""))))
    return records


def notice_classes(description: Description) -> str:
    """The NoticeBlock classes of a description: its role, and ``-turn`` for a turn's end."""
    role = description.role
    return f"-turn -{role}" if role.startswith("turn-") else f"-{role}"


def notice_text(event: Event, description: Description) -> str:
    """The notice's words: the describer's, plus where this app offers the next step."""
    lines = list(description.lines)
    lines[1:] = [f"  {line}" for line in lines[1:]]
    from agentcli.events import SnapshotRestored

    if isinstance(event, SnapshotRestored) and event.undo_snapshot_id:
        lines[0] += " — u on the timeline undoes it"
    return "\n".join(lines)


def record_for(event: Event) -> Record | None:
    """The record of an event that is not a tool call or agent text, or None if the stream does
    not show it (a new session's start is in the header, snapshots are on the timeline, state
    changes in the graph)."""
    from agentcli.events import ClarificationAnswered, SessionStarted, SnapshotCaptured, UserMessage

    if isinstance(event, UserMessage):
        return Record("user", event.text)
    if isinstance(event, ClarificationAnswered):
        return Record("answer", event.answer)
    if isinstance(event, SnapshotCaptured) or (isinstance(event, SessionStarted) and not event.resumed):
        return None
    description = describe(event)
    if description is None:
        return None
    return Record("notice", notice_text(event, description), notice_classes(description))
