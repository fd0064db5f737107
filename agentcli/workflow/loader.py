"""Workflow files: ``.agentcli/workflows/*.toml`` in the workspace and the user's config folder.

Each file holds one workflow; its name is the file name (``review-fix.toml`` is ``review-fix``).
Where names collide the workspace wins over the user's folder, which wins over the built-ins, so
a project can pin its own ``plan-build``. The highest-precedence definition wins even when it is
invalid: running a built-in in place of the file the user just wrote would hide their mistake.

A file that cannot be used never raises out of :func:`load_workflows`: it is listed as invalid
with one problem per field at fault, naming the file, the field and what to do, and every other
workflow still loads. Field mistakes (a wrong type, an unknown key) are reported first; the
structure (references, reachability…) is checked once every field parses. :func:`find_workflow`
raises for the one workflow asked for.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from agentcli.config_sources import config_home, utf8_problem
from agentcli.workflow.builtin import BUILTIN_WORKFLOWS, UnknownWorkflowError
from agentcli.workflow.model import InvalidWorkflowError, Phase, Workflow, WorkflowProblem

WORKSPACE_WORKFLOWS_DIR = Path(".agentcli") / "workflows"
"""Relative to the workspace."""

Source = Literal["workspace", "user", "builtin"]
PRECEDENCE: tuple[Source, ...] = ("workspace", "user", "builtin")
"""Highest first."""


def user_workflows_dir() -> Path:
    """``~/.config/agentcli/workflows`` (follows ``$XDG_CONFIG_HOME``)."""
    return config_home() / "workflows"


@dataclass(frozen=True)
class WorkflowEntry:
    """One workflow definition and where it came from; ``workflow`` is None when it is invalid."""

    name: str
    source: Source
    path: Path | None
    """The file, or None for a built-in."""
    workflow: Workflow | None
    errors: tuple[WorkflowProblem, ...] = ()
    warnings: tuple[WorkflowProblem, ...] = ()

    @property
    def valid(self) -> bool:
        return self.workflow is not None and not self.errors

    @property
    def origin(self) -> str:
        """``builtin`` or the file's path, for listings."""
        return "builtin" if self.path is None else str(self.path)


@dataclass
class WorkflowCatalog:
    """Every workflow definition found, highest precedence first within each name."""

    entries: list[WorkflowEntry] = field(default_factory=list)

    def get(self, name: str) -> WorkflowEntry | None:
        """The definition of ``name`` that applies (the highest-precedence one), valid or not."""
        return next((entry for entry in self.entries if entry.name == name), None)

    @property
    def names(self) -> list[str]:
        return sorted({entry.name for entry in self.entries})

    @property
    def active(self) -> list[WorkflowEntry]:
        """One entry per name, the one that applies, sorted by name."""
        return [entry for name in self.names if (entry := self.get(name)) is not None]

    @property
    def invalid(self) -> list[WorkflowEntry]:
        """Every invalid definition, including ones another definition overrides."""
        return [entry for entry in self.entries if not entry.valid]

    def overridden(self, entry: WorkflowEntry) -> WorkflowEntry | None:
        """The definition ``entry`` hides, if any (the next one down for the same name)."""
        same = [e for e in self.entries if e.name == entry.name]
        position = same.index(entry)
        return same[position + 1] if position + 1 < len(same) else None

    def shadowed_by(self, entry: WorkflowEntry) -> WorkflowEntry | None:
        """The definition that hides ``entry``, or None when ``entry`` applies."""
        applied = self.get(entry.name)
        return None if applied is entry else applied


def load_workflows(
    workspace: Path,
    *,
    known_tools: Collection[str] | None = None,
    user_dir: Path | None = None,
) -> WorkflowCatalog:
    """Find and validate every workflow: built-ins, the user's files, the workspace's files.

    Args:
        workspace: The workspace whose ``.agentcli/workflows`` folder is read.
        known_tools: The registry's tool names; when given, an unknown tool is an error.
        user_dir: The user's workflow folder (``~/.config/agentcli/workflows`` by default).

    Returns:
        The catalog; invalid files are in it with their problems, never raised.
    """
    folders: list[tuple[Source, Path]] = [
        ("workspace", workspace / WORKSPACE_WORKFLOWS_DIR),
        ("user", user_dir if user_dir is not None else user_workflows_dir()),
    ]
    entries: list[WorkflowEntry] = []
    for source, folder in folders:
        for path in _workflow_files(folder):
            entries.append(load_workflow_file(path, source=source, known_tools=known_tools))
    for workflow in BUILTIN_WORKFLOWS.values():
        problems = workflow.tool_problems(known_tools) if known_tools is not None else []
        entries.append(
            WorkflowEntry(workflow.name, "builtin", None, workflow, tuple(problems), tuple(workflow.warnings()))
        )
    rank = {source: i for i, source in enumerate(PRECEDENCE)}
    entries.sort(key=lambda entry: (entry.name, rank[entry.source]))
    return WorkflowCatalog(entries)


def _workflow_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.glob("*.toml") if p.is_file())
    except OSError:
        return []  # an unreadable folder holds no workflows we could use; its files are not listed


def load_workflow_file(
    path: Path, *, source: Source = "workspace", known_tools: Collection[str] | None = None
) -> WorkflowEntry:
    """Read and validate one workflow file; problems are returned in the entry, never raised."""
    name = path.stem
    file = str(path)

    def invalid(*problems: WorkflowProblem) -> WorkflowEntry:
        return WorkflowEntry(name, source, path, None, tuple(_in_file(p, file) for p in problems))

    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        return invalid(WorkflowProblem("", f"invalid TOML: {error}"))
    except UnicodeDecodeError as error:
        # tomllib decodes the whole file first; that error is not a TOMLDecodeError.
        return invalid(WorkflowProblem("", utf8_problem(error)))
    except OSError as error:
        return invalid(WorkflowProblem("", f"cannot read the file: {error.strerror or error}"))

    declared = data.get("name")
    if declared is not None and declared != name:
        return invalid(WorkflowProblem(
            "name", f"'{declared}' does not match the file name '{path.name}'; a workflow file's name is "
            f"its file name: rename the file to '{declared}.toml' or remove the name field"))
    try:
        workflow = Workflow.model_validate({**data, "name": name})
    except ValidationError as error:
        return invalid(*_problems_from(error, data))
    errors = workflow.tool_problems(known_tools) if known_tools is not None else []
    return WorkflowEntry(
        name, source, path, workflow,
        tuple(_in_file(p, file) for p in errors),
        tuple(_in_file(p, file) for p in workflow.warnings()),
    )


def find_workflow(
    name: str,
    workspace: Path,
    *,
    known_tools: Collection[str] | None = None,
    user_dir: Path | None = None,
) -> Workflow:
    """The workflow ``name`` as it applies in ``workspace``.

    Raises:
        UnknownWorkflowError: no file or built-in has that name (the message lists those that do).
        InvalidWorkflowError: the definition that applies is invalid (its ``problems`` name the
            file and the fields).
    """
    catalog = load_workflows(workspace, known_tools=known_tools, user_dir=user_dir)
    entry = catalog.get(name)
    if entry is None:
        raise UnknownWorkflowError(f"unknown workflow '{name}'; known workflows: {', '.join(catalog.names)}")
    if not entry.valid or entry.workflow is None:
        raise InvalidWorkflowError(list(entry.errors), name=name)
    return entry.workflow


# -- turning pydantic's errors into problems that name the field ----------------------------------

_PHASE_FIELDS = ", ".join(Phase.model_fields)
_TRANSITION_FIELDS = "from, to, tool, checks"
_WORKFLOW_FIELDS = ", ".join(f for f in Workflow.model_fields)


def _in_file(problem: WorkflowProblem, file: str) -> WorkflowProblem:
    return WorkflowProblem(problem.field, problem.message, file)


def _problems_from(error: ValidationError, data: dict[str, Any]) -> list[WorkflowProblem]:
    problems: list[WorkflowProblem] = []
    for item in error.errors():
        cause = (item.get("ctx") or {}).get("error")
        if isinstance(cause, InvalidWorkflowError):
            problems.extend(cause.problems)
            continue
        loc = list(item["loc"])
        problems.append(WorkflowProblem(_field(loc), _message(item, loc, data)))
    return problems


def _field(loc: list[Any]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    # pydantic names a transition's `from` and `to` by their Python names.
    return text.replace(".source", ".from").replace(".target", ".to")


def _message(item: Any, loc: list[Any], data: dict[str, Any]) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        allowed = _allowed_fields(loc)
        message = f"unknown field '{loc[-1]}'; allowed fields: {allowed}"
    elif kind == "missing":
        message = "required field is missing"
    else:
        message = str(item["msg"]).removeprefix("Value error, ")
        if "input" in item and kind not in ("value_error",) and not isinstance(item["input"], (dict, list)):
            message += f" (got {item['input']!r})"
    subject = _phase_label(loc, data)
    return f"{subject}: {message}" if subject else message


def _allowed_fields(loc: list[Any]) -> str:
    if len(loc) >= 3 and loc[0] == "phases":
        return _PHASE_FIELDS
    if len(loc) >= 3 and loc[0] == "transitions":
        return _TRANSITION_FIELDS
    return _WORKFLOW_FIELDS


def _phase_label(loc: list[Any], data: dict[str, Any]) -> str:
    """``phase 'plan.design'`` for an error inside a named phase, so indexes need no counting."""
    if len(loc) >= 2 and loc[0] == "phases" and isinstance(loc[1], int) and loc[-1] != "name":
        phases = data.get("phases")
        if isinstance(phases, list) and loc[1] < len(phases) and isinstance(phases[loc[1]], dict):
            name = phases[loc[1]].get("name")
            if isinstance(name, str):
                return f"phase '{name}'"
    return ""


__all__ = [
    "PRECEDENCE",
    "WORKSPACE_WORKFLOWS_DIR",
    "WorkflowCatalog",
    "WorkflowEntry",
    "find_workflow",
    "load_workflow_file",
    "load_workflows",
    "user_workflows_dir",
]
