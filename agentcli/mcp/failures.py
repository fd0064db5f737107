"""Why a server did not start, in one line the user can act on."""

from __future__ import annotations

import shutil

from agentcli.mcp.servers import MissingVariable


def failure_reason(error: BaseException) -> str:
    """A failure in one line: the innermost exception of an exception group says what happened."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, MissingVariable):
        return str(error)
    if isinstance(error, FileNotFoundError):
        command = str(error.filename or error)
        first = command.split()[0] if command.split() else ""
        # `"command": "npx -y server"` is a common slip: the arguments belong in `args`.
        hint = "; give its arguments in `args`" if " " in command.strip() and shutil.which(first) else ""
        return f"the command was not found ({command}){hint}"
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text}" if type(error).__name__ not in text else text
