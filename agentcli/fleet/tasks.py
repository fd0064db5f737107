"""Reading a batch's tasks file: agentcli's own lines, or SWE-bench instances, one JSON object a line.

agentcli's line: ``{"id": "fix-1", "workspace": "../proj", "prompt": "…"}`` or with ``"repo": URL``
and ``"ref"`` instead of a workspace; optional ``checks`` (commands), ``model``, ``workflow``.

A SWE-bench instance (``instance_id``, ``repo``, ``base_commit``, ``problem_statement``,
``FAIL_TO_PASS``, ``PASS_TO_PASS``, ``test_patch``) becomes a task that clones the repository at
``base_commit``, gives the problem statement as the prompt, applies ``test_patch`` after the
session (the agent never sees the tests that judge it) and runs the two test lists as checks.
The whole file is validated before anything runs: a bad line is an error naming it.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

DEFAULT_TEST_COMMAND = "python -m pytest -q -p no:cacheprovider"
"""What runs a SWE-bench instance's test ids (pytest node ids, as most instances have)."""


class TaskFileError(Exception):
    """A line of the tasks file cannot be read; the message names the file and the line."""


class BatchTask(BaseModel):
    """One task, normalized from either format."""

    id: str
    prompt: str
    workspace: str | None = None
    """A local folder, copied from a snapshot (never touched)."""
    repo: str | None = None
    """A git URL or a local repository path, cloned."""
    ref: str | None = None
    checks: list[str] | None = None
    model: str | None = None
    workflow: str | None = None
    test_patch: str | None = None
    line: int = 0
    """Its line in the tasks file, for messages about it."""


class _OwnLine(BaseModel):
    model_config = {"extra": "forbid"}

    id: str | None = None
    prompt: str
    workspace: str | None = None
    repo: str | None = None
    ref: str | None = None
    checks: list[str] | None = None
    model: str | None = None
    workflow: str | None = None


class _SweBenchLine(BaseModel):
    model_config = {"extra": "ignore"}  # hints_text, created_at, version, … are not ours to use

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    FAIL_TO_PASS: list[str] | str = []
    PASS_TO_PASS: list[str] | str = []
    test_patch: str | None = None


def read_tasks(path: Path, *, repos: Path | None = None, test_command: str = DEFAULT_TEST_COMMAND) -> list[BatchTask]:
    """Every task of ``path``, in order.

    Args:
        path: The JSONL file.
        repos: Where local clones of SWE-bench repositories are (``owner__name`` or ``name``
            folders); without it, or without a match, the repository is cloned from GitHub.
        test_command: Prefix of the command that runs a SWE-bench instance's test ids.

    Raises:
        TaskFileError: The file cannot be read, a line is not a task, or two share an id.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TaskFileError(f"cannot read {path}: {error}") from None
    tasks: list[BatchTask] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except ValueError as error:
            raise TaskFileError(f"{where}: not JSON: {error}") from None
        if not isinstance(raw, dict):
            raise TaskFileError(f"{where}: a task is a JSON object, not {type(raw).__name__}")
        task = _task(raw, where, number, path.parent, repos, test_command).model_copy(update={"line": number})
        if task.id in seen:
            raise TaskFileError(f"{where}: a second task with id {task.id!r}; ids must be unique "
                                "(they key the results)")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise TaskFileError(f"{path} has no tasks (one JSON object a line)")
    return tasks


def _task(raw: dict[str, Any], where: str, number: int, base: Path, repos: Path | None, test_command: str) -> BatchTask:
    try:
        if "instance_id" in raw:
            return _from_swe_bench(_SweBenchLine.model_validate(raw), repos, test_command)
        own = _OwnLine.model_validate(raw)
    except ValidationError as error:
        raise TaskFileError(f"{where}: {_problems(error)}") from None
    except ValueError as error:
        raise TaskFileError(f"{where}: {error}") from None
    if (own.workspace is None) == (own.repo is None):
        raise TaskFileError(f"{where}: give either \"workspace\" (a folder) or \"repo\" (a git URL), not "
                            f"{'both' if own.workspace else 'neither'}")
    workspace = None
    if own.workspace is not None:
        folder = (base / own.workspace).expanduser().resolve()
        if not folder.is_dir():
            raise TaskFileError(f"{where}: workspace {folder} is not a folder")
        workspace = str(folder)
    repo = own.repo
    if repo is not None and not _is_url(repo) and (base / repo).expanduser().is_dir():
        repo = str((base / repo).expanduser().resolve())
    return BatchTask(id=own.id or f"line-{number}", prompt=own.prompt, workspace=workspace, repo=repo, ref=own.ref,
                     checks=own.checks, model=own.model, workflow=own.workflow)


def _problems(error: ValidationError) -> str:
    """Every field at fault, an unknown one with the field meant: a misspelt ``promt`` is also a
    missing ``prompt``, and saying only the second hides the typo."""
    from difflib import get_close_matches

    said = []
    for item in error.errors()[:4]:
        field = ".".join(str(part) for part in item["loc"]) or "(line)"
        if item["type"] == "extra_forbidden":
            close = get_close_matches(field, list(_OwnLine.model_fields), n=1)
            meant = f" (did you mean '{close[0]}'?)" if close else f" (fields: {', '.join(_OwnLine.model_fields)})"
            said.append(f"{field}: not a task field{meant}")
        else:
            said.append(f"{field}: {item['msg']}")
    return "; ".join(said)


def _from_swe_bench(line: _SweBenchLine, repos: Path | None, test_command: str) -> BatchTask:
    fail_to_pass = _test_list(line.FAIL_TO_PASS, "FAIL_TO_PASS")
    pass_to_pass = _test_list(line.PASS_TO_PASS, "PASS_TO_PASS")
    checks = [f"{test_command} {' '.join(shlex.quote(test) for test in tests)}"
              for tests in (fail_to_pass, pass_to_pass) if tests]
    return BatchTask(id=line.instance_id, prompt=line.problem_statement, repo=_swe_bench_repo(line.repo, repos),
                     ref=line.base_commit, checks=checks, test_patch=line.test_patch or None)


def _test_list(value: list[str] | str, name: str) -> list[str]:
    """The dataset on the hub stores the lists as JSON text; exports as real lists: both are fine."""
    if isinstance(value, list):
        return value
    try:
        parsed = json.loads(value) if value.strip() else []
    except ValueError:
        raise ValueError(f"{name} is neither a list nor JSON text of one") from None
    if not isinstance(parsed, list) or not all(isinstance(item, str) for item in parsed):
        raise ValueError(f"{name} must be a list of test ids")
    return parsed


def _swe_bench_repo(repo: str, repos: Path | None) -> str:
    if _is_url(repo):
        return repo
    if repos is not None:
        owner, _, name = repo.partition("/")
        for candidate in (repos / f"{owner}__{name}", repos / repo, repos / name):
            if candidate.is_dir():
                return str(candidate.resolve())
    return f"https://github.com/{repo}.git"


def _is_url(text: str) -> bool:
    return "://" in text or text.startswith("git@")
