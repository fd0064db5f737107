"""A race's record over its life: a race whose process died, undo after undo, applies made while
it runs, and the rows that tell attempts apart. Real snapshots and attempt directories, no model."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentcli.fleet import records
from agentcli.fleet.apply import apply_attempt
from agentcli.fleet.models import Race
from agentcli.fleet.race import AttemptPlan, start_race
from agentcli.fleet.view import rows
from agentcli.session.log import SessionMeta, sessions_dir
from tests.fleet.conftest import BAD, GOOD, RACE_ID, agentcli


def _data() -> Path:
    """The data dir the CLI uses in this test (tests/conftest.py points XDG_DATA_HOME at a fresh one)."""
    return Path(os.environ["XDG_DATA_HOME"]) / "agentcli"


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped): nothing runs under it now."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_race_whose_process_died_is_ended_and_can_be_removed(project: Path) -> None:
    data = _data()
    race = start_race(project, data, "fix add", [AttemptPlan(), AttemptPlan()], backend="local", jobs=1)
    race.attempts[0].state, race.attempts[0].session_id = "running", "abc123"
    race.pid = _dead_pid()  # `agentcli race` killed (SIGKILL, a closed terminal) mid-race
    records.save(data, race)

    listed = agentcli("race", "list", cwd=project)
    assert listed.returncode == 0 and "running" not in listed.stdout and "0/2 passed" in listed.stdout

    settled = records.load(data, race.id)
    assert settled.ended is not None
    assert [a.state for a in settled.attempts] == ["cancelled", "cancelled"]
    assert "ended before this attempt did; its session can be resumed" in settled.attempts[0].note
    assert "can be resumed" not in settled.attempts[1].note  # it never started

    removed = agentcli("race", "rm", race.id, cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert not (records.races_dir(data) / race.id).exists()


def test_a_race_whose_process_runs_stays_running(project: Path) -> None:
    data = _data()
    race = start_race(project, data, "fix add", [AttemptPlan()], backend="local", jobs=1)  # this process runs it
    refused = agentcli("race", "rm", race.id, cwd=project)
    assert refused.returncode == 2 and "has not ended" in refused.stderr and "--force" in refused.stderr
    forced = agentcli("race", "rm", "--force", race.id, cwd=project)
    assert forced.returncode == 2 and f"is running here (pid {os.getpid()})" in forced.stderr
    assert records.load(data, race.id).ended is None


def _legacy_race(project: Path, quiet_s: float) -> Race:
    """A record as agentcli wrote it before races had owners (no pid, no host), last written
    ``quiet_s`` ago, its first attempt running a session."""
    data = _data()
    race = start_race(project, data, "fix add", [AttemptPlan(), AttemptPlan()], backend="local", jobs=1)
    race.pid = race.host = None
    race.attempts[0].state, race.attempts[0].session_id = "running", "legacy-session"
    records.save(data, race)
    record = records.races_dir(data) / race.id / "race.json"
    written = time.time() - quiet_s
    os.utime(record, (written, written))
    return race


def _session(session_id: str, pid: int) -> None:
    now = datetime.now(UTC)
    folder = sessions_dir(_data()) / session_id
    folder.mkdir(parents=True)
    meta = SessionMeta(id=session_id, workspace="/w", created=now, updated=now, title="fix add", pid=pid)
    (folder / "meta.json").write_text(meta.model_dump_json())


def test_an_old_record_whose_sessions_ended_long_ago_is_ended(project: Path) -> None:
    race = _legacy_race(project, quiet_s=records.LEGACY_QUIET_S + 60)
    _session("legacy-session", _dead_pid())  # cut off with the race: no outcome, its process gone

    listed = agentcli("race", "list", cwd=project)
    assert listed.returncode == 0 and "running" not in listed.stdout and "0/2 passed" in listed.stdout
    settled = records.load(_data(), race.id)
    assert [a.state for a in settled.attempts] == ["cancelled", "cancelled"]
    assert settled.attempts[0].note.startswith("the race's process ended before this attempt did")
    assert agentcli("race", "rm", race.id, cwd=project).returncode == 0


def test_an_old_record_written_lately_or_with_a_live_session_stays_running(project: Path) -> None:
    data = _data()
    recent = _legacy_race(project, quiet_s=60)  # its process may be running checks: no telling yet
    assert records.load(data, recent.id).ended is None
    refused = agentcli("race", "rm", recent.id, cwd=project)
    assert refused.returncode == 2 and "--force" in refused.stderr
    forced = agentcli("race", "rm", "--force", recent.id, cwd=project)  # the user knows it is gone
    assert forced.returncode == 0, forced.stderr
    assert not (records.races_dir(data) / recent.id).exists()

    live = _legacy_race(project, quiet_s=records.LEGACY_QUIET_S + 60)
    _session("legacy-session", os.getpid())  # a process writes its session still
    assert records.load(data, live.id).ended is None
    forced = agentcli("race", "rm", "--force", live.id, cwd=project)
    assert forced.returncode == 2 and "attempt 1 still runs its session" in forced.stderr
    assert (records.races_dir(data) / live.id).exists()


def test_each_undo_takes_back_the_apply_before_the_last(finished_race: tuple[Path, Path]) -> None:
    _, project = finished_race
    original = (project / "calc.py").read_text()
    assert agentcli("race", "apply", "2", cwd=project).returncode == 0
    # Switching attempts conflicts on what the first apply wrote, and says that it was that apply.
    switch = agentcli("race", "apply", "1", cwd=project)
    assert switch.returncode == 1 and (project / "calc.py").read_text() == GOOD, switch.stderr
    assert "  conflict  calc.py: changed in the workspace since the race began (race apply 2 wrote it;" in switch.stderr
    assert switch.stderr.count("calc.py") == 1  # listed once
    assert agentcli("race", "apply", "1", "--force", cwd=project).returncode == 0
    assert (project / "calc.py").read_text() == BAD

    first = agentcli("race", "undo", "--yes", cwd=project)
    assert first.returncode == 0, first.stderr
    assert "before attempt 1 was applied" in first.stdout and (project / "calc.py").read_text() == GOOD
    second = agentcli("race", "undo", "--yes", cwd=project)
    assert second.returncode == 0, second.stderr
    assert "before attempt 2 was applied" in second.stdout and (project / "calc.py").read_text() == original
    third = agentcli("race", "undo", "--yes", cwd=project)
    assert third.returncode == 2 and "undone already" in third.stderr
    assert (project / "calc.py").read_text() == original

    shown = agentcli("race", "show", "--plain", cwd=project).stdout
    assert shown.count("undone at") == 2 and "undo: agentcli race undo" not in shown


def test_an_apply_made_while_the_race_runs_is_kept_by_its_next_save(finished_race: tuple[Path, Path]) -> None:
    """The live view (or another terminal) applies an attempt that ended while others still run."""
    data, project = finished_race
    running = records.load(data, RACE_ID)  # the running process's copy, from before the apply
    apply_attempt(records.load(data, RACE_ID), "2", data)
    running.attempts[0].steps += 1  # the race goes on and records its progress
    records.save_running(data, running)
    assert [a.attempt for a in records.load(data, RACE_ID).applied] == ["2"]
    assert agentcli("race", "undo", "--yes", cwd=project).returncode == 0


def test_a_cancelled_attempt_finished_later_can_be_diffed_and_applied(finished_race: tuple[Path, Path]) -> None:
    """Ctrl-C pauses an attempt; `agentcli resume` finishes it; its change is then diffed and applied."""
    data, project = finished_race
    race = records.load(data, RACE_ID)
    attempt = race.attempts[1]
    attempt.state, attempt.final_tree, attempt.report = "cancelled", None, None
    records.save(data, race)
    (Path(attempt.workdir) / "calc.py").write_text(GOOD + "# finished after a resume\n")

    diff = agentcli("race", "diff", "2", cwd=project)
    assert diff.returncode == 0, diff.stderr
    assert "+# finished after a resume" in diff.stdout
    applied = agentcli("race", "apply", "2", cwd=project)
    assert applied.returncode == 0, applied.stderr
    assert (project / "calc.py").read_text() == GOOD + "# finished after a resume\n"


def test_an_attempt_that_never_started_has_nothing_to_apply(project: Path) -> None:
    data = _data()
    race = start_race(project, data, "fix add", [AttemptPlan()], backend="local", jobs=1)
    race.attempts[0].state = "cancelled"
    race.pid = _dead_pid()
    records.save(data, race)
    for command, wanted in (("diff", "diff"), ("apply", "result to apply")):
        proc = agentcli("race", command, "1", cwd=project)
        assert proc.returncode == 2, proc.stderr  # both a usage error, as for a running attempt
        assert f"attempt 1 has no {wanted}; it never started (cancelled" in proc.stderr, proc.stderr
    race.attempts[0].state = "running"
    race.pid = os.getpid()  # a race that runs: its attempt will have a result
    records.save(data, race)
    for command, wanted in (("diff", "a diff"), ("apply", "a result to apply")):
        proc = agentcli("race", command, "1", cwd=project)
        assert proc.returncode == 2 and f"attempt 1 is still running; it has {wanted} once it ends" in proc.stderr


def test_rows_name_each_attempts_workflow(finished_race: tuple[Path, Path]) -> None:
    data, _ = finished_race
    race = records.load(data, RACE_ID)
    race.attempts[0].workflow = "plan-build"
    models = {row.attempt_id: row.cells[1] for row in rows(race)}
    assert models == {"1": "openai/first · plan-build", "2": "openai/second"}


def test_applying_to_a_workspace_that_is_gone_says_so(finished_race: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    _, project = finished_race
    moved = tmp_path / "moved"
    shutil.move(project, moved)
    proc = agentcli("race", "apply", "2", "--race", RACE_ID, cwd=moved)
    assert proc.returncode == 1, proc.stderr
    assert f"the race's workspace {project} is no longer a folder" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_mistyped_race_command_is_refused_not_raced(finished_race: tuple[Path, Path],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`race stop` or `race shwo` would otherwise start N sessions told to "stop"; `ls` lists.
    In process: the refusal is the command line's parsing, before anything runs."""
    from typer.testing import CliRunner

    from agentcli.cli import app

    data, project = finished_race
    monkeypatch.chdir(project)
    before = sorted(path.name for path in (data / "fleet" / "races").iterdir())
    for word, hint in (("stop", ""), ("shwo", " (did you mean 'show'?)")):
        refused = CliRunner().invoke(app, ["race", word])
        assert refused.exit_code == 2, refused.output
        assert refused.stderr.startswith(f"agentcli: '{word}' is not a race command{hint}; the commands are start,")
        assert f"agentcli race start {word}" in refused.stderr
    assert sorted(path.name for path in (data / "fleet" / "races").iterdir()) == before  # nothing started
    listed = CliRunner().invoke(app, ["race", "ls"])
    assert listed.exit_code == 0 and listed.stdout.startswith(RACE_ID), listed.output


def test_a_passing_attempt_that_changed_nothing_ranks_after_one_that_did(finished_race: tuple[Path, Path]) -> None:
    """Checks that pass on the workspace as it was say nothing of the task: the attempt with a
    change comes first, and a best attempt with nothing to apply is not offered to apply."""
    from agentcli.fleet.models import ChangeSize
    from agentcli.fleet.scoring import best, ranked

    data, project = finished_race
    race = records.load(data, RACE_ID)
    failing, passing = race.attempt("1"), race.attempt("2")
    assert failing is not None and passing is not None
    idle = passing.model_copy(update={"id": "3", "change": ChangeSize()}, deep=True)
    assert [a.id for a in ranked([idle, failing, passing])] == ["2", "3", "1"]
    race.attempts = [failing, idle]  # only the one that changed nothing passed
    assert best(race.attempts) is not None and best(race.attempts).id == "3"  # type: ignore[union-attr]
    records.save(data, race)
    shown = agentcli("race", "show", "--plain", cwd=project)
    assert shown.returncode == 0, shown.stderr
    assert "attempt 3 passed without changing anything; nothing to apply" in shown.stdout
    assert "race apply 3" not in shown.stdout


def test_removing_a_race_whose_apply_stands_says_undo_goes_with_it(finished_race: tuple[Path, Path]) -> None:
    data, project = finished_race
    apply_attempt(records.load(data, RACE_ID), "2", data)
    listed = agentcli("race", "list", cwd=project).stdout  # which races have an apply `race undo` takes back
    assert listed.startswith(f"{RACE_ID}  1/2 passed  applied 2  make add() work"), listed
    removed = agentcli("race", "rm", RACE_ID, cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert ("attempt 2's apply stays in the workspace (calc.py); with the race gone, `agentcli race undo` can no "
            "longer take it back") in removed.stdout
    assert (project / "calc.py").read_text() == GOOD


def test_applying_an_attempt_that_changed_nothing_writes_and_records_nothing(finished_race: tuple[Path, Path]) -> None:
    from tests.fleet.conftest import _attempt

    data, project = finished_race
    race = records.load(data, RACE_ID)
    original = (project / "calc.py").read_text()
    race.attempts.append(_attempt(project, data, race.base_tree, "3", original, True, "openai/idle"))
    records.save(data, race)
    proc = agentcli("race", "apply", "3", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "nothing to write: attempt 3 changed nothing"  # no "undo with" for nothing
    assert records.load(data, RACE_ID).applied == [] and (project / "calc.py").read_text() == original
