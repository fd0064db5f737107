"""The snapshot timeline: one entry per snapshot, scrubbed with the keyboard, with a diff preview.

The preview is computed in an exclusive worker after a short pause, so scrubbing fast through
the list cancels the previews nobody waits for; only the entry the user stops on is diffed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agentcli.events import SnapshotCaptured, SnapshotRestored
from agentcli.restore_reason import short_reason
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.widgets._laid_out import SteadyOptionList

PREVIEW_DELAY_S = 0.12
"""Scrubbing pause before a diff is computed: keys held down never start a diff."""
PREVIEW_LINES = 400
"""Diff lines shown; the rest is counted."""

Differ = Callable[[str, str | None], Awaitable[Any]]
"""``session.diff(a_ref, b_ref)``: b None means the working tree."""


@dataclass(frozen=True)
class FileStat:
    path: str
    added: int = 0
    removed: int = 0
    status: str = "modified"


@dataclass(frozen=True)
class TimelineEntry:
    """A snapshot as the timeline shows it, from an event or from ``session.timeline()``."""

    id: str
    seq: int
    reason: str
    tool_name: str | None
    files: tuple[FileStat, ...]
    session_id: str | None = None
    """The session the snapshot belongs to (a restore within it reads ``restored #3``)."""

    @classmethod
    def from_event(cls, event: SnapshotCaptured, session_id: str | None = None) -> TimelineEntry:
        return cls(event.snapshot_id, event.seq, event.reason, event.tool_name,
                   tuple(FileStat(f.path, f.added, f.removed, f.status) for f in event.files), session_id)

    @classmethod
    def from_snapshot(cls, snapshot: Any) -> TimelineEntry:
        files = tuple(
            FileStat(f.path, getattr(f, "added", 0), getattr(f, "removed", 0), getattr(f, "status", "modified"))
            for f in getattr(snapshot, "files", []) or []
        )
        session_id = getattr(snapshot, "session_id", None)
        return cls(str(snapshot.id), int(snapshot.seq), str(getattr(snapshot, "reason", "")),
                   getattr(snapshot, "tool_name", None), files, str(session_id) if session_id else None)

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)

    @property
    def label(self) -> str:
        """The tool that changed the files, with how its call ended when it was cut off
        (``bash (interrupted)``: its reason is ``after bash (interrupted)``), or the reason (a
        restore's names its snapshot by number; the full ids stay in the log and under the diff
        preview's title)."""
        if self.tool_name:
            after = f"after {self.tool_name}"
            return self.tool_name + self.reason[len(after):] if self.reason.startswith(after + " (") else self.tool_name
        return short_reason(self.reason, self.session_id) or "snapshot"

    def prompt(self) -> Content:
        if not self.files:  # "+0 −0" read as a change of nothing; a session's first has nothing before it
            return Content.assemble((f"#{self.seq:<3}", "bold $timeline-tick"), " ", (self.label, "bold"), " ",
                                    ("as found" if self.seq == 1 else "no changes", "$text-muted"))
        paths = self.files[0].path + (f" +{len(self.files) - 1}" if len(self.files) > 1 else "")
        return Content.assemble(
            (f"#{self.seq:<3}", "bold $timeline-tick"), " ", (self.label, "bold"), " ",
            (f"+{self.added}", "$diff-added"), " ", (f"−{self.removed}", "$diff-removed"), " ",
            (paths, "$text-muted"),
        )


def render_diff(diff: Any, title: str, limit: int = PREVIEW_LINES, note: str = "") -> Content:
    """A diff result (``.files`` with ``path, status, added, removed, patch, binary``) as Content,
    under ``title`` (and ``note``, muted, when given)."""
    files = list(getattr(diff, "files", []) or [])
    heading = [Content.styled(title, "bold"), *([Content.styled(note, "$text-muted")] if note else [])]
    if not files:
        return Content("\n").join([*heading, Content.styled("No differences.", "$text-muted")])
    lines: list[Content] = heading
    shown = 0
    total = 0
    for file in files:
        header = Content.assemble(
            (f"{file.path}", "bold"), " ", (f"+{file.added}", "$diff-added"), " ",
            (f"−{file.removed}", "$diff-removed"), " ", (f"({file.status})", "$text-muted"),
        )
        lines.append(header)
        if getattr(file, "binary", False):
            lines.append(Content.styled("binary file", "$text-muted"))
            continue
        for line in (file.patch or "").splitlines():
            total += 1
            if shown >= limit:
                continue
            shown += 1
            if line.startswith(("+++", "---", "diff ", "index ")):
                continue
            if line.startswith("+"):
                lines.append(Content.styled(line, "$diff-added"))
            elif line.startswith("-"):
                lines.append(Content.styled(line, "$diff-removed"))
            elif line.startswith("@@"):
                lines.append(Content.styled(line, "$timeline-tick"))
            else:
                lines.append(Content(line))
    if total > shown:
        lines.append(Content.styled(f"… {total - shown} more diff lines", "$text-muted"))
    return Content("\n").join(lines)


class SnapshotList(SteadyOptionList):
    """The timeline's list: its ``enter`` (the option list's select, which asks for a restore)
    is named in the footer, where the option list's own is hidden."""

    BINDINGS = [
        Binding("enter", "select", "Restore", id="agentcli.timeline.restore",
                tooltip="Restore the workspace to the selected snapshot (asks first)"),
    ]


class SnapshotTimeline(Vertical):
    """Snapshots in order, newest last; scrub with the arrow keys, enter to restore."""

    DEFAULT_CSS = """
    SnapshotTimeline { height: 1fr; }
    SnapshotTimeline > OptionList { height: 1fr; min-height: 3; border: none; padding: 0; }
    SnapshotTimeline > #diff-preview { height: 2fr; min-height: 8; border-top: solid $panel-lighten-1;
        padding: 0 1; }
    /* The row's own colours (#N in the tick colour, +/- in the diff colours) stay on the cursor:
       Textual's default cursor is the primary colour, which the tick colour nearly equals in every
       shipped theme (tests/tui/test_prompt_layout.py checks the contrast). */
    SnapshotTimeline > OptionList > .option-list--option-highlighted,
    SnapshotTimeline > OptionList:focus > .option-list--option-highlighted {
        background: $foreground 10%; color: $foreground; text-style: bold;
    }
    """
    BINDINGS = [
        Binding("left", "scrub(-1)", "Older", show=False, id="agentcli.timeline.older",
                tooltip="Move to the previous snapshot"),
        Binding("right", "scrub(1)", "Newer", show=False, id="agentcli.timeline.newer",
                tooltip="Move to the next snapshot"),
        Binding("d", "toggle_base", "Base", id="agentcli.timeline.base",
                tooltip="Compare the snapshot with the working tree or with the snapshot before it"),
        Binding("u", "undo", "Undo", id="agentcli.timeline.undo",
                tooltip="Restore what the last restore replaced"),
    ]
    HELP = """
## Snapshot timeline
- **↑ ↓ ← →** scrub through snapshots; the preview shows the diff
- **d** compare with the working tree / the previous snapshot
- **enter** restore the workspace to the snapshot (asks first)
- **u** undo the last restore
"""

    against_previous: reactive[bool] = reactive(False)
    """Diff the selected snapshot against the one before it instead of the working tree."""

    class RestoreRequested(Message):
        """The user asked to restore the workspace to a snapshot."""

        def __init__(self, entry: TimelineEntry) -> None:
            super().__init__()
            self.entry = entry
            """The snapshot to restore."""

    class UndoRequested(Message):
        """The user asked to undo the last restore."""

        def __init__(self, snapshot_id: str) -> None:
            super().__init__()
            self.snapshot_id = snapshot_id
            """The undo point the restore captured."""

    class Scrubbed(Message):
        """The selection moved to another snapshot."""

        def __init__(self, entry: TimelineEntry) -> None:
            super().__init__()
            self.entry = entry
            """The snapshot now selected."""

    def __init__(self, differ: Differ | None, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.differ = differ
        self.off_reason = ""
        """Why there is no timeline (snapshots disabled...), shown in the preview."""
        self.entries: list[TimelineEntry] = []
        self.session_id: str | None = None
        """The session shown: its snapshots' events become entries of it."""
        self.undo_id: str | None = None
        """The undo point of the last restore, if any."""
        self.following = True
        self.previews_started = 0
        """Previews that actually ran a diff (scrubbing past entries starts none)."""
        self.option_list = SnapshotList(id="snapshot-list")
        self._diff = Static(id="diff-text")
        self._preview: VerticalScroll | None = None

    def compose(self) -> Iterable[Widget]:
        self._diff.update(self._placeholder())
        yield self.option_list
        with VerticalScroll(id="diff-preview") as preview:
            self._preview = preview
            yield self._diff

    def _placeholder(self) -> Content:
        if self.differ is None:
            return Content.styled(self.off_reason or "No snapshot store.", "$text-muted")
        return Content.styled(
            "No snapshots yet: one is taken as each turn starts and after every tool call that changes files.",
            "$text-muted",
        )

    @property
    def selected(self) -> TimelineEntry | None:
        index = self.option_list.highlighted
        return self.entries[index] if index is not None and 0 <= index < len(self.entries) else None

    def load(self, entries: Iterable[TimelineEntry]) -> None:
        self.entries = sorted(entries, key=lambda entry: entry.seq)
        self.option_list.set_options(Option(entry.prompt(), id=entry.id) for entry in self.entries)
        if self.entries:
            self.option_list.highlighted = len(self.entries) - 1
        else:
            self._diff.update(self._placeholder())

    def clear(self) -> None:
        self.entries = []
        self.undo_id = None
        self.option_list.clear_options()
        self._diff.update(self._placeholder())

    def add(self, entry: TimelineEntry) -> None:
        if any(existing.id == entry.id for existing in self.entries):
            return
        self.entries.append(entry)
        self.option_list.add_option(Option(entry.prompt(), id=entry.id))
        if self.following:
            self.option_list.highlighted = len(self.entries) - 1
        elif (selected := self.selected) is not None and not self.against_previous:
            # A new snapshot means the working tree moved (a restore from this very entry, say):
            # the preview against it was stale, showing the file the restore had just put back.
            self.preview(selected)

    def on_session_event_posted(self, message: SessionEventPosted) -> None:
        event = message.event
        if isinstance(event, SnapshotCaptured):
            self.add(TimelineEntry.from_event(event, self.session_id))
        elif isinstance(event, SnapshotRestored):
            self.undo_id = event.undo_snapshot_id
            self.refresh_bindings()
            # The scrub back ended in the restore: its entries (the undo point, the restored
            # state) arrived just before this and are what the user looks for next, even when
            # the three rows of an 80x24 list left them out of view.
            self.follow_newest()

    def follow_newest(self) -> None:
        """Select (and scroll to) the newest entry, and keep following new ones."""
        self.following = True
        if self.entries:
            self.option_list.highlighted = len(self.entries) - 1

    # -- scrubbing and preview -----------------------------------------------------------

    def action_scrub(self, step: int) -> None:
        option_list = self.option_list
        if not self.entries:
            return
        current = option_list.highlighted if option_list.highlighted is not None else len(self.entries) - 1
        option_list.highlighted = max(0, min(len(self.entries) - 1, current + step))

    def action_toggle_base(self) -> None:
        self.against_previous = not self.against_previous

    def watch_against_previous(self) -> None:
        entry = self.selected
        if entry is not None:
            self.preview(entry)

    def action_undo(self) -> None:
        if self.undo_id is None:
            self.notify("No restore to undo.", severity="warning")
            return
        self.post_message(self.UndoRequested(self.undo_id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "undo":
            return self.undo_id is not None
        return True

    @on(OptionList.OptionHighlighted, "#snapshot-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        entry = self.selected
        if entry is None:
            return
        self.following = event.option_index == len(self.entries) - 1
        self.post_message(self.Scrubbed(entry))
        self.preview(entry)

    @on(OptionList.OptionSelected, "#snapshot-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        entry = self.selected
        if entry is not None:
            self.post_message(self.RestoreRequested(entry))

    @work(exclusive=True, group="preview", exit_on_error=False)
    async def preview(self, entry: TimelineEntry) -> None:
        """Diff the entry (after a pause, so fast scrubbing supersedes this) and show it."""
        if self.differ is None:
            return
        await asyncio.sleep(PREVIEW_DELAY_S)
        index = self.entries.index(entry) if entry in self.entries else -1
        if self.against_previous:
            if index <= 0:
                self._diff.update(
                    Content.styled(f"#{entry.seq} is the first snapshot; press d to compare with the working tree.",
                                   "$text-muted"))
                return
            base = self.entries[index - 1]
            a_ref, b_ref, title = base.id, entry.id, f"#{base.seq} → #{entry.seq}"
        else:
            a_ref, b_ref, title = entry.id, None, f"#{entry.seq} → working tree"
        self.previews_started += 1
        try:
            diff = await self.differ(a_ref, b_ref)
        except Exception as error:  # noqa: BLE001 - shown to the user, not swallowed
            self._diff.update(Content.styled(f"Cannot diff: {error}", "$error"))
            return
        # Colouring a big patch is the slow part: do it off the event loop.
        note = entry.reason if entry.label != entry.reason and not entry.tool_name else ""
        content = await asyncio.to_thread(render_diff, diff, title, PREVIEW_LINES, note)
        self._diff.update(content)
        if self._preview is not None:
            self._preview.scroll_home(animate=False)
