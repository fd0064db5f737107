"""``pilot.press("a", "b", ...)`` waits for each key but the last to be handled, not for the process to idle.

Textual's pilot follows every key with ``wait_for_idle`` twice: it sleeps in 20 ms steps until a
step passes with under 1 ms of the process's CPU time used, for up to a second. Typing a line of
text (``pilot.press(*"a message")``) so took 40 ms to 2 s a character, most of it asleep.

Between the keys of one ``press`` this waits instead until every message queue of the app and
its screen has handled what the key put there (markers queued behind it, as ``pilot.pause``
does first, in rounds until a round finds every queue empty), however long that takes: a wait
on a condition, with no clock. The keys before the last arrive as a fast typist's do, each
handled before the next is sent. The last key keeps Textual's wait: tests read the app right
after ``press`` returns, some of them what the key started outside the app's queues (a turn
ended, a footer recomposed), which only that idle wait covers. Done for every key, 3 of 420
TUI tests failed in a run under load 9.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import pytest
import textual.app
from textual.app import App
from textual.message_pump import MessagePump

_between_keys: ContextVar[App[object] | None] = ContextVar("_between_keys", default=None)
"""The app whose ``press`` is between two of its keys."""
_ROUNDS = 1000
"""Marker rounds before giving up on the queues emptying (a key that posts messages forever)."""


async def _round(app: App[object], pumps: list[MessagePump]) -> None:
    """Return once each pump has handled what was queued at it before this call (or the app failed)."""
    done = asyncio.Event()
    waiting = 0

    def one_done() -> None:
        nonlocal waiting
        waiting -= 1
        if waiting == 0:
            done.set()

    for pump in pumps:
        if pump.call_later(one_done):
            waiting += 1
    if not waiting:
        return
    failure: asyncio.Event = app._exception_event  # set when the app fails: nothing more is handled
    marked = asyncio.ensure_future(done.wait())
    failed = asyncio.ensure_future(failure.wait())
    await asyncio.wait([marked, failed], return_when=asyncio.FIRST_COMPLETED)
    marked.cancel()
    failed.cancel()


async def _handled(app: App[object]) -> None:
    """Return once every queue of the app and its screen is empty after a round of markers."""
    for _ in range(_ROUNDS):
        pumps: list[MessagePump] = [app, *app.screen.walk_children(with_self=True)]
        await _round(app, pumps)
        failure: asyncio.Event = app._exception_event
        if failure.is_set() or all(pump._message_queue.empty() for pump in pumps):
            return
    raise AssertionError(f"the app's queues were still busy after {_ROUNDS} rounds of a key")


def _wait_for_idle(original: object) -> object:
    async def wait_for_idle(min_sleep: float = 0.02, max_sleep: float = 1) -> None:
        app = _between_keys.get()
        if app is not None:
            await _handled(app)
        else:
            await original(min_sleep, max_sleep)  # type: ignore[operator]

    return wait_for_idle


def _press_keys(original: object) -> object:
    async def press_keys(self: App[object], keys: Iterable[str]) -> None:
        keys = list(keys)
        if not keys:
            return
        token = _between_keys.set(self)
        try:
            await original(self, keys[:-1])  # type: ignore[operator]
        finally:
            _between_keys.reset(token)
        await original(self, keys[-1:])  # type: ignore[operator]

    return press_keys


@contextmanager
def keys_handled_in_turn() -> Iterator[None]:
    """Install the wait between keys for as long as the context lasts."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(textual.app, "wait_for_idle", _wait_for_idle(vars(textual.app)["wait_for_idle"]))
        patch.setattr(App, "_press_keys", _press_keys(App._press_keys))
        yield
