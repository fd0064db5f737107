"""The options several commands share, each declared once: its flags, its help, its setting.

``run``, ``resume``, ``demo`` and the bare command (the TUI) take some of the same options; the
commands that read a workspace all take ``--cwd``. Each is declared here, as a field of
:class:`CommonOptions`, and :data:`TAKES` says which command takes which. A command gets them
with :func:`shared_options`, which adds the declarations to the command's parameters (typer reads
them from its signature) and hands the command one :class:`CommonOptions`:

    @shared_options("run")
    def run(prompt: Annotated[str, typer.Argument()], *, options: CommonOptions) -> None: ...

Typer has no parameter groups (fastapi/typer#153 and #405 ask for them); the answer given there
is ``Annotated`` declarations reused, or a decorator that merges signatures. Reused declarations
alone still leave every command listing every option and converting them to settings itself,
which is how the bare command's copies came to be dropped when a subcommand followed; so the
fields below are the declarations, and the decorator does the listing.

Options before the command apply to it, as in git or docker:
``agentcli -m openai/gpt-4o run "…"`` is ``agentcli run "…" -m openai/gpt-4o``. Given in both
places, the one nearer the command wins. One the command does not take is a usage error (exit 2)
naming the commands it goes with, never silently dropped.

This module is imported by ``agentcli --help`` and before the TUI's first frame: stdlib and
typer only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_args, get_type_hints

import typer
from typer.core import TyperCommand
from typer.models import OptionInfo

from agentcli.cli.common import fail

if TYPE_CHECKING:
    # What typer hands a command is its vendored click's Context; typer.Context only subclasses it.
    from typer._click.core import Context

R = TypeVar("R")


class OutputFormat(str, Enum):
    text = "text"
    jsonl = "jsonl"


class PermissionMode(str, Enum):
    ask = "ask"
    edits = "edits"
    all = "all"


class PlainUsage(TyperCommand):
    """A command whose usage line reads as the README writes it, ``agentcli run [OPTIONS] PROMPT``.

    typer 0.28 wraps a required argument in braces (``{PROMPT}``), which reads as a set to pick
    from or a template to fill in, and leaves arguments without a metavar in lower case
    (``a [b]``); click's own convention, kept here, is the bare name in capitals.
    """

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        pieces: list[str] = super().collect_usage_pieces(ctx)
        return [_plain(piece) for piece in pieces]


def _plain(piece: str) -> str:
    """``{ID}`` → ``ID``, ``a`` → ``A``, ``[b]`` → ``[B]``: arguments named in capitals, as
    every usage line in the README writes them."""
    if piece.startswith("{") and piece.endswith("}"):
        piece = piece[1:-1]
    return piece.upper()


@dataclass(frozen=True)
class CommonOptions:
    """The shared options' values, as the command sees them: its own flags, else those given
    before it, else the defaults (``None``: not given, the configuration decides)."""

    model: Annotated[
        str | None, typer.Option("--model", "-m", help="litellm model string, e.g. openai/gpt-4o, or replay:FILE.")
    ] = None
    api_base: Annotated[str | None, typer.Option("--api-base", help="Base URL of the model server.")] = None
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Workspace folder (default: the current folder).")] = None
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", min=1, help="Model calls allowed before halting.")
    ] = None
    workflow: Annotated[
        str | None, typer.Option("--workflow", "-w", help="single (default), plan-build, or a workflow file's name.")
    ] = None
    permission_mode: Annotated[
        PermissionMode | None,
        typer.Option("--permission-mode", help="ask: approve commands and unusual writes; edits (default "
                     "headless): file edits run, commands ask; all: everything runs."),
    ] = None
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve every tool call: --permission-mode all.")] = False
    sandbox: Annotated[
        bool | None,
        typer.Option("--sandbox/--no-sandbox", help="Run bash under bubblewrap: workspace writable, no network."),
    ] = None
    theme: Annotated[str | None, typer.Option("--theme", help="TUI theme: agentcli-dark, agentcli-light, …")] = None
    output: Annotated[
        OutputFormat, typer.Option("--output", "-o", help="text for people, jsonl for programs.")
    ] = OutputFormat.text

    def settings_overrides(self) -> dict[str, Any]:
        """The settings these options override, for ``load_settings``; ``None`` leaves a setting
        to the configuration files and the environment."""
        # -y with another --permission-mode than all was refused when the options were read.
        mode = PermissionMode.all if self.yes else self.permission_mode
        overrides: dict[str, Any] = {"model": self.model, "api_base": self.api_base, "max_steps": self.max_steps,
                                     "workflow": self.workflow, "sandbox": self.sandbox}
        if mode is not None:
            overrides["permissions"] = {"mode": mode.value}
        return overrides


Name = Literal["model", "api_base", "cwd", "max_steps", "workflow", "permission_mode", "yes", "sandbox", "theme",
               "output"]
NAMES: tuple[Name, ...] = get_args(Name)

ROOT = "agentcli"
"""The bare command, ``agentcli`` with no subcommand: it opens the TUI."""

_AGENT: frozenset[Name] = frozenset({"model", "api_base", "cwd", "max_steps", "permission_mode", "yes", "sandbox"})

TAKES: dict[str, frozenset[Name]] = {
    ROOT: _AGENT | {"workflow", "theme"},
    "run": _AGENT | {"workflow", "output"},
    # A resumed session keeps its workflow: its chart's configuration was recorded in it.
    "resume": _AGENT | {"theme", "output"},
    "demo": frozenset({"theme", "output"}),  # the demo plays its own recording in its own folder
    "compact": frozenset({"model", "api_base", "cwd", "output"}),
    "rewind": frozenset({"cwd"}),
    "sessions": frozenset({"cwd"}),
    "sessions show": frozenset(),
    "sessions rm": frozenset(),
    "workflows": frozenset({"cwd"}),
    "workflows show": frozenset({"cwd"}),
    "snapshots": frozenset({"cwd"}),
    "snapshots gc": frozenset({"cwd"}),
    "diff": frozenset({"cwd"}),
    "restore": frozenset({"cwd"}),
    "mcp": frozenset({"cwd"}),
    "mcp list": frozenset({"cwd"}),
    "mcp call": frozenset({"cwd"}),
    "race": frozenset(),  # the group: `race -n 3 "TASK"` is `race start …`, which takes the options
    "race start": _AGENT | {"workflow", "output"},
    "race show": frozenset({"cwd"}),
    "race list": frozenset({"cwd"}),
    "race diff": frozenset({"cwd"}),
    "race apply": frozenset({"cwd"}),
    "race undo": frozenset({"cwd"}),
    "race rm": frozenset({"cwd"}),
    "batch": _AGENT | {"workflow", "output"},
}
"""Which shared options each command takes, by its path below ``agentcli``. The bare command
also *accepts* all of them, so that any can be written before a subcommand."""

_HINTS = get_type_hints(CommonOptions, include_extras=True)
_DEFAULTS: dict[str, Any] = {field.name: field.default for field in fields(CommonOptions)}
_CONTEXT = "_agentcli_context"
"""The parameter through which typer hands the context to a command that does not ask for it."""
_GIVEN = "agentcli.shared_options"
"""Key in ``ctx.meta`` (one dict for the whole invocation) of the typed values each command's
context was given, by ``id(ctx)``. ``ctx.params`` holds them before typer converts them (the
string ``"jsonl"``, not ``OutputFormat.jsonl``), so the commands after it read them here."""


def flag(name: Name) -> str:
    """How the user writes an option: ``--model``, ``--sandbox/--no-sandbox``."""
    declaration = next(meta for meta in get_args(_HINTS[name])[1:] if isinstance(meta, OptionInfo))
    # In ``Annotated`` typer reads the first positional argument of Option() as the first flag.
    return str(declaration.default)


def shared_options(command: str) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Give ``command`` (its path below ``agentcli``, a key of :data:`TAKES`) the shared options
    it takes, as a keyword argument ``options: CommonOptions`` if its function has one.

    Every command is decorated, including those that take none: the decorator is also what
    refuses an option written before a command that does not take it.
    """
    takes = TAKES[command]
    declares = NAMES if command == ROOT else tuple(name for name in NAMES if name in takes)

    def decorate(function: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(function, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "options"]
        wants_options = "options" in signature.parameters
        context = next((p.name for p in own if p.annotation is typer.Context), None)
        added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_DEFAULTS[name],
                                   annotation=_HINTS[name]) for name in declares]
        if context is None:
            added.append(inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context))

        @functools.wraps(function)
        def command_with_options(**kwargs: Any) -> R:
            ctx: Context = kwargs[context] if context else kwargs.pop(_CONTEXT)
            values: dict[str, Any] = {name: kwargs.pop(name) for name in declares}
            ctx.meta.setdefault(_GIVEN, {})[id(ctx)] = values
            if ctx.invoked_subcommand is None:  # a group's callback before its subcommand: that one decides
                values = _resolve(ctx, command, values)
            if wants_options:
                kwargs["options"] = CommonOptions(**values)
            return function(**kwargs)

        parameters = [*own, *added]
        # typer reads the parameters from the signature and their types from the annotations.
        command_with_options.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        command_with_options.__annotations__ = {p.name: p.annotation for p in parameters}
        return command_with_options

    return decorate


def _given(ctx: Context, name: str) -> bool:
    """The user gave the option to this command (not a default)."""
    source = ctx.get_parameter_source(name)
    # By name: typer 0.28 runs on a vendored click (typer._click) whose ParameterSource is private.
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


def _resolve(ctx: Context, command: str, values: dict[str, Any]) -> dict[str, Any]:
    """The values ``command`` runs with: its own flags, else the nearest given before it (a
    group's, then the root's); exit 2 for one given before it that it does not take."""
    takes = TAKES[command]
    declared = ctx.meta[_GIVEN]
    resolved = dict(values)
    for name in NAMES:
        # Only as a shared option: `restore --yes` is restore's own, and confirms a restore.
        givers = [c for c in _lineage(ctx) if name in declared.get(id(c), ()) and _given(c, name)]
        if not givers:
            continue
        if name not in takes:
            raise fail(_misplaced(ctx, command, name))
        if givers[0] is not ctx:
            resolved[name] = ctx.meta[_GIVEN][id(givers[0])][name]
    mode = resolved.get("permission_mode")
    if resolved.get("yes") and mode not in (None, PermissionMode.all):
        # Letting -y win would run commands the user asked to approve one by one.
        raise fail(f"-y and --permission-mode {mode.value} exclude each other: -y is --permission-mode all")
    return resolved


def _lineage(ctx: Context) -> list[Context]:
    """The context and its parents, nearest first."""
    chain: list[Context] = []
    current: Context | None = ctx
    while current is not None:
        chain.append(current)
        current = current.parent
    return chain


def _label(command: str) -> str:
    return "`agentcli` (the TUI)" if command == ROOT else f"`agentcli {command}`"


def _misplaced(ctx: Context, command: str, name: Name) -> str:
    """Say where an option goes: the commands that take it, and the command's own option with
    the same flag when it has one (``restore --yes`` confirms a restore; it approves no tool)."""
    written = flag(name)
    others = ", ".join(_label(other) for other, takes in TAKES.items() if name in takes)
    message = f"{written} does not apply to {_label(command)}; it goes with {others}"
    first = written.split("/")[0]
    if command != ROOT and any(first in getattr(param, "opts", ()) for param in ctx.command.params):
        message += f"\n`agentcli {command}` has a {first} of its own: write it after the command, " \
                   f"agentcli {command} … {first}"
    return message
