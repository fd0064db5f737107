"""``agentcli race``: N attempts at one task, side by side; ``race show``, ``diff``, ``apply``, ``undo``, ``list``.

``agentcli race -n 3 "TASK"`` is ``agentcli race start -n 3 "TASK"``: the group sends anything that
is not one of its commands to ``start`` (see :class:`_RaceGroup`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from agentcli.cli.common import EXIT_ERROR, fail, interactive, load_settings, workspace
from agentcli.cli.fleet_common import EXIT_INTERRUPTED, RayOpt, backend_for, run_cancellable, split_list
from agentcli.cli.options import CommonOptions, OutputFormat, PlainUsage, shared_options
from agentcli.cli.race_print import no_result, parenthesized, print_change, print_json_change, print_table

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.fleet.models import Attempt, Race
    from agentcli.fleet.race import AttemptPlan


_ALIASES = {"ls": "list", "remove": "rm"}
"""Names people type from other tools (``git``, ``docker``)."""


class _RaceGroup(TyperGroup):
    """A group whose default command is ``start``: ``race -n 3 "TASK"`` needs no ``start``.

    A first word that is no command but could be one (``race stop``, ``race shwo``) is refused
    rather than raced: taken as the task, it would start N paid sessions told to "stop". A task
    of one word says ``start`` (``race start refactor``); a real task has spaces in it.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        first = args[0] if args else ""
        if first in _ALIASES:
            args = [_ALIASES[first], *args[1:]]
        elif args and first not in self.commands and first not in ("--help", "-h"):
            if _word(first):
                from difflib import get_close_matches

                close = get_close_matches(first, [*self.commands, *_ALIASES], n=1, cutoff=0.6)
                mean = f" (did you mean '{_ALIASES.get(close[0], close[0])}'?)" if close else ""
                raise fail(f"'{first}' is not a race command{mean}; the commands are {', '.join(self.commands)}. "
                           f"To race a task of one word, write: agentcli race start {first}")
            args = ["start", *args]
        return super().parse_args(ctx, args)


def _word(text: str) -> bool:
    """One word and nothing else: a command name mistyped, never a task anyone writes out."""
    return (not text.startswith("-") and text.isascii() and text.replace("-", "").replace("_", "").isalpha()
            and len(text) <= 20)


app = typer.Typer(cls=_RaceGroup, no_args_is_help=True,
                  help="Several attempts at one task, each in its own copy of the workspace; keep the best.")

@app.callback()
@shared_options("race")
def race_group() -> None:
    """Several attempts at one task, each in its own copy of the workspace; keep the best."""


RaceOpt = Annotated[str | None, typer.Option("--race", "-r",
                                             help="Race id or prefix (default: this workspace's newest).")]


@app.command("start", cls=PlainUsage)
@shared_options("race start")
def start(
    task: Annotated[str, typer.Argument(help="The task every attempt gets.")],
    n: Annotated[int | None, typer.Option("-n", help="Attempts (default: one per model in --models, else 3).")] = None,
    models: Annotated[str | None, typer.Option("--models", help="Models to cycle through, comma-separated.")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Attempts at once (default: see README).")
                    ] = None,
    check: Annotated[list[str] | None, typer.Option("--check", help="A check command (repeatable); default: "
                                                    "the config's checks, else those detected.")] = None,
    ray: RayOpt = None,
    *,
    options: CommonOptions,
) -> None:
    """Run TASK N times in parallel, each a full headless session in its own copy of the workspace.

    The copies start from a snapshot of the workspace as it is now, uncommitted work included;
    your files and .git are not touched. Each attempt is then scored by the checks and the size
    of its change. Exit codes: 0 an attempt passed, 1 none did, 2 usage error, 130 interrupted.
    """
    from agentcli.config import data_home
    from agentcli.fleet.models import JobSpec
    from agentcli.fleet.race import default_jobs, plan_attempts, run_race, start_race
    from agentcli.session.factory import unsafe_workspace

    folder = workspace(options.cwd)
    settings = load_settings(folder, options.settings_overrides())
    model_list = split_list(models) or ([options.model] if options.model else [])
    try:
        plans = plan_attempts(n if n is not None else (None if model_list else 3), model_list,
                              split_list(options.workflow))
    except ValueError as error:
        raise fail(str(error)) from None
    # Keys are checked only for sessions started here: a Ray worker reads its own environment.
    _check_setups(folder, settings, plans, keys=not (ray or settings.fleet.ray_address))
    broad = unsafe_workspace(folder) if settings.snapshots.enabled else None
    if broad and not options.yes:
        raise fail(f"{broad}\nRun in a project folder, or pass --yes to snapshot it anyway.")
    backend = backend_for(ray, settings)
    count = jobs or settings.fleet.jobs or default_jobs(
        len(plans), [plan.model or settings.model for plan in plans], settings.fleet.provider_jobs)
    capacity = backend.capacity()
    if capacity is not None and jobs is None and settings.fleet.jobs is None:
        count = min(len(plans), capacity)  # as many as the cluster has CPUs for
    mode = options.permission_mode.value if options.permission_mode else "all"
    spec = JobSpec(prompt=task, model=options.model, api_base=options.api_base, max_steps=options.max_steps,
                   permission_mode="all" if options.yes else mode,  # type: ignore[arg-type]
                   sandbox=options.sandbox, checks=check or None, check_timeout_s=settings.checks.timeout_s)
    data_dir = data_home()
    race = start_race(folder, data_dir, task, plans, backend=backend.name, jobs=count)
    text = options.output is OutputFormat.text
    if text:
        typer.echo(f"race {race.id}: {len(plans)} attempts, {count} at a time, on {backend.name}; "
                   f"from snapshot {race.base_snapshot[:12]} of {folder}")
    printer = print_change if text else print_json_change
    try:
        ended = run_cancellable(run_race(race, spec, backend, data_dir, changed=printer))
    finally:
        backend.close()
    final = _reload(data_dir, race.id)
    if text:
        print_table(final)
    if ended is None:
        typer.echo("agentcli: race interrupted; its attempts' sessions were paused (agentcli race show)", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    raise typer.Exit(0 if any(attempt.passed for attempt in final.attempts) else EXIT_ERROR)


def _check_setups(folder: Path, settings: Settings, plans: list[AttemptPlan], *, keys: bool) -> None:
    """A model or workflow no attempt could start with (then, with ``keys``, a missing key) is a
    usage error now, naming the first attempt it concerns, not N failed attempts after the race
    began (agentcli/fleet/preflight.py). A typo is said before a key the environment lacks."""
    from agentcli.fleet.models import Attempt
    from agentcli.fleet.preflight import setup_problem
    from agentcli.fleet.view import setup_words

    for with_keys in (False, True) if keys else (False,):
        seen: set[tuple[str | None, str | None]] = set()
        for number, plan in enumerate(plans, start=1):
            if (plan.model, plan.workflow) in seen:
                continue
            seen.add((plan.model, plan.workflow))
            problem = setup_problem(settings, folder, plan.model, plan.workflow, keys=with_keys)
            if problem is not None:
                setup = setup_words(Attempt(id=str(number), model=plan.model, workflow=plan.workflow, workdir=""))
                raise fail(f"attempt {number} {parenthesized(setup)}: {problem}\nno attempt was started")


def _reload(data_dir: Path, race_id: str) -> Race:
    from agentcli.fleet import records

    return records.load(data_dir, race_id)


def _race(ref: str | None, cwd: Path | None) -> tuple[Path, Race]:
    from agentcli.config import data_home
    from agentcli.fleet.records import RaceNotFound, find

    data_dir = data_home()
    try:
        return data_dir, find(data_dir, ref, workspace(cwd))
    except RaceNotFound as error:
        raise fail(str(error)) from None


def _attempt(race: Race, attempt_id: str) -> Attempt:
    found = race.attempt(attempt_id)
    if found is None:
        ids = ", ".join(a.id for a in race.attempts)
        raise fail(f"race {race.id} has no attempt {attempt_id!r} (it has {ids})")
    return found


@app.command("show", cls=PlainUsage)
@shared_options("race show")
def show(race_ref: RaceOpt = None,
         as_json: Annotated[bool, typer.Option("--json", help="The race record as JSON.")] = False,
         plain: Annotated[bool, typer.Option("--plain", help="Print the table, even in a terminal.")] = False,
         *, options: CommonOptions) -> None:
    """Compare a race's attempts: state, steps, tokens, cost, checks and size of change, best first.

    In a terminal it opens the race view, live while the race runs: d shows an attempt's diff,
    a applies it (after asking). Piped, or with --plain, it prints the table.
    """
    data_dir, race = _race(race_ref, options.cwd)
    if as_json:
        typer.echo(race.model_dump_json(indent=2))
        return
    if interactive() and not plain:
        from agentcli.tui.race_screen import RaceApp

        theme = load_settings(Path(race.workspace)).theme if Path(race.workspace).is_dir() else None
        raise typer.Exit(RaceApp(data_dir, race.id, theme=theme).run() or 0)
    print_table(race)
    sessions = [f"{attempt.id} {attempt.session_id}" for attempt in race.attempts if attempt.session_id]
    if sessions:
        typer.echo(f"sessions: {', '.join(sessions)} (agentcli resume ID \"…\" takes one further)")
    pending = next((item for item in reversed(race.applied) if item.undone is None), None)
    for applied in race.applied:
        after = (f"; undone at {applied.undone:%Y-%m-%d %H:%M}" if applied.undone is not None
                 else "; undo: agentcli race undo" if applied is pending else "")
        typer.echo(f"applied attempt {applied.attempt} at {applied.at:%Y-%m-%d %H:%M}{after}")


@app.command("list", cls=PlainUsage)
@shared_options("race list")
def list_races(all_workspaces: Annotated[bool, typer.Option("--all", help="Every workspace.")] = False,
               *, options: CommonOptions) -> None:
    """The races of this workspace (or all), newest first."""
    from agentcli.config import data_home
    from agentcli.fleet.records import all_races

    races = all_races(data_home(), None if all_workspaces else workspace(options.cwd))
    if not races:
        typer.echo("No races yet.")
        return
    import shutil

    # The task gets what the terminal has left (an 80-column line wrapped it), cut with an ellipsis.
    room = max(20, shutil.get_terminal_size().columns - 51)
    for race in races:
        passed = sum(1 for a in race.attempts if a.passed)
        state = "running" if race.ended is None else f"{passed}/{len(race.attempts)} passed"
        applied = next((item.attempt for item in reversed(race.applied) if item.undone is None), None)
        mark = f"applied {applied}" if applied else ""  # what `race undo` would take back
        task = " ".join(race.task.split())
        task = task if len(task) <= room else task[:room - 1] + "…"
        typer.echo(f"{race.id}  {state:<11} {mark:<10} {task}" + (f"  ({race.workspace})" if all_workspaces else ""))


@app.command("diff", cls=PlainUsage)
@shared_options("race diff")
def diff(attempt_id: Annotated[str, typer.Argument(metavar="ATTEMPT", help="Attempt number.")],
         race_ref: RaceOpt = None, *, options: CommonOptions) -> None:
    """Print an attempt's change as a unified diff."""
    from agentcli.fleet.workdir import WorkdirError, result_patch

    data_dir, race = _race(race_ref, options.cwd)
    attempt = _attempt(race, attempt_id)
    if not attempt.has_change:
        raise fail(no_result(attempt, "a diff"))
    try:
        patch = result_patch(Path(attempt.workdir), data_dir)
    except WorkdirError as error:
        raise fail(str(error), EXIT_ERROR) from None
    typer.echo(patch if patch else f"attempt {attempt.id} changed nothing", nl=not patch)


@app.command("apply", cls=PlainUsage)
@shared_options("race apply")
def apply(attempt_id: Annotated[str, typer.Argument(metavar="ATTEMPT", help="Attempt number.")],
          race_ref: RaceOpt = None,
          force: Annotated[bool, typer.Option("--force", help="Overwrite paths you changed since the race began.")
                           ] = False,
          *, options: CommonOptions) -> None:
    """Write an attempt's changes into the workspace (undo with `agentcli race undo`).

    Only the paths the attempt changed are written, after a snapshot of the workspace. Paths you
    changed since the race began are reported and kept, and nothing is written, unless --force.
    """
    from agentcli.fleet.apply import ApplyConflict, ApplyError, apply_attempt

    data_dir, race = _race(race_ref, options.cwd)
    attempt = _attempt(race, attempt_id)  # an unknown attempt is a usage error (2), not a failed apply
    if not attempt.has_change:  # so is one still running, as for `race diff`
        raise fail(no_result(attempt, "a result to apply"))
    try:
        result = apply_attempt(race, attempt_id, data_dir, force=force)
    except ApplyConflict as conflict:
        # Each path once, on a line of its own (the exception's one-line message lists them too).
        count = len(conflict.conflicts)
        typer.echo(f"agentcli: {count} path{'s' if count != 1 else ''} changed both by the attempt and in the "
                   "workspace since the race began; nothing was written", err=True)
        for item in conflict.conflicts:
            typer.echo(f"  conflict  {item.path}: {item.reason}", err=True)
        typer.echo("keep the workspace's version, or pass --force to take the attempt's", err=True)
        raise typer.Exit(EXIT_ERROR) from None
    except ApplyError as error:
        raise fail(str(error), EXIT_ERROR) from None
    for path in result.written:
        typer.echo(f"  write   {path}")
    for path in result.deleted:
        typer.echo(f"  delete  {path}")
    for item in result.overwritten:
        typer.echo(f"  forced  {item.path}: {item.reason}")
    if not result.paths and attempt.change.files == 0:
        typer.echo(f"nothing to write: attempt {attempt_id} changed nothing")
    elif not result.paths:
        typer.echo("nothing to write: the workspace already has the attempt's changes")
    else:
        typer.echo(f"applied attempt {attempt_id} of race {race.id}; undo with: agentcli race undo")


@app.command("undo", cls=PlainUsage)
@shared_options("race undo")
def undo(race_ref: RaceOpt = None,
         # Not the shared --yes (approve every tool call): this one confirms the undo.
         confirm: Annotated[bool, typer.Option("--yes", "-y", help="Restore without asking.")] = False,
         *, options: CommonOptions) -> None:
    """Put the workspace back as it was before the race's last apply (a snapshot restore)."""
    import sys
    from datetime import UTC, datetime

    from agentcli.fleet import records
    from agentcli.fleet.apply import ApplyError, undo_apply

    data_dir, race = _race(race_ref, options.cwd)
    if not race.applied:
        raise fail(f"nothing of race {race.id} was applied")
    # Each undo takes back the newest apply not yet undone, so a second undo goes on to the one
    # before rather than restoring the same snapshot again.
    last = next((item for item in reversed(race.applied) if item.undone is None), None)
    if last is None:
        raise fail(f"every apply of race {race.id} was undone already")
    if not confirm:
        if not sys.stdin.isatty():
            raise fail("undoing changes files; confirm with --yes")
        if not typer.confirm(f"Restore the workspace as it was before attempt {last.attempt} was applied?"):
            raise typer.Exit(EXIT_ERROR)
    try:
        changed, before = undo_apply(Path(race.workspace), data_dir, last.undo_snapshot, race.id)
    except ApplyError as error:
        raise fail(str(error), EXIT_ERROR) from None
    last.undone = datetime.now(UTC)
    records.save(data_dir, race)
    typer.echo(f"restored the workspace as before attempt {last.attempt} was applied "
               f"({changed} path{'s' if changed != 1 else ''}); "
               f"the state before this undo is snapshot {before}")


@app.command("rm", cls=PlainUsage)
@shared_options("race rm")
def remove(race_ref: Annotated[str, typer.Argument(metavar="RACE", help="Race id or prefix.")],
           force: Annotated[bool, typer.Option("--force", help="Remove a race still marked running whose process "
                                               "is gone (another machine's, or one an older agentcli recorded).")
                            ] = False,
           *, options: CommonOptions) -> None:
    """Delete a race's attempt directories, their snapshot stores and its record.

    Their sessions stay (`agentcli sessions --all`; `agentcli sessions rm` removes them). A change
    you applied stays too, but `race undo` goes with the race: undo first if you may. A race still running is
    refused; --force removes one marked running that no process on this machine runs.
    """
    from agentcli.fleet.records import RaceNotFound, live_sessions, owner_runs, remove_race

    data_dir, race = _race(race_ref, options.cwd)
    if race.ended is None:
        if not force:
            raise fail(f"race {race.id} has not ended; stop it first (Ctrl-C where it runs), or, if no "
                       "process runs it any more, remove it with --force")
        if owner_runs(race):
            raise fail(f"race {race.id} is running here (pid {race.pid}); stop it first (Ctrl-C where it runs)")
        live = live_sessions(race, data_dir)
        if live:
            which = f"attempt {live[0]} still runs its session" if len(live) == 1 else \
                f"attempts {', '.join(live)} still run their sessions"
            raise fail(f"race {race.id} is running here: {which}; stop it first (Ctrl-C where it runs)")
    try:
        freed = remove_race(data_dir, race)
    except RaceNotFound as error:
        raise fail(str(error)) from None
    typer.echo(f"removed race {race.id} ({len(race.attempts)} attempts, {freed / 1e6:.1f} MB)")
    kept = [item for item in race.applied if item.undone is None]
    if kept:
        # Its undo points are in the workspace's store, but only the race's record led to them.
        paths = ", ".join(kept[-1].paths[:3]) + (", …" if len(kept[-1].paths) > 3 else "")
        typer.echo(f"attempt {kept[-1].attempt}'s apply stays in the workspace ({paths}); with the race gone, "
                   "`agentcli race undo` can no longer take it back")
