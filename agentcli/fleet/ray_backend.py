"""Running jobs as Ray tasks, on a cluster or a local head: the optional ``[ray]`` extra.

Each job becomes one Ray task. The prepared directory travels as a tar archive of its tree; the
worker runs :func:`agentcli.fleet.runner.run_job` there exactly as this machine would (agentcli
must be installed on the workers, or listed in ``[fleet] ray_pip`` for Ray's runtime
environment to install), with its own temporary data dir; provider keys are read from the
worker's environment and never put in the task. What comes back — the changed files, the deleted
paths, the session's log, its printed events — is written here as if the job had run here, so
``race show``, ``race apply``, ``sessions`` and ``resume`` work on it. Cancelling the awaiting
coroutine cancels the Ray task (force: the worker dies, and the kernel's parent-death signal ends
the session it ran).

Ray is imported only when a backend is created: ``agentcli --help`` and every other command never
load it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

from agentcli.fleet.archive import changes_since, pack, remove, stat_index, unpack
from agentcli.fleet.models import JobReport, JobSpec
from agentcli.fleet.runner import Progress, run_job
from agentcli.pids import alive

INSTALL = "pip install 'agentcli[ray]'"


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be reached."""


class RayBackend:
    """Jobs as Ray tasks on the cluster at ``address`` (``local`` starts a head in this process)."""

    def __init__(self, address: str, *, pip: list[str] | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise RayUnavailable(f"--ray needs Ray, which is not installed; install it with: {INSTALL}") from None
        self.name = f"ray {address}"
        self._ray: Any = ray  # Any: typed calls with ray installed, Any without; the same either way
        runtime_env: dict[str, Any] = {"pip": list(pip)} if pip else {}
        try:
            if not ray.is_initialized():
                _reachable(address)
                ray.init(address=None if address == "local" else address, runtime_env=runtime_env or None,
                         log_to_driver=False, logging_level=logging.ERROR, include_dashboard=False)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {error}") from None
        self._remote = ray.remote(num_cpus=1, max_retries=0)(remote_job)

    def capacity(self) -> int | None:
        """The cluster's CPUs (each job asks for one): more in flight would only queue there, each
        holding its directory's archive here in memory."""
        cpus = self._ray.cluster_resources().get("CPU", 1)
        return max(1, int(cpus))

    async def run(self, spec: JobSpec, workdir: Path, *, log_dir: Path, progress: Progress | None = None) -> JobReport:
        archive = await asyncio.to_thread(pack, workdir)
        ref = self._remote.remote(spec.model_dump_json(), archive)
        try:
            reply: dict[str, Any] = await ref
        except asyncio.CancelledError:
            self._ray.cancel(ref, force=True)
            raise
        return await asyncio.to_thread(_bring_back, reply, workdir, log_dir)

    def close(self) -> None:
        if self._ray.is_initialized():
            self._ray.shutdown()


_PROBE_TIMEOUT_S = 10.0


def _reachable(address: str) -> None:
    """Fails fast when nothing listens at ``HOST:PORT`` (or ``ray://HOST:PORT``).

    ``ray.init`` keeps retrying an address nobody answers at for minutes, printing a warning
    every few seconds; one TCP connection tells the user at once. ``auto`` and ``local`` are Ray's
    to resolve.

    Raises:
        RayUnavailable: The connection was refused or timed out.
    """
    target = address.removeprefix("ray://")
    host, colon, port = target.rpartition(":")
    if address in ("auto", "local") or not colon or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_TIMEOUT_S).close()
    except OSError as error:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {error.strerror or error}; is a head "
                             "running there (ray start --head --port PORT)?") from None


SCRATCH_PREFIX = "agentcli-ray-"
"""A job's folder on the worker: ``agentcli-ray-<worker pid>-<random>``."""


def sweep_scratch(folder: Path) -> None:
    """Removes the job folders of workers that are gone.

    Cancelling a job kills its worker (``force``), so its ``TemporaryDirectory`` is never
    cleaned up: a copy of the attempt's directory, its data and logs would stay in the node's
    temporary folder for good. The next job on the node removes them.
    """
    import shutil

    for entry in folder.glob(f"{SCRATCH_PREFIX}*-*"):
        pid = entry.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def remote_job(spec_json: str, archive: bytes) -> dict[str, Any]:
    """What runs on the worker: unpack, run the job, send back what changed and the session."""
    spec = JobSpec.model_validate_json(spec_json)
    sweep_scratch(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-") as scratch:
        root = Path(scratch)
        work, data, logs = root / "work", root / "data", root / "logs"
        unpack(archive, work)
        before = stat_index(work)
        env = {**os.environ, "XDG_DATA_HOME": str(data)}
        report = asyncio.run(run_job(spec, work, log_dir=logs, env=env))
        changed, deleted = changes_since(work, before)
        session = data / "agentcli" / "sessions" / report.session_id if report.session_id else None
        return {
            "report": report.model_dump_json(),
            "changes": pack(work, changed),
            "deleted": deleted,
            "session": pack(session) if session is not None and session.is_dir() else b"",
            "run_log": (logs / "run.jsonl").read_bytes() if (logs / "run.jsonl").is_file() else b"",
            "stderr": (logs / "stderr.txt").read_bytes() if (logs / "stderr.txt").is_file() else b"",
        }


def _bring_back(reply: dict[str, Any], workdir: Path, log_dir: Path) -> JobReport:
    """Writes the worker's results here: the directory's changes, the logs, the session."""
    from agentcli.config import data_home

    report = JobReport.model_validate_json(reply["report"])
    unpack(reply["changes"], workdir)
    remove(workdir, list(reply["deleted"]))
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "run.jsonl").write_bytes(reply["run_log"])
    (log_dir / "stderr.txt").write_bytes(reply["stderr"])
    if report.session_id and reply["session"]:
        _import_session(reply["session"], data_home() / "sessions" / report.session_id, workdir)
    return report


def _import_session(archive: bytes, target: Path, workdir: Path) -> None:
    """Stores the worker's session log here, pointed at the local directory, as a local run's would be."""
    unpack(archive, target)
    meta_path = target / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["workspace"], meta["pid"] = str(workdir), None
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    events = target / "events.jsonl"
    lines = []
    for line in events.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            lines.append(line)  # a torn line stays as it was: the reader ignores it
            continue
        if isinstance(event, dict) and event.get("type") == "session_started":
            event["workspace"] = str(workdir)
            line = json.dumps(event, ensure_ascii=False)
        lines.append(line)
    events.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
