"""A race: N attempts at one task from one snapshot of the workspace, run side by side, then ranked.

The workspace is captured once (uncommitted work included); each attempt gets the tree written
into a directory of its own and a full headless session there. At most ``jobs`` attempts run at
a time. ``race.json`` is rewritten at every change, so ``race show`` (or the TUI) in another
terminal follows the race live, and a race cut off by a crash still shows what it had.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentcli.fleet import records
from agentcli.fleet.backends import Backend
from agentcli.fleet.models import Attempt, JobSpec, Race
from agentcli.fleet.runner import CHECKING
from agentcli.fleet.workdir import capture_workspace, collect, from_snapshot

Changed = Callable[[Race, Attempt], None]
"""Told each time an attempt's state or figures change (after ``race.json`` is written)."""


@dataclass(frozen=True)
class AttemptPlan:
    model: str | None = None
    workflow: str | None = None


def plan_attempts(n: int | None, models: Sequence[str], workflows: Sequence[str]) -> list[AttemptPlan]:
    """``n`` attempts (default: one per model or workflow given), cycling through the models and workflows.

    Raises:
        ValueError: ``n`` is below 1, or fewer than the models or workflows named (some would
            never run, and the user named each to see it run).
    """
    count = n if n is not None else max(len(models), len(workflows), 1)
    if count < 1:
        raise ValueError(f"-n must be at least 1 (got {count})")
    for flag, named in (("--models", models), ("--workflow", workflows)):
        if count < len(named):
            raise ValueError(f"-n {count} is fewer than the {len(named)} {flag} given ({', '.join(named)}): "
                             f"{', '.join(named[count:])} would not run; leave out -n for one attempt each, "
                             f"or give -n {len(named)} or more")
    return [AttemptPlan(model=models[i % len(models)] if models else None,
                        workflow=workflows[i % len(workflows)] if workflows else None) for i in range(count)]


def default_jobs(count: int, models: Sequence[str | None], provider_jobs: dict[str, int],
                 cpus: int | None = None) -> int:
    """How many attempts run at once when the user does not say.

    Each attempt is a process that mostly waits on its model, so twice the cores; and never more
    than a provider's configured share (``[fleet] provider_jobs``, e.g. ``ollama = 1``: a local
    model answers one request at a time, and hosted ones throttle bursts).
    """
    limit = 2 * (cpus or os.cpu_count() or 1)
    for model in models:
        provider = (model or "").split("/", 1)[0]
        if provider in provider_jobs:
            limit = min(limit, provider_jobs[provider])
    return max(1, min(count, limit))


def start_race(workspace: Path, data_dir: Path, task: str, plans: list[AttemptPlan], *, backend: str,
               jobs: int) -> Race:
    """Captures the workspace and records a race whose attempts have not started yet."""
    race_id = records.new_race_id()
    tree, snapshot = capture_workspace(workspace, data_dir, race_id, "race start")
    attempts = [Attempt(id=str(i + 1), model=plan.model, workflow=plan.workflow,
                        workdir=str(records.attempt_dir(data_dir, race_id, str(i + 1)) / "work"))
                for i, plan in enumerate(plans)]
    pid, host = records.new_owner()
    race = Race(id=race_id, workspace=str(workspace), task=task, base_tree=tree, base_snapshot=snapshot,
                backend=backend, jobs=jobs, attempts=attempts, pid=pid, host=host)
    records.save(data_dir, race)
    return race


async def run_race(race: Race, spec: JobSpec, backend: Backend, data_dir: Path, *,
                   changed: Changed | None = None) -> Race:
    """Runs every attempt of ``race``, ``race.jobs`` at a time; cancelling stops them all.

    Args:
        race: A race from :func:`start_race`.
        spec: The job every attempt runs; each attempt's model and workflow replace its own.
        backend: Where the sessions run.
        data_dir: agentcli's data directory.
        changed: Told about every change, e.g. to print it.

    Returns:
        The race, every attempt ended (done, failed or cancelled).
    """
    gate = asyncio.Semaphore(race.jobs)

    def update(attempt: Attempt) -> None:
        records.save_running(data_dir, race)
        if changed is not None:
            changed(race, attempt)

    async def one(attempt: Attempt) -> None:
        async with gate:
            await _run_attempt(race, attempt, spec, backend, data_dir, update)

    tasks = [asyncio.create_task(one(attempt)) for attempt in race.attempts]
    try:
        await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for attempt in race.attempts:
            if attempt.state not in ("done", "failed", "cancelled"):
                attempt.state, attempt.note = "cancelled", "the race was cancelled before it started"
        raise
    finally:
        race.ended = datetime.now(UTC)
        records.save_running(data_dir, race)
    return race


async def _run_attempt(race: Race, attempt: Attempt, spec: JobSpec, backend: Backend, data_dir: Path,
                       update: Callable[[Attempt], None]) -> None:
    from agentcli.fleet.materialize import MaterializeError
    from agentcli.fleet.workdir import WorkdirError
    from agentcli.snapshots import SnapshotError

    workdir = Path(attempt.workdir)
    attempt.state = "starting"
    update(attempt)
    try:
        prepared = await asyncio.to_thread(from_snapshot, Path(race.workspace), race.base_tree, workdir, data_dir)
        attempt.base_tree = prepared.base_tree
        attempt.materialize_s, attempt.base_capture_s = round(prepared.write_s, 3), round(prepared.capture_s, 3)
        attempt.state = "running"
        update(attempt)
        job = spec.model_copy(update={"model": attempt.model or spec.model,
                                      "workflow": attempt.workflow or spec.workflow})
        report = await backend.run(job, workdir, log_dir=workdir.parent,
                                   progress=lambda event: _follow(attempt, event, update))
        attempt.report = report
        attempt.session_id = report.session_id or attempt.session_id
        collected = await asyncio.to_thread(collect, workdir, data_dir)
        attempt.final_tree, attempt.change = collected.final_tree, collected.change
        attempt.collect_s = round(collected.seconds, 3)
        attempt.state = "done"
        if report.outcome is None:
            attempt.state, attempt.note = "failed", report.error or f"agentcli exited {report.exit_code}"
    except asyncio.CancelledError:
        attempt.state, attempt.note = "cancelled", "cancelled while it ran"
        update(attempt)
        raise
    except (MaterializeError, WorkdirError, SnapshotError, OSError) as error:
        attempt.state, attempt.note = "failed", f"{type(error).__name__}: {error}"
    except Exception as error:  # noqa: BLE001 - one attempt's failure (e.g. a Ray worker lost) must not end the race
        attempt.state, attempt.note = "failed", f"{type(error).__name__}: {error}"
    update(attempt)


def _follow(attempt: Attempt, event: dict[str, object], update: Callable[[Attempt], None]) -> None:
    """Folds one printed event into the attempt's live figures."""
    kind = event.get("type")
    if kind == "session_started" and isinstance(event.get("session_id"), str):
        attempt.session_id = str(event["session_id"])
    elif kind == "state_changed" and isinstance(event.get("target"), str):
        attempt.control = str(event["target"])
    elif kind == "usage":
        attempt.steps += 1
        attempt.input_tokens = _int(event.get("total_input_tokens"), attempt.input_tokens)
        attempt.output_tokens = _int(event.get("total_output_tokens"), attempt.output_tokens)
        cost = event.get("total_cost")
        attempt.cost = float(cost) if isinstance(cost, (int, float)) else None
    elif kind == CHECKING:
        attempt.state = "checking"
    else:
        return
    update(attempt)


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) else default
