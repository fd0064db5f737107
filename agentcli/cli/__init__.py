"""The ``agentcli`` command line: the command tree, assembled from one module per group of commands.

- ``options``: the options several commands share, each declared once, and where each applies;
- ``run``: ``run``, ``resume``, ``demo`` and ``agentcli`` alone (the TUI);
- ``drive``: the headless driver those commands run a turn with;
- ``compact``: summarize the older part of a session's model view;
- ``rewind``: take a session back to before one of its messages (and undo that);
- ``sessions``, ``workflows``, ``snapshots`` (with ``diff`` and ``restore``): the rest;
- ``race`` and ``batch`` (with ``fleet_common``): many sessions at once (agentcli/fleet/);
- ``common``: usage errors, the workspace, the settings, a recorded session.

Keep every module's imports light: ``agentcli --help`` must not import litellm, pygit2 or
pydantic (tests/core/test_imports.py), and the bare command draws the TUI's first frame before
the settings are loaded (tests/tui/test_startup.py). Commands import what they need when they run.

Only ``run`` (the bare command, ``run``, ``demo``, ``resume``) is imported with the command line,
and only the bare command is built with it: every other command is built (and its module
imported) when it is named, or when ``--help`` lists them all. Building them all cost the bare
command ~20 ms before its first frame; ``run``, ``demo`` and ``resume`` another 1.4 ms.
"""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from typing import Any

import typer
from typer.core import TyperGroup

from agentcli import startup_gc
from agentcli.cli import run
from agentcli.cli.common import show_warning
from agentcli.cli.options import PlainUsage

__all__ = ["app", "every_command", "main"]

_LAZY: dict[str, tuple[str, str]] = {
    "run": ("run", "run"),
    "demo": ("run", "demo"),
    "resume": ("run", "resume"),
    "compact": ("compact", "compact"),
    "rewind": ("rewind", "rewind"),
    "diff": ("snapshots", "diff"),
    "restore": ("snapshots", "restore"),
    "batch": ("batch", "batch"),
    "sessions": ("sessions", "app"),
    "workflows": ("workflows", "app"),
    "snapshots": ("snapshots", "app"),
    "mcp": ("mcp", "app"),
    "race": ("race", "app"),
}
"""The commands built when named: module of ``agentcli.cli`` and the function (a command) or the
Typer (a group of commands) in it, in the order ``--help`` lists them (typer's: the commands,
then the groups)."""


def _build(name: str) -> Any:
    """The click command for ``name``, built by typer as if it had been registered up front."""
    module, attribute = _LAZY[name]
    target = getattr(import_module(f"agentcli.cli.{module}"), attribute)
    holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    holder.callback()(_nothing)  # a callback makes typer build a group, whatever it holds
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name=name, cls=PlainUsage)(target)
    return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]


def _nothing() -> None:
    """The placeholder group's callback (never invoked)."""


_UNDO_HINT = ("the agent's changes are undone with `agentcli restore N` (`agentcli snapshots` lists them, and "
              "every restore prints how to undo it), a rewind with `agentcli rewind ID --undo`")
_ELSEWHERE = {"undo": _UNDO_HINT, "revert": _UNDO_HINT, "rollback": _UNDO_HINT}
"""Commands people try from other tools ("a coding agent you can … undo"), and where that is here."""


class _Commands(TyperGroup):
    """The root group: the commands of ``run`` up front, the others built on first use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(name for name in _LAZY if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in _LAZY:
            command = self.commands[cmd_name] = _build(cmd_name)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] in _ELSEWHERE:
            ctx.fail(f"No such command '{args[0]}': {_ELSEWHERE[args[0]]}.")  # a usage error: exit 2
        if args and args[0] not in self.commands and args[0] not in _LAZY:
            # Not a command: typer's "did you mean" picks among the built ones, so build all.
            for name in _LAZY:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)


app = typer.Typer(
    cls=_Commands,
    name="agentcli",
    help="A terminal coding agent you can watch, stop, answer and undo.\n\n"
         "Options before a command apply to it: agentcli -m MODEL run PROMPT. "
         "Given before and after it, the one after wins.",
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help and usage errors: typer's rich formatting imports rich's markdown,
    # syntax and traceback modules (~90 ms, more than the rest of `agentcli --help` together).
    # The sub-command groups say the same; each Typer has its own setting.
    rich_markup_mode=None,
)
app.callback(invoke_without_command=True)(run.root)


def every_command() -> Any:
    """The root click group with every command built (the command tree whole, for tests)."""
    root = typer.main.get_command(app)
    for name in root.list_commands(None):  # type: ignore[attr-defined]
        root.get_command(None, name)  # type: ignore[attr-defined]
    return root


def _interactive() -> bool:
    """Both ends are a terminal. Tests and benchmarks replace this to stand in for one."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def main() -> None:
    """Console-script entry point."""
    # No cyclic collection while the program starts (agentcli/startup_gc.py): the TUI resumes it
    # after its first frame, other commands as they start; this ``finally`` covers the rest.
    startup_gc.pause()
    warnings.showwarning = show_warning
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        startup_gc.resume()
