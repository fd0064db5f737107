"""What ``race`` and ``batch`` share: choosing the backend, running a fleet coroutine under Ctrl-C.

Light at import, like every command module: the fleet, Ray and pydantic load when a command runs.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from agentcli.cli.common import fail

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.fleet.backends import Backend

T = TypeVar("T")

EXIT_INTERRUPTED = 130

RayOpt = Annotated[str | None, typer.Option(
    "--ray", help="Run on Ray: auto (the cluster this machine is part of), HOST:PORT, ray://HOST:10001, or local.")]


def split_list(value: str | None) -> list[str]:
    """``a,b, c`` → ``["a", "b", "c"]``; None or empty → ``[]``."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def backend_for(ray: str | None, settings: Settings) -> Backend:
    """Local subprocesses, or Ray at ``--ray`` (else ``[fleet] ray_address``); exit 2 without Ray installed."""
    address = ray or settings.fleet.ray_address
    if not address:
        from agentcli.fleet.backends import LocalBackend

        return LocalBackend()
    from agentcli.fleet.ray_backend import RayBackend, RayUnavailable

    try:
        return RayBackend(address, pip=settings.fleet.ray_pip)
    except RayUnavailable as error:
        raise fail(str(error)) from None


def run_cancellable(coroutine: Coroutine[Any, Any, T]) -> T | None:
    """Runs ``coroutine``; Ctrl-C cancels it (its sessions pause and their logs are kept): None then."""

    async def main() -> T | None:
        task = asyncio.ensure_future(coroutine)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            return None
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    return asyncio.run(main())
