"""Watching a transport: knowing when the server's side ends, without waiting for a call.

The SDK's client notices a closed connection only when a request fails; a stdio server that
exited between calls would look alive until then. Wrapping the read stream the transport hands
to the client tells the connection the moment that stream ends, so the restart happens then.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any


@contextlib.asynccontextmanager
async def watched(transport: Any, on_end: Callable[[], None]) -> AsyncIterator[tuple[Any, Any]]:
    """``transport`` with its read side watched: ``on_end`` is called when the server's side
    ends (a stdio server that exited, an HTTP session that was dropped), so a server that dies
    between calls is restarted then, not found dead by the next call."""
    async with transport as (read, write):
        yield _WatchedRead(read, on_end), write


class _WatchedRead:
    """A read stream that reports its end; everything else is the SDK's stream's."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def first_of(*waits: Coroutine[Any, Any, Any]) -> None:
    """Wait until the first of ``waits`` finishes; the others are cancelled."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
