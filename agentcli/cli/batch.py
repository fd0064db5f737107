"""``agentcli batch TASKS.jsonl``: many tasks, K at a time, a results JSONL and a summary table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common import EXIT_ERROR, fail, load_settings, workspace
from agentcli.cli.fleet_common import EXIT_INTERRUPTED, RayOpt, backend_for, run_cancellable
from agentcli.cli.options import CommonOptions, OutputFormat, shared_options

if TYPE_CHECKING:
    from agentcli.fleet.batch import BatchResult, Summary
    from agentcli.fleet.tasks import BatchTask


@shared_options("batch")
def batch(
    tasks_file: Annotated[Path, typer.Argument(metavar="TASKS.jsonl",
                                               help="One task a line (agentcli's or SWE-bench's format).")],
    results: Annotated[Path | None, typer.Option("--results",
                                                 help="Results JSONL (default: TASKS.results.jsonl).")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Tasks at once (default: see README).")
                    ] = None,
    ray: RayOpt = None,
    repos: Annotated[Path | None, typer.Option("--repos",
                                               help="Folder of local clones for SWE-bench's repositories.")] = None,
    test_command: Annotated[str | None, typer.Option("--test-command", help="What runs SWE-bench test ids "
                                                     "(default: python -m pytest -q -p no:cacheprovider).")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep each task's directory (to resume its session).")] = False,
    *,
    options: CommonOptions,
) -> None:
    """Run every task of TASKS.jsonl headless and write one results line per task.

    Resumable: a second run skips the tasks the results file holds as passed or failed (those
    that could not run run again). Exit codes: 0 every
    task passed, 1 some did not, 2 usage error (a bad tasks file), 130 interrupted.
    """
    from agentcli.config import data_home
    from agentcli.fleet.batch import (
        ResultsFileError,
        batch_dir,
        lock_results,
        prepare_results,
        run_batch,
        settled_results,
    )
    from agentcli.fleet.models import JobSpec
    from agentcli.fleet.race import default_jobs
    from agentcli.fleet.tasks import DEFAULT_TEST_COMMAND, TaskFileError, read_tasks

    folder = workspace(options.cwd)
    settings = load_settings(folder, options.settings_overrides())
    results_path = (results or tasks_file.with_name(tasks_file.stem + ".results.jsonl")).expanduser().resolve()
    if results_path == tasks_file.expanduser().resolve():
        raise fail(f"--results {results} is the tasks file itself; results are appended to it: name another file")
    try:
        tasks = read_tasks(tasks_file.expanduser(), repos=repos, test_command=test_command or DEFAULT_TEST_COMMAND)
    except TaskFileError as error:
        raise fail(str(error)) from None
    try:
        prepare_results(results_path)
    except ResultsFileError as error:
        raise fail(str(error)) from None
    # Keys are checked only for sessions started here: a Ray worker reads its own environment.
    _check_tasks(tasks, tasks_file, results_path, folder, options, keys=not (ray or settings.fleet.ray_address))
    try:  # after the checks: a refused batch leaves nothing in the data dir
        held = lock_results(data_home(), results_path)  # noqa: F841 - held until this process ends
    except ResultsFileError as error:
        raise fail(str(error)) from None
    backend = backend_for(ray, settings)
    capacity = backend.capacity()
    done = settled_results(results_path)
    todo = [task for task in tasks if task.id not in done] or tasks  # the default for the tasks that run
    count = jobs or settings.fleet.jobs or (min(len(todo), capacity) if capacity is not None else default_jobs(
        len(todo), [task.model or options.model or settings.model for task in todo], settings.fleet.provider_jobs))
    mode = "all" if options.yes else (options.permission_mode.value if options.permission_mode else "all")
    spec = JobSpec(prompt="", model=options.model, api_base=options.api_base, workflow=options.workflow,
                   max_steps=options.max_steps, permission_mode=mode,  # type: ignore[arg-type]
                   sandbox=options.sandbox, check_timeout_s=settings.checks.timeout_s)
    text = options.output is OutputFormat.text
    if text:
        typer.echo(f"batch of {len(tasks)} task{'s' if len(tasks) != 1 else ''}{_resumed_words(tasks, results_path)}, "
                   f"{count} at a time, on {backend.name}; results in {results_path}")
    try:
        summary = run_cancellable(run_batch(tasks, results_path, spec, backend, data_home(), jobs=count, keep=keep,
                                            finished=_print_result if text else _print_json))
    finally:
        backend.close()
    if summary is None:
        typer.echo("agentcli: batch interrupted; run the same command again to finish it", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    if text:
        _print_summary(summary)
        if keep:
            typer.echo(f"each task's directory is kept under {batch_dir(data_home(), results_path)}; "
                       "`agentcli resume SESSION` (its session_id in the results) takes one further")
    raise typer.Exit(0 if summary.passed == len(summary.results) else EXIT_ERROR)


def _check_tasks(tasks: list[BatchTask], tasks_file: Path, results_path: Path, folder: Path,
                 options: CommonOptions, *, keys: bool) -> None:
    """A model or workflow a task could not start with (then, with ``keys``, a missing key) is a
    usage error before any task runs, naming the task and its line (agentcli/fleet/preflight.py);
    tasks a resumed batch skips are left alone."""
    from agentcli.fleet.batch import settled_results
    from agentcli.fleet.preflight import task_problem

    done = settled_results(results_path)
    overrides = options.settings_overrides()
    for with_keys in (False, True) if keys else (False,):  # a typo is said before a key the environment lacks
        checked: dict[tuple[str, str | None, str | None], str | None] = {}
        for task in tasks:
            if task.id in done:
                continue
            problem = task_problem(task, folder, overrides, checked, keys=with_keys)
            if problem is not None:
                raise fail(f"{tasks_file}:{task.line}: task {task.id}: {problem}\nno task was started")


def _resumed_words(tasks: list[BatchTask], results_path: Path) -> str:
    """What a resumed batch skips and what it runs again, e.g. " (3 done before; 1 that could not
    run runs again)"; nothing for a fresh one."""
    from agentcli.fleet.batch import finished_results

    previous = finished_results(results_path)
    ids = {task.id for task in tasks}
    done = sum(1 for task_id, result in previous.items() if task_id in ids and result.status != "error")
    again = sum(1 for task_id, result in previous.items() if task_id in ids and result.status == "error")
    runs = "runs" if again == 1 else "run"
    parts = [f"{done} done before" if done else "", f"{again} that could not run {runs} again" if again else ""]
    words = "; ".join(part for part in parts if part)
    return f" ({words})" if words else ""


def _print_result(result: BatchResult) -> None:
    from agentcli.describe import NO_PRICE
    from agentcli.fleet.view import cost_words

    checks = sum(1 for check in result.checks if check.passed)
    if result.status == "error":
        detail = result.error.strip().splitlines()[-1] if result.error.strip() else f"exit {result.exit_code}"
        detail = detail.removeprefix(f"task {result.id}: ")  # the line names it already
    else:
        why = f" ({' '.join(result.reason.split())[:60]})" if result.outcome != "completed" and result.reason else ""
        detail = (f"{result.outcome}{why}, checks {checks}/{len(result.checks)}, "
                  f"+{result.change.added} -{result.change.removed}")
    typer.echo(f"  {result.status:<6} {result.id}: {detail}, {result.wall_s:.1f}s, "
               f"{cost_words(result.cost, '—' if result.status == 'error' else NO_PRICE)}")


def _print_json(result: BatchResult) -> None:
    typer.echo(result.model_dump_json())


def _print_summary(summary: Summary) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from agentcli.describe import NO_PRICE
    from agentcli.fleet.view import cost_words

    done = summary.results
    costs = [r.cost for r in done if r.cost is not None or r.status != "error"]  # an error may have called nothing
    known = [c for c in costs if c is not None]
    # The race table's frame (no outer edge, a rule under the header): boxed with padding, eight
    # columns took 81 cells and rich folded "pass rate" and "time (sum)" at 80.
    table = Table(title="batch summary", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                  padding=(0, 1), collapse_padding=True, show_edge=False)
    for column in ("tasks", "passed", "failed", "errors", "pass rate", "cost", "time (sum)", "skipped"):
        table.add_column(column, no_wrap=True)
    total_cost = cost_words(sum(known)) + (f" + {NO_PRICE}" if len(known) < len(costs) else "") if known \
        else NO_PRICE if costs else "—"
    table.add_row(str(len(done)), str(summary.passed), str(sum(1 for r in done if r.status == "failed")),
                  str(sum(1 for r in done if r.status == "error")),
                  f"{summary.passed / len(done):.0%}" if done else "—", total_cost,
                  f"{sum(r.wall_s for r in done):.1f}s", str(summary.skipped))
    Console().print(table)
