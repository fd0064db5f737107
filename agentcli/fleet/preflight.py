"""Refusing a race or a batch before anything starts: the model or workflow a session would refuse.

Each attempt and task runs ``agentcli run``, which refuses an unknown provider or workflow at
once; left to that, a race of five spends five materialized copies and five processes (about
3 s each) to report the same typo five times, and a batch clones every repository first. So the
command makes the same check (:func:`~agentcli.session.factory.check_models`) for every distinct
model and workflow it is about to start, and refuses with exit 2 naming the first at fault.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from agentcli.config import ConfigError, Settings, load_settings
from agentcli.fleet.tasks import BatchTask


def setup_problem(settings: Settings, workspace: Path | None, model: str | None, workflow: str | None) -> str | None:
    """Why a session with ``model`` and ``workflow`` (None: the configured one) would not start in
    ``workspace``, in one line, or None.

    Checks what ``agentcli run`` checks: every role's model, the workflow as it applies in
    ``workspace`` and the models its phases name. With no ``workspace`` (a repository not cloned
    yet) the workflow must be a built-in or one of the user's.
    """
    from agentcli.session.factory import SessionSetupError, check_models

    update = {key: value for key, value in (("model", model), ("workflow", workflow)) if value}
    chosen = settings.model_copy(update=update)
    try:
        if workspace is not None:
            check_models(chosen, workspace)
        else:
            with tempfile.TemporaryDirectory(prefix="agentcli-check-") as empty:  # no project workflows
                check_models(chosen, Path(empty))
    except SessionSetupError as error:
        return str(error)
    return None


def task_problem(task: BatchTask, default_folder: Path, overrides: dict[str, object],
                 checked: dict[tuple[str, str | None, str | None], str | None]) -> str | None:
    """Why ``task`` could not start, as :func:`setup_problem` says, or None.

    Settings are those its process will read: its workspace's (a local repository's own for a
    repository task; the batch's folder's for a URL, whose configuration is unknown until cloned)
    with the command's flags. ``checked`` memoizes by folder, model and workflow: a batch of
    hundreds of tasks has a handful of distinct setups.
    """
    if task.workspace is not None:
        folder: Path | None = Path(task.workspace)
    elif task.repo is not None and Path(task.repo).is_dir():
        folder = Path(task.repo)  # its working tree: the nearest thing to the ref's files before a clone
    else:
        folder = None
    key = (str(folder or default_folder), task.model, task.workflow)
    if key not in checked:
        try:
            settings = load_settings(folder or default_folder, overrides=overrides)
        except ConfigError as error:
            checked[key] = str(error)
        else:
            checked[key] = setup_problem(settings, folder, task.model, task.workflow)
            if checked[key] is not None and folder is None and "unknown workflow" in (checked[key] or ""):
                checked[key] = (f"{checked[key]} (a repository's own workflows are read only from a local "
                                "clone; put the file in your workflows folder, or give the task a local repo)")
    return checked[key]
