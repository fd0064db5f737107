"""The cyclic garbage collector's policy while the TUI runs: full passes walk only what is new.

Python 3.11 runs a full (generation 2) collection when the middle generation has been collected
ten times and the objects promoted since the last full pass exceed a quarter of those that
survived it. Such a pass walks every tracked object that is not frozen: the mounted blocks, their
styles and drawn lines, the session's records. While a reply streamed those passes were the only
stalls over 100 ms left (up to ~200 ms), and over a 300-step turn they reached ~700 ms.

The policy: right after a full pass (a ``gc.callbacks`` entry, phase "stop", generation 2)
every object still tracked is reachable, so ``gc.freeze()`` then moves only live objects out of
later passes, and each later pass walks only what was promoted since. Python sets the next
pass's trigger from the survivors it counted before the freeze, so passes stay about as frequent
as before and much shorter (30-60 ms).

The cost: an object frozen while alive that later becomes part of an unreachable cycle (an
unmounted block and its styles, a dropped record) is not freed until it is unfrozen: ~110,000
objects (~15 MB) per 20,000 streamed tokens, ~385,000 (~60 MB) per 300-step turn. So once the
app is idle (no turn running, nothing being drawn, no key or mouse event for ``idle_seconds``,
or the terminal reports it lost focus) and the policy has frozen ``release_growth`` objects since
the last release, ``release`` unfreezes everything, collects once and freezes the survivors
again. That pass walks every object, start-up's too: CPython 3.11 cannot unfreeze a part, and
nothing but the permanent generation keeps an object out of a full pass. It held the loop
0.5-0.6 s after a 20,000-token reply (litellm loaded) and 1.6 s after a 300-step turn, which is
why it waits for idle. A turn that never ends still has a bound: past ``hard_growth`` the release
runs mid-turn, one long pass instead of memory without limit.

Rejected, measured (bench/README.md): no automatic full passes at all during a turn and one at
idle (``gc.set_threshold`` with a huge third value). Its idle pass skips start-up's frozen
objects, but every piece of cyclic garbage waits for it: more memory held by the end of a
20,000-token reply (138 MB against 103) and an idle pass as long as the release (it frees twice
as much).

Reference counting frees everything not in a cycle, frozen or not, as always.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field

IDLE_SECONDS = 10.0
"""How long the app must be idle (no turn, no key or mouse event) before frozen garbage is
released: the release holds the loop 0.5-1.6 s (bench/README.md), so it waits for a pause
longer than the one between reading a reply and typing the next prompt."""
RELEASE_GROWTH = 1_000_000
"""Objects frozen since the last release (counted at each freeze; many die acyclically later)
that make a release worth its pass at idle: a bit more than one 20,000-token reply (851k), less
than a 300-step turn (2.4 million). Each release walks everything the process holds, so a lower
bound means more of those pauses, not shorter ones (bench/README.md)."""
HARD_GROWTH = 5_000_000
"""Objects frozen since the last release past which it runs even mid-turn: a turn of ~600 steps
or ~8 minutes of streaming at 200 tokens/s, by then ~0.8 million frozen garbage objects."""


@dataclass
class GcStats:
    """What the policy did, for benches and tests."""

    full_passes: int = 0
    """Full collections seen (the releases' own included)."""
    freezes: int = 0
    """Times the survivors of a full pass were frozen."""
    releases: int = 0
    """Times everything was unfrozen and collected."""
    release_seconds: list[float] = field(default_factory=list)
    """How long each release held the program (its collection and freeze)."""
    released_objects: list[int] = field(default_factory=list)
    """Unreachable objects each release freed."""


class GcPolicy:
    """Freezes the survivors of each full collection; releases them when the app is idle."""

    def __init__(self, *, idle_seconds: float = IDLE_SECONDS, release_growth: int = RELEASE_GROWTH,
                 hard_growth: int = HARD_GROWTH, clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_seconds = idle_seconds
        self.release_growth = release_growth
        self.hard_growth = hard_growth
        self._clock = clock
        self._installed = False
        self._grown = 0
        """Objects this policy froze since install or the last release. Counted here rather than
        by ``gc.get_freeze_count()``, which walks the whole frozen list and also counts what others
        froze (litellm's warm-up freezes ~300k objects of its import: not garbage to wait for)."""
        self._froze = False
        """Whether anything this policy froze may still be frozen: a release's own pass freezes
        its survivors again, so ``growth`` being 0 after it does not mean nothing is."""
        self._last_activity = clock()
        self.stats = GcStats()

    @property
    def installed(self) -> bool:
        return self._installed

    @property
    def growth(self) -> int:
        """Objects frozen since install or the last release (some may be garbage by now)."""
        return self._grown

    def install(self) -> None:
        """Start freezing the survivors of full collections (idempotent)."""
        if self._installed:
            return
        self._installed = True
        self._grown = 0
        self._last_activity = self._clock()
        gc.callbacks.append(self._after_collection)

    def uninstall(self) -> None:
        """Stop, and hand what the policy froze back to the collector (an app closed inside a
        longer-lived process, as in tests, leaves its garbage collectable)."""
        if not self._installed:
            return
        self._installed = False
        gc.callbacks.remove(self._after_collection)
        if self._froze:
            self._grown = 0
            self._froze = False
            # Unfreezing cannot spare what start-up froze; the process is ending or moving on.
            gc.unfreeze()

    @property
    def idle_for(self) -> float:
        """Seconds since the last activity the app reported."""
        return self._clock() - self._last_activity

    def note_activity(self) -> None:
        """The user did something (a key, the mouse): not idle now."""
        self._last_activity = self._clock()

    def tick(self, *, busy: bool, away: bool = False) -> bool:
        """Called regularly by the app.

        Args:
            busy: A turn runs or a reply is still being drawn.
            away: The terminal reported that it lost focus: nobody is typing here, so the
                release need not wait for ``idle_seconds``.

        Returns:
            Whether a release ran.
        """
        now = self._clock()
        if busy:
            self._last_activity = now
        growth = self.growth
        idle = not busy and (away or now - self._last_activity >= self.idle_seconds)
        if growth > self.hard_growth or (growth > self.release_growth and idle):
            self.release()
            return True
        return False

    def release(self) -> int:
        """Unfreeze everything, collect once (the callback freezes the survivors again).

        Returns:
            The number of unreachable objects the collection found.
        """
        started = time.perf_counter()
        gc.unfreeze()
        found = gc.collect()
        if not self._installed:
            gc.freeze()  # the callback that would have is gone; keep start-up's objects out
        self._grown = 0
        self.stats.releases += 1
        self.stats.release_seconds.append(time.perf_counter() - started)
        self.stats.released_objects.append(found)
        return found

    def _after_collection(self, phase: str, info: dict[str, int]) -> None:
        if phase != "stop" or info["generation"] != 2:
            return
        self.stats.full_passes += 1
        # Everything still tracked survived this pass, so it is reachable now; the young
        # generations are empty after a full pass, so only those survivors move. Listing them
        # costs a fraction of the pass that just walked them.
        self._grown += len(gc.get_objects(generation=2))
        gc.freeze()
        self._froze = True
        self.stats.freezes += 1
