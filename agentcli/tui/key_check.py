"""Saying at start-up, before any task is typed, that the model has no API key.

Without this a new user in a fresh repository sees an empty screen, types a task, and only then
learns the key is missing, with advice ("then resume") that needs a restart anyway. The check is
the one ``race`` and ``batch`` use before they start (``fleet.preflight.missing_key``): lenient,
silent when a server is named, since only litellm knows for sure and it is too slow to ask here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.config import Settings

TITLE = "No API key"


def missing_key_advice(settings: Settings) -> str | None:
    """What to do about a missing key for the session's model, in a few lines, or None."""
    from agentcli.fleet.preflight import missing_key

    variables = missing_key(settings)
    if not variables:
        return None
    model = settings.model
    variable = variables[0]  # the usual one; the others are in the error
    return (f"{variable} is not set: {model} cannot answer.\n"
            "Set it and restart, switch with /model MODEL (ollama/… needs none), or try `agentcli demo`.")
