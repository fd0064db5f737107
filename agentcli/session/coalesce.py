"""Batching streamed text so front ends and the log see a few deltas a second, not one per token."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

DEFAULT_INTERVAL_S = 0.05


class TextCoalescer:
    """Collects text pieces and hands them on at most every ``interval`` seconds.

    A timer flushes what is pending when the stream stalls, so text never waits for the next
    token to be shown.
    """

    def __init__(self, deliver: Callable[[str], None], interval: float = DEFAULT_INTERVAL_S) -> None:
        self._deliver = deliver
        self._interval = interval
        self._pending: list[str] = []
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def add(self, text: str) -> None:
        self._pending.append(text)
        now = time.monotonic()
        if now - self._last >= self._interval:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._interval - (now - self._last), self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            text = "".join(self._pending)
            self._pending.clear()
            self._last = time.monotonic()
            self._deliver(text)
