"""The race view: rows per attempt, the diff one key away, apply behind a confirmation.

The race is made with the fleet's own functions (a real snapshot, real attempt directories,
real collected results) and no model: what the screen shows is what a finished race left.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import DataTable, RichLog, Static

from agentcli.fleet import records
from agentcli.tui.race_screen import ConfirmApply, DiffScreen, RaceApp
from tests.fleet.conftest import GOOD, RACE_ID


async def _table_filled(app: RaceApp, pilot: object) -> DataTable[str]:
    from tests.support.waiting import eventually

    table = app.screen.query_one(DataTable)
    await eventually(lambda: table.row_count == 2, what="the attempts to be listed")
    return table


async def _listed(pilot: object) -> None:
    """Before a screenshot: the attempts listed and drawn."""
    await _table_filled(pilot.app, pilot)  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


async def test_rows_rank_the_passing_attempt_first_and_d_shows_its_diff(finished_race: tuple[Path, Path]) -> None:
    from tests.support.waiting import eventually

    data, _ = finished_race
    app = RaceApp(data, RACE_ID)
    async with app.run_test(size=(100, 30)) as pilot:
        table = await _table_filled(app, pilot)
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first[:3] == ["★2", "openai/second", "completed"] and first[6] == "1/1 pass"
        assert [str(cell) for cell in table.get_row_at(1)][6] == "0/1 fail"
        await pilot.press("d")
        assert isinstance(app.screen, DiffScreen) and app.screen.attempt_id == "2"
        log = app.screen.query_one(RichLog)
        await eventually(lambda: len(log.lines) > 0, what="the diff to be written")
        text = "\n".join(line.text for line in log.lines)
        assert "+    return a + b" in text and "-    raise NotImplementedError" in text
        await pilot.press("escape")
        await pilot.press("down", "enter")  # enter on a row opens its diff too
        assert isinstance(app.screen, DiffScreen) and app.screen.attempt_id == "1"


async def test_a_applies_the_selected_attempt_after_asking(finished_race: tuple[Path, Path]) -> None:
    from tests.support.waiting import eventually

    data, project = finished_race
    app = RaceApp(data, RACE_ID)
    async with app.run_test(size=(100, 30)) as pilot:
        await _table_filled(app, pilot)
        await pilot.press("a")
        await eventually(lambda: isinstance(app.screen, ConfirmApply), what="the confirmation")
        await pilot.press("n")
        await app.workers.wait_for_complete()
        assert (project / "calc.py").read_text().endswith("NotImplementedError\n")
        await pilot.press("a")
        await eventually(lambda: isinstance(app.screen, ConfirmApply), what="the confirmation")
        await pilot.press("y")
        await eventually(lambda: (project / "calc.py").read_text() == GOOD, what="the attempt to be applied")
        status = app.screen.query_one("#race-status", Static)
        await eventually(lambda: "attempt 2 applied" in str(status.render()), what="the status to say so")
        # Switching to attempt 1 conflicts with what applying 2 wrote: the refusal says so (not "you changed").
        await pilot.press("down", "a")
        await eventually(lambda: isinstance(app.screen, ConfirmApply), what="the confirmation")
        await pilot.press("y")
        wanted = "Nothing applied: applying attempt 2 wrote calc.py. `agentcli race undo` takes that back first"
        await eventually(lambda: any(n.message.startswith(wanted) for n in app._notifications), what="the refusal")
    assert [a.attempt for a in records.load(data, RACE_ID).applied] == ["2"]
    assert (project / "calc.py").read_text() == GOOD


def test_race_view_snapshot(finished_race: tuple[Path, Path], snap_compare: object,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """You should see the race's task, two attempts (attempt 2 starred, first, in the success colour,
    1/1 pass; attempt 1 below it, 0/1 fail), the selected attempt's folder under ~ and the footer
    with d Diff, a Apply, q Quit."""
    data, project = finished_race
    monkeypatch.setenv("HOME", str(project.parent))  # the folder shows under ~, whatever the machine

    assert snap_compare(RaceApp(data, RACE_ID, theme="agentcli-dark"), terminal_size=(80, 24),  # type: ignore[operator]
                        run_before=_listed)


def test_apply_takes_what_the_attempt_holds_now(finished_race: tuple[Path, Path]) -> None:
    """An attempt's session resumed after the race (or its files edited): apply takes the latest."""
    from agentcli.fleet.apply import apply_attempt

    data, project = finished_race
    race = records.load(data, RACE_ID)
    workdir = Path(race.attempts[1].workdir)
    (workdir / "calc.py").write_text(GOOD + "# improved after the race\n")
    result = apply_attempt(race, "2", data)
    assert result.written == ["calc.py"]
    assert (project / "calc.py").read_text() == GOOD + "# improved after the race\n"
    assert records.load(data, RACE_ID).attempts[1].change.added == 2


async def test_the_agents_palette_opens_a_race_of_this_workspace_and_q_comes_back(
    finished_race: tuple[Path, Path], tmp_path: Path
) -> None:
    from agentcli.config import Settings
    from agentcli.tui.commands import RacesProvider
    from agentcli.tui.race_screen import RaceScreen
    from tests.tui.helpers import make_app, recording, wait_for, write_recording

    _, project = finished_race
    model = write_recording(tmp_path / "rec.json", recording(("Done.", [("complete", {"summary": "done"})])))
    app = make_app(project, None, settings=Settings(model=model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        main = app.screen
        provider = RacesProvider(main)
        await provider.startup()
        [(title, race_id)] = provider.entries
        assert race_id == RACE_ID and "make add() work" in title and "1 of 2 passed" in title
        app.open_race(race_id)
        await wait_for(pilot, lambda: isinstance(app.screen, RaceScreen) and app.screen.query(DataTable),
                       what="the race view")
        await _table_filled(app, pilot)  # type: ignore[arg-type]
        shown = {binding.action for _, binding, enabled, _ in app.active_bindings.values() if enabled}
        assert "leave" in shown and "quit_race" not in shown
        assert not {"toggle_sidebar", "new_session"} & shown, "the session's pane keys would act unseen"
        await pilot.press("ctrl+b")  # hidden: the side panes under the race view stay as they were
        assert isinstance(app.screen, RaceScreen)
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is main, what="the agent's screen again")
        assert app.is_running and app.session is not None


def _running(data: Path) -> None:
    """The finished race made live again: this process runs it, attempt 1 is calling a tool under a
    long model name, attempt 2 is done."""
    import socket

    race = records.load(data, RACE_ID)
    race.ended, race.pid, race.host = None, os.getpid(), socket.gethostname()
    attempt = race.attempts[0]
    attempt.state, attempt.control, attempt.report = "running", "executingTool", None
    attempt.model, attempt.workflow = "anthropic/claude-sonnet-4-5-20250929", "plan-build"
    attempt.steps, attempt.input_tokens, attempt.output_tokens, attempt.cost = 12, 48210, 1934, 0.1742
    records.save(data, race)


async def test_a_running_race_keeps_every_column_on_an_80_column_screen(finished_race: tuple[Path, Path]) -> None:
    from agentcli.fleet.view import COLUMNS
    from tests.support.waiting import eventually

    data, _ = finished_race
    _running(data)
    app = RaceApp(data, RACE_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _table_filled(app, pilot)
        await pilot.pause()
        running = [str(cell) for cell in table.get_row_at(0)]
        assert running[COLUMNS.index("state")] == "executingTool"
        assert running[COLUMNS.index("model")].startswith("anthr") and "…" in running[COLUMNS.index("model")]
        assert table.virtual_size.width <= table.size.width, "the change column is cut off"
        note = app.screen.query_one("#race-note", Static)  # the selected attempt's whole setup
        assert "anthropic/claude-sonnet-4-5-20250929 · plan-build, in " in str(note.render())
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        wide = [str(cell) for cell in table.get_row_at(0)]
        assert wide[COLUMNS.index("model")] == "anthropic/claude-sonnet-4-5-20250929 · plan-build"
        await pilot.press("a")  # on the running attempt: why there is nothing yet, and when there will be
        wanted = "Attempt 1 is still running; it has a result to apply once it ends."
        await eventually(lambda: any(n.message == wanted for n in app._notifications), what="the reason")


def test_running_race_view_snapshot(finished_race: tuple[Path, Path], snap_compare: object,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """You should see attempt 1 running (state executingTool, its long model name shortened in the
    middle, 12 steps, 50,144 tokens, $0.1742) and attempt 2 completed, every column through
    "change" on screen at 80 columns; the status line says running."""
    data, project = finished_race
    monkeypatch.setenv("HOME", str(project.parent))
    _running(data)

    assert snap_compare(RaceApp(data, RACE_ID, theme="agentcli-dark"), terminal_size=(80, 24),  # type: ignore[operator]
                        run_before=_listed)


async def test_a_on_an_attempt_that_changed_nothing_asks_nothing(finished_race: tuple[Path, Path]) -> None:
    from tests.fleet.conftest import _attempt
    from tests.support.waiting import eventually

    data, project = finished_race
    race = records.load(data, RACE_ID)
    race.attempts.append(_attempt(project, data, race.base_tree, "3", (project / "calc.py").read_text(), True,
                                  "openai/idle"))
    records.save(data, race)
    app = RaceApp(data, RACE_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one(DataTable)
        await eventually(lambda: table.row_count == 3, what="the attempts to be listed")
        assert str(table.get_row_at(1)[0]).strip() == "3"  # passing, but after the one that changed something
        await pilot.press("down", "a")
        wanted = "Attempt 3 changed nothing: nothing to apply."
        await eventually(lambda: any(n.message.startswith(wanted) for n in app._notifications), what="the reason")
        assert not isinstance(app.screen, ConfirmApply)


async def test_the_diff_of_an_attempt_whose_directory_is_gone_says_so(finished_race: tuple[Path, Path]) -> None:
    """`race rm` from another terminal while the view is open: the diff screen says why it is empty."""
    import shutil

    from tests.support.waiting import eventually

    data, _ = finished_race
    attempt = records.load(data, RACE_ID).attempt("1")
    assert attempt is not None
    shutil.rmtree(attempt.workdir)
    app = RaceApp(data, RACE_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await _table_filled(app, pilot)
        await pilot.press("down", "d")
        assert isinstance(app.screen, DiffScreen) and app.screen.attempt_id == "1"
        log = app.screen.query_one(RichLog)
        await eventually(lambda: len(log.lines) > 0, what="the reason to be written")
        text = " ".join(line.text for line in log.lines)
        assert text.startswith("No diff to show: ") and "no longer exists" in text, text
