"""Refusing a race or a batch before anything starts: the model or workflow a session would refuse.

Each attempt and task runs ``agentcli run``, which refuses an unknown provider or workflow at
once; left to that, a race of five spends five materialized copies and five processes (about
3 s each) to report the same typo five times, and a batch clones every repository first. So the
command makes the same check (:func:`~agentcli.session.factory.check_models`) for every distinct
model and workflow it is about to start, and refuses with exit 2 naming the first at fault.

A task on a remote repository can name a workflow only that repository defines: it is checked
after the clone, in the task's directory (:func:`job_problem`), and only that task fails.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from agentcli.config import ConfigError, Settings, load_settings
from agentcli.fleet.models import JobSpec
from agentcli.fleet.tasks import BatchTask

CheckKey = tuple[str, str | None, str | None]


def setup_problem(settings: Settings, workspace: Path | None, model: str | None, workflow: str | None, *,
                  remote: bool = False, keys: bool = False) -> str | None:
    """Why a session with ``model`` and ``workflow`` (None: the configured one) would not start in
    ``workspace``, in one line, or None.

    Checks what ``agentcli run`` checks: every role's model, the workflow as it applies in
    ``workspace`` and the models its phases name. With no ``workspace`` (a repository not cloned
    yet) the workflow must be a built-in or one of the user's, unless ``remote``: then a name
    neither knows is left for the clone to define, and only the roles' models are checked. With
    ``keys`` (sessions run here, in this environment) a missing provider key is one too
    (:func:`key_problem`).
    """
    from agentcli.session.factory import SessionSetupError, check_models, workflow_catalog

    update = {key: value for key, value in (("model", model), ("workflow", workflow)) if value}
    chosen = settings.model_copy(update=update)
    try:
        if workspace is not None:
            check_models(chosen, workspace)
        else:
            with tempfile.TemporaryDirectory(prefix="agentcli-check-") as empty:  # no project workflows
                known = workflow_catalog(Path(empty)).get(chosen.workflow) is not None
                check_models(chosen, Path(empty) if known or not remote else None)
    except SessionSetupError as error:
        return str(error)
    return key_problem(chosen) if keys else None


KEYED_PROVIDERS = ("anthropic", "openai", "gemini", "openrouter")
"""Providers that always need a key of the user's unless a server of their own is named: a race of
five on a missing key would start five sessions that each stop at once on it (and run the
checks on their unchanged copies)."""


def missing_key(settings: Settings, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The key variables one of which the model a session would call first needs and none of
    which is set (empty when none is missing, as far as can be told here).

    Lenient by design, never stricter than the session (which asks litellm, too slow to import
    here): only the providers above, and nothing when any server is named (``api_base``, or
    ``OPENAI_API_BASE``/``OPENAI_BASE_URL``), where keys may not be needed.
    """
    from agentcli.llm.errors import key_variables  # the one table of key variables (llm/errors.py)
    from agentcli.session.factory import REPLAY_PREFIX

    environ = os.environ if environ is None else environ
    model = settings.model
    provider, slash, _ = model.partition("/")
    if (not slash or provider not in KEYED_PROVIDERS or model.startswith(REPLAY_PREFIX) or settings.api_base
            or environ.get("OPENAI_API_BASE") or environ.get("OPENAI_BASE_URL")):
        return ()
    variables = key_variables(provider)
    return () if any(environ.get(name) for name in variables) else variables


def key_problem(settings: Settings, environ: Mapping[str, str] | None = None) -> str | None:
    """A missing key (:func:`missing_key`) for the model a session would call first, in one line, or None."""
    variables = missing_key(settings, environ)
    if not variables:
        return None
    return (f"no API key for {settings.model}: {' or '.join(variables)} is not set; set it in the environment "
            "the sessions start from (this one), or name a server with --api-base")


def task_problem(task: BatchTask, default_folder: Path, overrides: dict[str, object],
                 checked: dict[CheckKey, str | None], *, keys: bool = False) -> str | None:
    """Why ``task`` could not start, as :func:`setup_problem` says, or None.

    Settings are those its process will read: its workspace's, a local repository's as they are
    at the task's ref (the clone's; :mod:`agentcli.fleet.repo_files`), or for a URL the batch's
    folder's (a remote repository's own files are checked after its clone), with the command's
    flags. ``checked`` memoizes by setup, model and workflow: a batch of hundreds of tasks has a
    handful of distinct setups. ``keys`` as for :func:`setup_problem`, but for a URL, whose own
    configuration (a server of its own) is known only after the clone.
    """
    from agentcli.fleet.repo_files import commit_at

    if task.workspace is not None:
        key: CheckKey = (task.workspace, task.model, task.workflow)
        if key not in checked:
            checked[key] = _problem_in(Path(task.workspace), overrides, task.model, task.workflow, keys=keys)
        return checked[key]
    repo = Path(task.repo) if task.repo is not None and Path(task.repo).is_dir() else None
    commit = commit_at(repo, task.ref) if repo is not None else None
    if repo is not None and commit is not None:
        key = (f"{repo}@{commit}", task.model, task.workflow)
        if key not in checked:
            checked[key] = _problem_at(repo, commit, task.ref, overrides, task.model, task.workflow, keys=keys)
        return checked[key]
    # A URL, or a ref that names nothing here (its clone fails and says so, for that task alone).
    key = (f"{default_folder} (remote)", task.model, task.workflow)
    if key not in checked:
        try:
            settings = load_settings(default_folder, overrides=overrides)
        except ConfigError as error:
            checked[key] = str(error)
        else:
            checked[key] = setup_problem(settings, None, task.model, task.workflow, remote=True)
    return checked[key]


def job_problem(task: BatchTask, job: JobSpec, workdir: Path, *, keys: bool = False) -> str | None:
    """Why ``job``'s session would not start in ``workdir`` (the task's clone, before the session
    starts), in one line naming the task and the file at fault, or None.

    The settings are those the process will read there with the flags it will be given.
    """
    overrides: dict[str, object] = {"model": job.model, "api_base": job.api_base, "workflow": job.workflow,
                                    "max_steps": job.max_steps, "sandbox": job.sandbox}
    where = f"{task.repo}@{task.ref or 'HEAD'}"
    problem = _problem_in(workdir, overrides, None, None, clone=where, keys=keys)
    if problem is None:
        return None
    lines = _relabel(problem, workdir, where).splitlines()
    return f"task {task.id}: {' '.join(line.strip() for line in lines)}; its session was not started"


def _problem_in(folder: Path, overrides: dict[str, object], model: str | None, workflow: str | None, *,
                clone: str | None = None, keys: bool = False) -> str | None:
    """:func:`setup_problem` with ``folder``'s settings, naming the workflow file at fault (a
    phase's model is named by phase), and with ``clone`` (what ``folder`` is a clone of) the file
    a workflow nothing defines would have had to be."""
    from agentcli.session.factory import workflow_catalog
    from agentcli.workflow.loader import WORKSPACE_WORKFLOWS_DIR

    try:
        settings = load_settings(folder, overrides=overrides)
    except ConfigError as error:
        return str(error)
    problem = setup_problem(settings, folder, model, workflow, keys=keys)
    if problem is None:
        return None
    name = workflow or settings.workflow
    entry = workflow_catalog(folder).get(name)
    if entry is None and clone is not None:
        problem += f" (not built in, not yours, and {clone} has no {WORKSPACE_WORKFLOWS_DIR.as_posix()}/{name}.toml)"
    elif (entry is not None and entry.path is not None and problem.startswith(f"workflow '{name}'")
          and str(entry.path) not in problem):
        problem += f" (in {entry.path})"
    return problem


def _problem_at(repo: Path, commit: str, ref: str | None, overrides: dict[str, object], model: str | None,
                workflow: str | None, *, keys: bool = False) -> str | None:
    """:func:`_problem_in` the files the clone will have, named as ``REPO@REF:PATH`` in messages."""
    from agentcli.fleet.repo_files import write_files

    with tempfile.TemporaryDirectory(prefix="agentcli-check-") as scratch:
        write_files(repo, commit, Path(scratch))
        problem = _problem_in(Path(scratch), overrides, model, workflow, keys=keys)
        return None if problem is None else _relabel(problem, Path(scratch), f"{repo}@{ref or 'HEAD'}")


def _relabel(problem: str, folder: Path, label: str) -> str:
    """Names files under ``folder`` (a scratch copy, a task's directory) as ``LABEL:PATH``."""
    return problem.replace(f"{folder}/", f"{label}:")
