"""Where jobs run: here, as subprocesses (``LocalBackend``), or on a Ray cluster (fleet/ray_backend.py).

A backend takes a prepared directory and a job, and leaves the directory as the job ended it, the
session's log in the local data dir and its printed events in ``log_dir`` — so everything after
(collecting the result, ``race show``, ``race apply``, ``sessions``, ``resume``) does not care
where the job ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from agentcli.fleet.models import JobReport, JobSpec
from agentcli.fleet.runner import Progress, run_job


class Backend(Protocol):
    name: str
    """``local`` or ``ray ADDRESS``: recorded with the race or the batch."""

    def capacity(self) -> int | None:
        """Jobs it can run at once when the user does not say (None: the machine decides, see
        :func:`agentcli.fleet.race.default_jobs`)."""
        ...

    async def run(self, spec: JobSpec, workdir: Path, *, log_dir: Path, progress: Progress | None = None) -> JobReport:
        """Runs ``spec`` in ``workdir`` (cancellation stops it) and reports how it went."""
        ...

    def close(self) -> None:
        """Releases what the backend holds (a Ray connection)."""
        ...


class LocalBackend:
    """Each job an ``agentcli run`` subprocess of this machine."""

    name = "local"

    def capacity(self) -> int | None:
        return None

    async def run(self, spec: JobSpec, workdir: Path, *, log_dir: Path, progress: Progress | None = None) -> JobReport:
        return await run_job(spec, workdir, log_dir=log_dir, progress=progress)

    def close(self) -> None:
        pass
