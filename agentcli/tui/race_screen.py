"""The race view: one row per attempt, live, with its diff one key away and apply behind a confirmation.

``agentcli race show`` in a terminal opens :class:`RaceApp`. The race runs in another process
(``agentcli race``) which rewrites ``race.json`` at every change; this screen re-reads it twice a
second in a thread worker until the race has ended, so it never blocks the event loop and needs
no connection to the running race. Rows are keyed by attempt id, so the cursor stays on its
attempt when the ranking reorders them at the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Button, DataTable, Footer, RichLog, Static

from agentcli.tui.themes import ROLE_DEFAULTS, load_themes

if TYPE_CHECKING:
    from agentcli.fleet.apply import ApplyConflict
    from agentcli.fleet.models import Attempt, Race
    from agentcli.fleet.view import AttemptRow

POLL_S = 0.5
"""How often a running race's record is re-read: often enough to follow it, cheap to read."""


MODEL_MIN_WIDTH = 10
"""The narrowest the model column gets: enough to tell ``openai/…`` from ``anthropic/…``."""


def _shortened(text: str, width: int) -> str:
    """``text`` in ``width`` cells, its middle replaced by an ellipsis: model names differ at both
    ends (the provider, the version), so neither end alone tells two attempts apart."""
    if len(text) <= width:
        return text
    keep = width - 1
    head = (keep + 1) // 2
    return text[:head] + "…" + (text[len(text) - (keep - head):] if keep > head else "")


class RaceScreen(Screen[None]):
    """The attempts of one race, best first once it has ended."""

    DEFAULT_CSS = """
    RaceScreen #race-title { height: auto; padding: 0 1; text-style: bold; }
    RaceScreen #race-status { height: auto; padding: 0 1; color: $text-muted; }
    RaceScreen DataTable { height: 1fr; }
    RaceScreen #race-note { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("d", "diff", "Diff", id="agentcli.race.diff", tooltip="Show the selected attempt's change (or enter)"),
        Binding("a", "apply", "Apply", id="agentcli.race.apply",
                tooltip="Write the selected attempt's change into the workspace (asks first)"),
        Binding("q", "quit_race", "Quit", id="agentcli.race.quit", tooltip="Leave the race view"),
        Binding("q", "leave", "Back", id="agentcli.race.back", tooltip="Back to the agent"),
        Binding("escape", "leave", "Back", id="agentcli.race.back.escape", show=False, tooltip="Back to the agent"),
    ]

    @dataclass
    class RaceLoaded(Message):
        """The race record was read again."""

        race: Race
        """The record as it is on disk now."""

    def __init__(self, data_dir: Path, race_id: str, *, standalone: bool = False) -> None:
        """
        Args:
            data_dir: agentcli's data folder (the race records).
            race_id: The race to show.
            standalone: The screen is the whole app (``agentcli race show``): leaving it quits;
                opened from the agent's screen (the palette), leaving goes back there.
        """
        super().__init__()
        self.data_dir = data_dir
        self.race_id = race_id
        self.standalone = standalone
        self.race: Race | None = None
        self._order: list[str] = []
        self._shown: list[tuple[str, tuple[str, ...], bool]] = []
        self._listed: list[AttemptRow] = []
        self._model_width = 0
        """The model column's width as last drawn: names longer than this were shortened."""

    def compose(self) -> Iterable[Widget]:
        from agentcli.fleet.view import COLUMNS

        yield Static(id="race-title")
        yield Static(id="race-status")
        table: DataTable[str] = DataTable(cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)  # widths follow the cells once the race is read (_fill)
        yield table
        yield Static(id="race-note")
        yield Footer()

    def on_mount(self) -> None:
        self._load()
        self._timer = self.set_interval(POLL_S, self._load)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # One q: Quit when the race view is the app, Back when it was opened over the agent.
        if action == "quit_race":
            return self.standalone
        if action == "leave":
            return not self.standalone
        return True

    def action_quit_race(self) -> None:
        self.app.exit()

    def action_leave(self) -> None:
        self.dismiss()

    @work(thread=True, exclusive=True, exit_on_error=False, group="race-load")
    def _load(self) -> None:
        from agentcli.fleet import records

        try:
            race = records.load(self.data_dir, self.race_id)
        except records.RaceNotFound as error:
            self.app.call_from_thread(self.notify, str(error), severity="error")
            return
        self.post_message(self.RaceLoaded(race))

    def on_race_screen_race_loaded(self, message: RaceLoaded) -> None:
        from agentcli.fleet.view import rows

        race = message.race
        self.race = race
        if race.ended is not None:
            self._timer.stop()
        self.query_one("#race-title", Static).update(
            Content.assemble(("race ", "$text-muted"), (race.id, "bold"), "  ", " ".join(race.task.split())[:200]))
        passed = sum(1 for attempt in race.attempts if attempt.passed)
        state = "running" if race.ended is None else f"ended: {passed} of {len(race.attempts)} passed"
        applied = next((item for item in reversed(race.applied) if item.undone is None), None)
        if applied is not None:
            state += f"; attempt {applied.attempt} applied (agentcli race undo takes it back)"
        self.query_one("#race-status", Static).update(
            f"{len(race.attempts)} attempts, {race.jobs} at a time, on {race.backend}; {state}")
        listed = rows(race)
        shown = [(row.attempt_id, row.cells, row.passed) for row in listed]
        if shown != self._shown:
            self._fill(listed)
            self._shown = shown
        self._show_note()

    def on_resize(self) -> None:
        if self._listed:
            self._fill(self._listed)  # the model column's share of the width changed
            self._show_note()

    def _fill(self, listed: list[AttemptRow]) -> None:
        """Rebuilds the table (a few rows) with columns as wide as their widest cell.

        Rebuilt rather than updated cell by cell: a few rows cost nothing, and DataTable's auto
        widths lag behind cells updated in place (cut to the heading's width). Only the model
        column gives way when the screen is narrow (shortened in its middle): the figures, checks
        and change stay on screen.
        """
        from agentcli.fleet.view import COLUMNS

        self._listed = listed
        table = self.query_one(DataTable)
        selected = self._selected()
        widths = [max([len(label), *(len(row.cells[index]) for row in listed)]) for index, label in enumerate(COLUMNS)]
        model = COLUMNS.index("model")
        padding = 2 * table.cell_padding * len(COLUMNS)
        room = self.size.width - padding - (sum(widths) - widths[model])
        if self.size.width and room < widths[model]:
            widths[model] = max(MODEL_MIN_WIDTH, room)
        self._model_width = widths[model]
        with self.app.batch_update():
            table.clear(columns=True)
            for label, width in zip(COLUMNS, widths, strict=True):
                table.add_column(label, width=width)
            for row in listed:
                cells = list(row.cells)
                cells[model] = _shortened(cells[model], widths[model])
                table.add_row(*self._styled(tuple(cells), row.passed), key=row.attempt_id)
            self._order = [row.attempt_id for row in listed]
            if selected in self._order:
                table.move_cursor(row=self._order.index(selected))

    def _styled(self, cells: tuple[str, ...], passed: bool) -> list[Text]:
        """Cells as rich ``Text`` (which the table measures for its column widths), passing rows in the
        theme's success colour."""
        style = self.app.theme_variables.get("success", "green") if passed else ""
        return [Text(cell, style=style) for cell in cells]

    def _selected(self) -> str | None:
        table = self.query_one(DataTable)
        if not self._order or table.cursor_row >= len(self._order):
            return None
        return self._order[table.cursor_row]

    def on_data_table_row_highlighted(self, _: DataTable.RowHighlighted) -> None:
        self._show_note()

    def on_data_table_row_selected(self, _: DataTable.RowSelected) -> None:
        # The table takes enter for itself (select the row): selecting a row shows its diff.
        self.action_diff()

    def _show_note(self) -> None:
        from agentcli.fleet.view import rows, setup_words

        selected = self._selected()
        attempt = self.race.attempt(selected) if self.race is not None and selected is not None else None
        if self.race is None or attempt is None:
            return
        note = next((row.note for row in rows(self.race) if row.attempt_id == attempt.id), "")
        home = str(Path.home())
        where = "~" + attempt.workdir[len(home):] if attempt.workdir.startswith(home + "/") else attempt.workdir
        setup = setup_words(attempt)
        # A model name the narrow table shortened is given whole here, for the selected attempt.
        whole = f"{setup}, " if len(setup) > self._model_width else ""
        lines = [f"attempt {attempt.id}: {note}" if note else "", f"{whole}in {where}"]
        self.query_one("#race-note", Static).update("\n".join(line for line in lines if line))

    def action_diff(self) -> None:
        selected = self._selected()
        attempt = self.race.attempt(selected) if self.race and selected else None
        if attempt is None or not attempt.has_change:
            self.notify(_no_result_words(attempt, "a diff"), severity="warning")
            return
        self.app.push_screen(DiffScreen(self.data_dir, Path(attempt.workdir), attempt.id))

    def action_apply(self) -> None:
        self._apply()

    @work(exclusive=True, group="race-apply")
    async def _apply(self) -> None:
        selected = self._selected()
        attempt = self.race.attempt(selected) if self.race and selected else None
        if attempt is None or not attempt.has_change:
            self.notify(_no_result_words(attempt, "a result to apply"), severity="warning")
            return
        if attempt.change.files == 0:
            # Asking "apply 0 files?" helps no one; a session resumed since is what the CLI takes.
            self.notify(f"Attempt {attempt.id} changed nothing: nothing to apply. (If you resumed its session "
                        f"since, `agentcli race apply {attempt.id}` takes what its directory holds now.)",
                        severity="warning", timeout=10)
            return
        if await self.app.push_screen_wait(ConfirmApply(attempt.id, attempt.change.files)):
            self._apply_now(attempt.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="race-apply-files")
    def _apply_now(self, attempt_id: str) -> None:
        from agentcli.fleet import records
        from agentcli.fleet.apply import ApplyConflict, ApplyError, apply_attempt

        try:
            result = apply_attempt(records.load(self.data_dir, self.race_id), attempt_id, self.data_dir)
        except ApplyConflict as conflict:
            self.app.call_from_thread(self.notify, _conflict_words(conflict, attempt_id), severity="error", timeout=15)
            return
        except ApplyError as error:
            self.app.call_from_thread(self.notify, str(error), severity="error")
            return
        written = f"{len(result.paths)} path{'s' if len(result.paths) != 1 else ''}"
        self.app.call_from_thread(self.notify, f"Applied attempt {attempt_id}: {written} written. "
                                  "Undo with `agentcli race undo`.", timeout=10)
        self.app.call_from_thread(self._load)  # the status line says what is applied now


def _no_result_words(attempt: Attempt | None, wanted: str) -> str:
    """Why the selected row has no diff or result: still running (it will), or never written."""
    if attempt is None:
        return "No attempt is selected."
    if attempt.state in ("pending", "starting", "running", "checking"):
        return f"Attempt {attempt.id} is still {attempt.state}; it has {wanted} once it ends."
    why = attempt.note or attempt.state
    return f"Attempt {attempt.id} has no {wanted.removeprefix('a ')}: it never started ({why})."


def _conflict_words(conflict: ApplyConflict, attempt_id: str) -> str:
    """Why nothing was applied: the user's own edits, or an earlier apply of another attempt (a
    switch of attempts, which ``race undo`` makes cleanly)."""
    listed = ", ".join(item.path for item in conflict.conflicts[:5])
    force = f"`agentcli race apply {attempt_id} --force` takes the attempt's."
    earlier = {item.applied_by for item in conflict.conflicts}
    if None not in earlier:
        which = ", ".join(sorted(str(attempt) for attempt in earlier))
        return (f"Nothing applied: applying attempt {which} wrote {listed}. `agentcli race undo` takes that back "
                f"first; {force}")
    return f"Nothing applied: you changed {listed} since the race began. {force}"


class DiffScreen(Screen[None]):
    """One attempt's change as a unified diff."""

    DEFAULT_CSS = """
    DiffScreen #diff-title { height: auto; padding: 0 1; text-style: bold; }
    DiffScreen RichLog { height: 1fr; }
    """
    BINDINGS = [Binding("q,escape,d", "app.pop_screen", "Back", id="agentcli.race.diff.back",
                        tooltip="Back to the attempts")]

    def __init__(self, data_dir: Path, workdir: Path, attempt_id: str) -> None:
        super().__init__()
        self.data_dir, self.workdir, self.attempt_id = data_dir, workdir, attempt_id

    def compose(self) -> Iterable[Widget]:
        yield Static(f"attempt {self.attempt_id}: its change", id="diff-title")
        yield RichLog(highlight=False, markup=False, wrap=False, max_lines=20_000)
        yield Footer()

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="race-diff")
    def _load(self) -> None:
        from rich.syntax import Syntax

        from agentcli.fleet.workdir import WorkdirError, result_patch

        log = self.query_one(RichLog)
        try:
            patch = result_patch(self.workdir, self.data_dir)
        except WorkdirError as error:  # the directory is gone (race rm) or its store unreadable: say so here
            self.app.call_from_thread(log.write, f"No diff to show: {error}.")
            return
        except Exception as error:  # noqa: BLE001 - the store's errors name what is missing; show, don't crash
            self.app.call_from_thread(self.notify, f"{type(error).__name__}: {error}", severity="error")
            return
        shown = Syntax(patch, "diff", theme="ansi_dark", word_wrap=False) if patch else "This attempt changed nothing."
        self.app.call_from_thread(log.write, shown)


class ConfirmApply(ModalScreen[bool]):
    """Asks before writing an attempt's change into the workspace."""

    DEFAULT_CSS = """
    ConfirmApply { align: center middle; }
    ConfirmApply > Vertical { width: 64; max-width: 95%; height: auto; border: thick $warning;
                              background: $surface; padding: 1 2; }
    ConfirmApply #apply-note { color: $text-muted; margin: 1 0; }
    ConfirmApply Horizontal { height: auto; align-horizontal: right; }
    ConfirmApply Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("y", "confirm", "Apply", id="agentcli.race.apply.confirm", tooltip="Write the attempt's change"),
        Binding("n,escape", "cancel", "Cancel", id="agentcli.race.apply.cancel", tooltip="Write nothing"),
    ]

    def __init__(self, attempt_id: str, files: int) -> None:
        super().__init__()
        self.attempt_id, self.files = attempt_id, files

    def compose(self) -> Iterable[Widget]:
        with Vertical():
            yield Static(Content.assemble("Apply attempt ", (self.attempt_id, "bold $accent"),
                                          f" ({self.files} file{'s' if self.files != 1 else ''}) to the workspace?"))
            yield Static("The workspace is snapshotted first (agentcli race undo). Files you changed since the "
                         "race began are kept, and then nothing is written.", id="apply-note")
            with Horizontal():
                yield Button("Cancel (n)", id="cancel")
                yield Button("Apply (y)", id="confirm", variant="warning")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class RaceApp(App[int]):
    """``agentcli race show`` in a terminal: the race screen alone, in the user's theme."""

    TITLE = "agentcli race"

    def __init__(self, data_dir: Path, race_id: str, theme: str | None = None) -> None:
        super().__init__()
        self.data_dir, self.race_id = data_dir, race_id
        for spec in load_themes().themes.values():
            self.register_theme(spec.to_theme())
        if theme and theme in self.available_themes:
            self.theme = theme

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def on_mount(self) -> None:
        self.push_screen(RaceScreen(self.data_dir, self.race_id, standalone=True))
