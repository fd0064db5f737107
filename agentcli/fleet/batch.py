"""A batch: many tasks, each in a directory of its own, ``jobs`` at a time, one results line each.

The results file is the batch's memory: a line is appended (and fsynced) as each task ends, so a
batch cut off anywhere resumes by skipping the ids it already holds (but for tasks that could not
run, which run again). Each task's directory is a
copy from a snapshot (a local workspace) or a clone (a git URL); it is removed once its result is
written unless ``keep`` (then ``agentcli resume`` works on the task's session, as on any other).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, Field, ValidationError

from agentcli.fleet.backends import Backend
from agentcli.fleet.models import ChangeSize, CheckOutcome, JobReport, JobSpec
from agentcli.fleet.tasks import BatchTask
from agentcli.fleet.workdir import capture_workspace, collect, discard, from_git, from_snapshot

TaskStatus = Literal["passed", "failed", "error"]


class BatchResult(BaseModel):
    """One results line: how a task ended, what it cost, and the change it made."""

    id: str
    status: TaskStatus
    """passed: completed with every check passing; failed: ran but did not; error: could not run."""
    exit_code: int | None = None
    outcome: str | None = None
    reason: str = ""
    checks: list[CheckOutcome] = Field(default_factory=list)
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    wall_s: float = 0.0
    change: ChangeSize = Field(default_factory=ChangeSize)
    diff: str = ""
    """The final change as a unified diff (SWE-bench's ``model_patch``)."""
    model: str | None = None
    workflow: str | None = None
    session_id: str | None = None
    workdir: str | None = None
    """Kept only with ``--keep``."""
    backend: str = "local"
    error: str = ""
    finished_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


@dataclass(frozen=True)
class Summary:
    results: list[BatchResult]
    skipped: int
    """Tasks the results file already held (a resumed batch)."""

    @property
    def passed(self) -> int:
        return sum(1 for result in self.results if result.status == "passed")


Finished = Callable[[BatchResult], None]


class ResultsFileError(Exception):
    """The results file cannot be read or written; the message names it and why."""


def prepare_results(results_path: Path) -> None:
    """Checks, before any task runs, that the results file can be appended to (making its folder).

    A results path that is a folder, or under one that cannot be made, would otherwise fail
    only when the first task ends, after its work (and its cost) was spent.

    Raises:
        ResultsFileError: The file cannot be created or appended to.
    """
    try:
        results_path.parent.mkdir(parents=True, exist_ok=True)
        existed = results_path.exists()
        with results_path.open("a", encoding="utf-8"):
            pass
        if not existed:
            results_path.unlink()  # only a check: the file appears with the first result
    except OSError as error:
        raise ResultsFileError(f"cannot write the results file {results_path}: {error.strerror or error}") from None


def lock_results(data_dir: Path, results_path: Path) -> IO[str]:
    """Holds the results file for this batch until the returned file is closed (or the process
    ends): two batches on one results file would run the same tasks twice, and one's rewrite
    (:func:`_drop_errors`) would lose the lines the other appends meanwhile.

    Raises:
        ResultsFileError: Another batch holds it; the message names its pid.
    """
    import fcntl

    folder = batch_dir(data_dir, results_path)
    lock = folder.with_name(folder.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    handle = lock.open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise ResultsFileError(f"another `agentcli batch` (pid {holder}) is writing {results_path}; wait for it "
                               "to end, or give this one another --results file") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def settled_results(results_path: Path) -> dict[str, BatchResult]:
    """The results a resumed batch keeps: a task that passed or failed is skipped; one that could
    not run (``error``: a clone that failed, a process that died, a key not set) runs again, as
    the user who fixed the cause and ran the command again expects."""
    return {task_id: result for task_id, result in finished_results(results_path).items()
            if result.status != "error"}


def finished_results(results_path: Path) -> dict[str, BatchResult]:
    """The results a previous run wrote; a torn or foreign line is ignored (that task runs again)."""
    found: dict[str, BatchResult] = {}
    try:
        lines = results_path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return found
    for line in lines:
        try:
            result = BatchResult.model_validate_json(line)
        except ValidationError:
            continue
        found[result.id] = result
    return found


def batch_dir(data_dir: Path, results_path: Path) -> Path:
    """Where a results file's task directories go: one folder per results file."""
    key = hashlib.sha256(str(results_path.resolve()).encode()).hexdigest()[:12]
    return data_dir / "fleet" / "batches" / f"{results_path.stem[:40]}-{key}"


def _safe_name(task_id: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "_", task_id)[:80].lstrip(".") or "task"
    return f"{name}-{hashlib.sha256(task_id.encode()).hexdigest()[:6]}"


async def run_batch(tasks: list[BatchTask], results_path: Path, spec: JobSpec, backend: Backend, data_dir: Path, *,
                    jobs: int, keep: bool = False, finished: Finished | None = None) -> Summary:
    """Runs the tasks the results file lacks, ``jobs`` at a time, appending a line as each ends.

    Cancelling stops the running tasks (their sessions pause); nothing is written for them, so
    the next run takes them up again.
    """
    done = settled_results(results_path)
    todo = [task for task in tasks if task.id not in done]
    gate = asyncio.Semaphore(jobs)
    results: list[BatchResult] = [done[task.id] for task in tasks if task.id in done]
    lock = asyncio.Lock()
    results_path.parent.mkdir(parents=True, exist_ok=True)
    await asyncio.to_thread(_drop_errors, results_path, {task.id for task in todo})
    folder = batch_dir(data_dir, results_path)

    async def one(task: BatchTask) -> None:
        async with gate:
            result = await _run_task(task, spec, backend, data_dir, folder / _safe_name(task.id), keep)
        async with lock:
            with results_path.open("a", encoding="utf-8") as out:
                out.write(result.model_dump_json() + "\n")
                out.flush()
                os.fsync(out.fileno())
            results.append(result)
        if finished is not None:
            finished(result)

    running = [asyncio.create_task(one(task)) for task in todo]
    try:
        await asyncio.gather(*running)
    except asyncio.CancelledError:
        for item in running:
            item.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise
    order = {task.id: index for index, task in enumerate(tasks)}
    results.sort(key=lambda result: order.get(result.id, len(order)))
    return Summary(results=results, skipped=len(tasks) - len(todo))


def _drop_errors(results_path: Path, retried: set[str]) -> None:
    """Takes the ``error`` lines of tasks about to run again out of the results file, so it ends
    with one line per task; every other line (foreign ones too) is kept as it was. Written to a
    temporary file and renamed over: a crash leaves the old file or the new one."""
    try:
        lines = results_path.read_text(encoding="utf-8").splitlines(keepends=True)
    except FileNotFoundError:
        return
    kept = []
    for line in lines:
        try:
            result = BatchResult.model_validate_json(line)
        except ValidationError:
            kept.append(line)
            continue
        if not (result.status == "error" and result.id in retried):
            kept.append(line)
    if len(kept) == len(lines):
        return
    temporary = results_path.with_name(f".{results_path.name}.agentcli-tmp")
    with temporary.open("w", encoding="utf-8") as out:
        out.writelines(kept)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, results_path)


async def _run_task(task: BatchTask, spec: JobSpec, backend: Backend, data_dir: Path, home: Path,
                    keep: bool) -> BatchResult:
    from agentcli.fleet.materialize import MaterializeError
    from agentcli.fleet.preflight import job_problem
    from agentcli.fleet.workdir import WorkdirError
    from agentcli.snapshots import SnapshotError

    job = spec.model_copy(update={
        "prompt": task.prompt, "model": task.model or spec.model, "workflow": task.workflow or spec.workflow,
        "checks": task.checks if task.checks is not None else spec.checks, "test_patch": task.test_patch})
    workdir = home / "work"
    await asyncio.to_thread(discard, workdir, data_dir)  # what an interrupted run left
    base = BatchResult(id=task.id, status="error", model=job.model, workflow=job.workflow, backend=backend.name)
    try:
        await asyncio.to_thread(_prepare, task, workdir, data_dir)
        # A repository's own workflow or configuration is known only now; a session it would
        # refuse is not started (a process, a few seconds, and the same refusal in its stderr).
        local = backend.name == "local"  # on Ray the workers' environment holds the keys
        problem = await asyncio.to_thread(job_problem, task, job, workdir, keys=local) if task.repo else None
        if problem is not None:
            raise _NotStarted(problem)
        report = await backend.run(job, workdir, log_dir=home, progress=None)
        collected = await asyncio.to_thread(collect, workdir, data_dir)
    except asyncio.CancelledError:
        raise
    except _NotStarted as error:
        result = base.model_copy(update={"error": str(error)})
    except (MaterializeError, WorkdirError, SnapshotError) as error:  # their messages say what failed
        result = base.model_copy(update={"error": str(error)})
    except OSError as error:
        result = base.model_copy(update={"error": f"{type(error).__name__}: {error}"})
    except Exception as error:  # noqa: BLE001 - one task's failure (a Ray worker lost) must not end the batch
        result = base.model_copy(update={"error": f"{type(error).__name__}: {error}"})
    else:
        result = _result(base, report, collected.change, collected.patch)
    if keep:
        result.workdir = str(workdir) if workdir.is_dir() else None
    else:
        await asyncio.to_thread(_remove_task, home, data_dir)
    return result


class _NotStarted(Exception):
    """The task's directory is ready but its session would refuse to start; says why."""


def _remove_task(home: Path, data_dir: Path) -> None:
    """Deletes a finished task's folder: its directory, that directory's snapshot store, and the
    process's printed output (its session keeps the log; its line keeps the figures and stderr's tail)."""
    import shutil

    discard(home / "work", data_dir)
    shutil.rmtree(home, ignore_errors=True)
    try:
        home.parent.rmdir()  # the batch's folder, once its last task is gone
    except OSError:
        pass  # other tasks still there (or running)


def _prepare(task: BatchTask, workdir: Path, data_dir: Path) -> None:
    if task.workspace is not None:
        workspace = Path(task.workspace)
        tree, _ = capture_workspace(workspace, data_dir, "fleet-batch", "batch task start")
        from_snapshot(workspace, tree, workdir, data_dir)
    else:
        assert task.repo is not None  # read_tasks requires one of the two
        from_git(task.repo, task.ref, workdir, data_dir)


def _result(base: BatchResult, report: JobReport, change: ChangeSize, patch: str) -> BatchResult:
    status: TaskStatus = "passed" if report.passed else "failed" if report.outcome is not None else "error"
    return base.model_copy(update={
        "status": status, "exit_code": report.exit_code, "outcome": report.outcome, "reason": report.reason,
        "checks": report.checks, "steps": report.steps, "input_tokens": report.input_tokens,
        "output_tokens": report.output_tokens, "cost": report.cost, "wall_s": round(report.wall_s, 3),
        "change": change, "diff": patch, "session_id": report.session_id, "error": report.error,
    })
