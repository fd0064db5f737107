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
"""

from __future__ import annotations

import sys

import typer

from agentcli.cli import batch, compact, mcp, race, rewind, run, sessions, snapshots, workflows

__all__ = ["app", "main"]

app = typer.Typer(
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
app.command()(run.run)
app.command()(run.demo)
app.command()(run.resume)
app.command()(compact.compact)
app.command()(rewind.rewind)
app.command()(snapshots.diff)
app.command()(snapshots.restore)
app.add_typer(sessions.app, name="sessions")
app.add_typer(workflows.app, name="workflows")
app.add_typer(snapshots.app, name="snapshots")
app.add_typer(mcp.app, name="mcp")
app.add_typer(race.app, name="race")
app.command()(batch.batch)


def _interactive() -> bool:
    """Both ends are a terminal. Tests and benchmarks replace this to stand in for one."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
