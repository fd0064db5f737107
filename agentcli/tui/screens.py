"""Modal screens: the restore confirmation and the broad-workspace confirmation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Static

MAX_LISTED = 200


def _action(change: Any) -> str:
    """``create`` for a write to a path the workspace lacks now (the plan's change has no old
    blob: the restore re-creates a file deleted since), else the plan's own action."""
    action = str(getattr(change, "action", "write"))
    if action == "write" and hasattr(change, "old_id") and change.old_id is None:
        return "create"
    return action


def planned_paths(plan: Any) -> list[tuple[str, str]]:
    """(action, path) pairs from a restore plan: ``.changes`` (path, action, old_id) or
    ``.writes``/``.deletes``. Actions: ``create``, ``write``, ``delete``, ``chmod``."""
    changes = getattr(plan, "changes", None)
    if changes is not None:
        return [(_action(change), str(change.path)) for change in changes]
    pairs = [("write", str(path)) for path in getattr(plan, "writes", []) or []]
    pairs += [("delete", str(path)) for path in getattr(plan, "deletes", []) or []]
    return pairs


class _Confirm(ModalScreen[bool]):
    """A yes/no question with the safe answer focused: its buttons are ``#confirm`` and ``#cancel``."""

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed, "#confirm")
    def _confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(False)


class ConfirmRestore(_Confirm):
    """Asks before a restore, listing every path it will write or delete."""

    DEFAULT_CSS = """
    ConfirmRestore { align: center middle; }
    ConfirmRestore > Vertical {
        width: 72; max-width: 95%; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    ConfirmRestore #restore-title { text-style: bold; margin-bottom: 1; }
    ConfirmRestore #restore-paths { height: auto; max-height: 14; margin-bottom: 1; }
    ConfirmRestore #restore-note { color: $text-muted; margin-bottom: 1; }
    ConfirmRestore Horizontal { height: auto; align-horizontal: right; }
    ConfirmRestore Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("y", "confirm", "Restore", id="agentcli.restore.confirm", tooltip="Restore the files listed"),
        Binding("n,escape", "cancel", "Cancel", id="agentcli.restore.cancel", tooltip="Leave the workspace as it is"),
    ]

    def __init__(self, seq: int, label: str, plan: Any) -> None:
        super().__init__()
        self.seq = seq
        self.label = label
        self.paths = planned_paths(plan)
        self.conflicts = [str(getattr(c, "path", c)) for c in getattr(plan, "conflicts", []) or []]

    def compose(self) -> Iterable[Widget]:
        marks = {"create": ("A", "$diff-added"), "write": ("M", "$warning"), "delete": ("D", "$diff-removed"),
                 "chmod": ("X", "$text-muted")}
        lines = [
            Content.assemble((marks.get(action, ("?", ""))[0], marks.get(action, ("?", ""))[1]), " ", path)
            for action, path in self.paths[:MAX_LISTED]
        ]
        if len(self.paths) > MAX_LISTED:
            lines.append(Content.styled(f"… and {len(self.paths) - MAX_LISTED} more", "$text-muted"))
        for path in self.conflicts:
            lines.append(Content.styled(f"! {path}: conflict", "$error"))
        count = len(self.paths)
        with Vertical():
            yield Static(Content.assemble("Restore the workspace to snapshot ", (f"#{self.seq}", "bold $accent"),
                                          f" ({self.label})?"), id="restore-title")
            yield Static(f"{count} path{'s' if count != 1 else ''} will change:")
            with VerticalScroll(id="restore-paths"):
                yield Static(Content("\n").join(lines))
            yield Static("The current files are snapshotted first, so this restore can be undone.", id="restore-note")
            with Horizontal():
                yield Button("Cancel (n)", id="cancel")
                yield Button("Restore (y)", variant="warning", id="confirm")


class ConfirmWorkspace(_Confirm):
    """Asks before opening a session in a home folder or a filesystem root.

    Snapshots there would copy every file below; on the command line ``--yes`` answers this.
    """

    DEFAULT_CSS = """
    ConfirmWorkspace { align: center middle; }
    ConfirmWorkspace > Vertical {
        width: 72; max-width: 95%; height: auto;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    ConfirmWorkspace #workspace-reason { text-style: bold; margin-bottom: 1; }
    ConfirmWorkspace #workspace-note { color: $text-muted; margin-bottom: 1; }
    ConfirmWorkspace Horizontal { height: auto; align-horizontal: right; }
    ConfirmWorkspace Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("y", "confirm", "Open here", id="agentcli.workspace.confirm",
                tooltip="Open a session in this folder anyway"),
        Binding("n,escape", "cancel", "Quit", id="agentcli.workspace.cancel",
                tooltip="Quit without opening a session; start agentcli in a project folder instead"),
    ]

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason

    def compose(self) -> Iterable[Widget]:
        with Vertical():
            yield Static(f"{self.reason}.", id="workspace-reason")
            yield Static("Open agentcli here anyway? Start it in a project folder (or pass --cwd) "
                         "to keep snapshots small.", id="workspace-note")
            with Horizontal():
                yield Button("Quit (n)", id="cancel")
                yield Button("Open here (y)", variant="warning", id="confirm")
