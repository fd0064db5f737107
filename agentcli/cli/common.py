"""What every command needs: usage errors, the workspace, the settings, a recorded session.

Light at import (``agentcli --help`` loads it): the settings and the session log, which bring
pydantic, are imported when a command asks for them.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import typer

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.session.log import SessionEntry

EXIT_ERROR = 1
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    """Print ``agentcli: message`` on stderr; raise the result to exit with ``code``."""
    typer.echo(f"agentcli: {message}", err=True)
    return typer.Exit(code)


def workspace(cwd: Path | None) -> Path:
    """The folder a command works in: ``--cwd`` or the current folder, which must exist."""
    folder = (cwd or Path.cwd()).expanduser()
    if not folder.is_dir():
        raise fail(f"workspace '{folder}' is not a folder")
    return folder.resolve()


def load_settings(folder: Path, overrides: Mapping[str, Any] | None = None) -> Settings:
    """The settings for ``folder`` with the flags' ``overrides``; a bad config exits 2 naming the
    file (or variable) and the field."""
    from agentcli.config import ConfigError
    from agentcli.config import load_settings as load

    try:
        return load(folder, overrides=overrides)
    except ConfigError as error:
        raise fail(str(error)) from None


def find_session(ref: str) -> SessionEntry:
    """A recorded session by id or unique id prefix, or exit 2 saying why not."""
    from agentcli.config import data_home
    from agentcli.session.log import SessionNotFound
    from agentcli.session.log import find_session as find

    try:
        return find(data_home(), ref)
    except SessionNotFound as error:
        raise fail(str(error)) from None


def interactive() -> bool:
    """Both ends are a terminal, so a command may open the TUI instead of printing."""
    # Tests and benchmarks stand in for a terminal by patching ``agentcli.cli._interactive``
    # (tests/tui/test_startup.py, bench/tui_startup.py): the name the one-module command line
    # had. Looking it up there at call time keeps that one seam for every command.
    import agentcli.cli

    return agentcli.cli._interactive()


_python_showwarning = warnings.showwarning


def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
    """``warnings.showwarning`` for the command line: a session log's warnings (a torn line, an
    unknown event) are for the user, so one ``agentcli: warning: …`` line, not Python's format
    with agentcli's source file and line; other warnings keep Python's, for whoever debugs them."""
    # Looked up, not imported: the log module (and pydantic) is loaded only by the commands that
    # read a log, and a SessionLogWarning can only come from one of those.
    log = sys.modules.get("agentcli.session.log")
    if log is not None and issubclass(category, log.SessionLogWarning):
        stream = file or sys.stderr
        try:
            stream.write(f"agentcli: warning: {message}\n")
        except OSError:
            pass  # stderr closed: as Python's own showwarning, the warning is lost, not the command
        return
    _python_showwarning(message, category, filename, lineno, file, line)
