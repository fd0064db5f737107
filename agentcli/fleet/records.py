"""Where the fleet keeps its races on disk, and reading and writing their ``race.json``.

    <data dir>/fleet/races/<race id>/race.json           the record (rewritten atomically)
    <data dir>/fleet/races/<race id>/<attempt>/work/     the attempt's directory
    <data dir>/fleet/races/<race id>/<attempt>/run.jsonl its session's printed events
"""

from __future__ import annotations

import os
import secrets
import socket
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from agentcli.fleet.models import Race
from agentcli.pids import alive


class RaceNotFound(Exception):
    """No race matches what the user typed."""


def races_dir(data_dir: Path) -> Path:
    return data_dir / "fleet" / "races"


def new_race_id() -> str:
    """Sortable by time, unique without coordination: ``race-20261124-214501-3fa2``."""
    return f"race-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def attempt_dir(data_dir: Path, race_id: str, attempt_id: str) -> Path:
    return races_dir(data_dir) / race_id / attempt_id


def save(data_dir: Path, race: Race) -> None:
    folder = races_dir(data_dir) / race.id
    folder.mkdir(parents=True, exist_ok=True)
    # A temporary name of this process's own: a reader settling an orphaned race (see load) may
    # write at the same time as another reader.
    temp = folder / f"race.json.{os.getpid()}.tmp"
    temp.write_text(race.model_dump_json(indent=2), encoding="utf-8")
    os.replace(temp, folder / "race.json")


def save_running(data_dir: Path, race: Race) -> None:
    """Saves a running race's progress, keeping the applies recorded on disk meanwhile.

    ``race apply`` (in another terminal, or the live view) may take an attempt that ended while
    others still run; the running process's copy of the race knows nothing of it, and a plain
    save would drop the record ``race undo`` needs.
    """
    try:
        race.applied = load(data_dir, race.id).applied
    except RaceNotFound:
        pass
    save(data_dir, race)


def load(data_dir: Path, race_id: str) -> Race:
    """The race as recorded; one whose process is gone without ending it is ended here (and saved).

    Without that, a race whose ``agentcli race`` was killed (SIGKILL, a closed terminal, a
    reboot) would show "running" forever: ``race show`` would poll it, ``race rm`` refuse it.
    """
    path = races_dir(data_dir) / race_id / "race.json"
    try:
        race = Race.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError:
        raise RaceNotFound(f"no race {race_id} in {races_dir(data_dir)}") from None
    except ValidationError as error:
        raise RaceNotFound(f"{path} is not a race record agentcli can read: {error.errors()[0]['msg']}") from None
    if race.ended is None and orphaned(race, data_dir):
        _settle(race)
        try:
            save(data_dir, race)
        except OSError:
            pass  # a read-only data dir: the reader still sees the race ended
    return race


def new_owner() -> tuple[int, str]:
    """This process and machine, recorded as a new race's owner."""
    return os.getpid(), socket.gethostname()


LEGACY_QUIET_S = 3600.0
"""How long a record with no owner must have gone unwritten before it counts as orphaned.

A running race rewrites its record at every step of every attempt; the longest it stays quiet
while alive is while checks run (each up to ``[checks] timeout_s``, 600 s by default) or a
copy is written. An hour is well past that, and ``race rm --force`` needs no wait."""


def orphaned(race: Race, data_dir: Path) -> bool:
    """The race's process no longer runs: nothing will end the race but a reader.

    With an owner recorded: that process, on this machine, is gone (a record from another
    machine is trusted). A record written before owners were (no pid) is orphaned when none of
    its attempts' sessions runs here and it has not been written for :data:`LEGACY_QUIET_S`.
    """
    if race.pid is None:
        return _quiet_for(data_dir, race.id) > LEGACY_QUIET_S and not live_sessions(race, data_dir)
    if race.host != socket.gethostname():
        return False
    return not alive(race.pid)


def owner_runs(race: Race) -> bool:
    """The process recorded as running the race runs on this machine now."""
    return race.pid is not None and race.host == socket.gethostname() and alive(race.pid)


def live_sessions(race: Race, data_dir: Path) -> list[str]:
    """Ids of the attempts whose sessions a process is writing on this machine now."""
    from agentcli.session.log import SessionNotFound, read_meta, sessions_dir, status

    live: list[str] = []
    for attempt in race.attempts:
        if attempt.session_id is None or attempt.state in ("done", "failed", "cancelled"):
            continue
        try:
            meta = read_meta(sessions_dir(data_dir) / attempt.session_id)
        except SessionNotFound:
            continue  # not written here (yet, or on a Ray worker): the quiet record decides
        if status(meta) == "running":
            live.append(attempt.id)
    return live


def _quiet_for(data_dir: Path, race_id: str) -> float:
    """Seconds since the race's record was last written."""
    import time

    try:
        return time.time() - (races_dir(data_dir) / race_id / "race.json").stat().st_mtime
    except OSError:
        return 0.0


def _settle(race: Race) -> None:
    for attempt in race.attempts:
        if attempt.state in ("done", "failed", "cancelled"):
            continue
        started = attempt.state != "pending"
        attempt.state = "cancelled"
        process = f"the race's process ({race.pid})" if race.pid is not None else "the race's process"
        attempt.note = (f"{process} ended before this attempt did"
                        + ("; its session can be resumed" if started and attempt.session_id else ""))
    race.ended = datetime.now(UTC)


def all_races(data_dir: Path, workspace: Path | None = None) -> list[Race]:
    """Races newest first, of one workspace or of all; unreadable records are left out."""
    folder = races_dir(data_dir)
    found: list[Race] = []
    if not folder.is_dir():
        return found
    for entry in sorted(folder.iterdir(), reverse=True):
        try:
            race = load(data_dir, entry.name)
        except RaceNotFound:
            continue
        if workspace is None or Path(race.workspace) == workspace:
            found.append(race)
    return found


def find(data_dir: Path, ref: str | None, workspace: Path) -> Race:
    """A race by id or unique prefix (any workspace), or this workspace's newest."""
    if ref is None:
        mine = all_races(data_dir, workspace)
        if not mine:
            raise RaceNotFound(f"no races in {workspace}; start one with `agentcli race -n 3 \"TASK\"`")
        return mine[0]
    names = sorted(p.name for p in races_dir(data_dir).glob(f"{ref}*")) if races_dir(data_dir).is_dir() else []
    if ref in names:
        return load(data_dir, ref)
    if len(names) == 1:
        return load(data_dir, names[0])
    if not names:
        raise RaceNotFound(f"no race matches {ref!r}; `agentcli race list` shows them")
    raise RaceNotFound(f"{ref!r} matches {len(names)} races: {', '.join(names[:5])}; type more of the id")


def remove_race(data_dir: Path, race: Race) -> int:
    """Deletes the race's folder (attempt directories, logs, record) and the attempts' snapshot stores.

    Returns:
        Bytes freed.
    """
    import shutil

    from agentcli.fleet.workdir import discard, store_path

    folder = races_dir(data_dir) / race.id
    if not folder.is_dir():
        raise RaceNotFound(f"no race {race.id} in {races_dir(data_dir)}")
    freed = _size(folder)
    for attempt in race.attempts:
        workdir = Path(attempt.workdir)
        if folder in workdir.parents:  # never anything outside the race's own folder
            if workdir.is_dir():
                freed += _size(store_path(workdir, data_dir))
            discard(workdir, data_dir)
    shutil.rmtree(folder)
    return freed


def _size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total
