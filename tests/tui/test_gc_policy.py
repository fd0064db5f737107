"""The collector's policy while the TUI runs (agentcli/tui/gc_policy.py).

Survivors of a full collection are frozen (so later full passes skip them); garbage is never
frozen; what died after being frozen is freed once the app is idle, and not while it is busy
unless the frozen objects outgrow the hard bound; and the app installs the policy, feeds it its
activity and removes it on exit.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.llm.replay import ReplayModel
from agentcli.tui.gc_policy import GcPolicy
from tests.tui.helpers import make_app, make_session, recording, wait_for


class Node:
    """A reference cycle the collector, not reference counting, has to free."""

    def __init__(self) -> None:
        self.me = self


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def frozen(obj: object) -> bool:
    """Tracked but in no generation the collector walks: in the permanent one."""
    return gc.is_tracked(obj) and not any(o is obj for o in gc.get_objects())


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def policy(clock: Clock) -> Iterator[GcPolicy]:
    made = GcPolicy(idle_seconds=5.0, release_growth=0, hard_growth=10**9, clock=clock)
    gc.disable()  # only the tests' own passes: an automatic one could freeze what a test drops next
    made.install()
    try:
        yield made
    finally:
        made.uninstall()
        gc.unfreeze()  # leave the collector as other tests expect it
        gc.enable()


def test_survivors_of_a_full_pass_are_frozen_and_garbage_is_not(policy: GcPolicy) -> None:
    kept = Node()
    dropped = Node()
    dead = weakref.ref(dropped)
    del dropped
    assert not frozen(kept)
    gc.collect()
    assert frozen(kept), "a live object that survived a full pass is left out of later ones"
    assert dead() is None, "garbage found by the pass is freed, not frozen"
    assert policy.stats.freezes >= 1 and policy.growth > 0


def test_young_passes_freeze_nothing(policy: GcPolicy) -> None:
    kept = Node()
    gc.collect(0)
    gc.collect(1)
    assert not frozen(kept)
    assert policy.stats.freezes == 0


def test_garbage_made_after_a_freeze_is_freed_at_idle(policy: GcPolicy, clock: Clock) -> None:
    turn_record = Node()
    gc.collect()  # mid-turn: the record is alive, so it is frozen
    died = weakref.ref(turn_record)
    del turn_record  # then dropped: unreachable, but frozen, so no pass sees it
    gc.collect()
    assert died() is not None, "the policy's cost: frozen garbage waits for the release"

    assert not policy.tick(busy=True)
    clock.now += 60
    assert not policy.tick(busy=True), "never released while a turn runs"
    assert died() is not None
    clock.now += 4.9
    assert not policy.tick(busy=False), "not idle long enough yet"
    clock.now += 0.2
    assert policy.tick(busy=False)
    assert died() is None, "released: unfrozen, collected"
    assert policy.stats.releases == 1
    assert policy.growth == 0


def test_a_key_or_mouse_event_postpones_the_release(policy: GcPolicy, clock: Clock) -> None:
    gc.collect()
    clock.now += 10
    policy.note_activity()
    assert policy.idle_for == 0
    assert not policy.tick(busy=False)
    clock.now += 5
    assert policy.tick(busy=False)


def test_small_growth_waits_and_a_turn_that_never_ends_is_bounded(policy: GcPolicy, clock: Clock) -> None:
    made = policy
    made.release_growth = 10**9
    record = Node()
    gc.collect()
    died = weakref.ref(record)
    del record
    clock.now += 60
    assert not made.tick(busy=False), "too little frozen to be worth a long pass"
    made.hard_growth = 0
    assert made.tick(busy=True), "past the hard bound it runs even mid-turn"
    assert died() is None


def test_the_release_keeps_live_objects_frozen_after_it(policy: GcPolicy, clock: Clock) -> None:
    kept = Node()
    gc.collect()
    clock.now += 10
    assert policy.tick(busy=False)
    assert frozen(kept), "what survives the release's pass is frozen again"


def test_uninstall_hands_frozen_objects_back(policy: GcPolicy) -> None:
    made = policy
    record = Node()
    gc.collect()
    assert frozen(record)
    made.uninstall()
    assert not frozen(record)
    died = weakref.ref(record)
    del record
    gc.collect()
    assert died() is None
    assert made._after_collection not in gc.callbacks


async def test_the_app_installs_the_policy_and_releases_a_turns_garbage_when_idle(project: Path) -> None:
    clock = Clock()
    session = make_session(project, ReplayModel(recording(("Done.", [("complete", {"summary": "ok"})]))))
    app = make_app(project, session)
    app.gc_policy = GcPolicy(idle_seconds=5.0, release_growth=0, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert app.gc_policy.installed
        await pilot.press("h")  # input is activity
        assert app.gc_policy.idle_for == 0
        record = Node()
        gc.collect()
        assert frozen(record)
        died = weakref.ref(record)
        del record
        await pilot.press("i")
        clock.now += 6  # the app's own half-second tick sees it idle from here
        await wait_for(pilot, lambda: died() is None, what="the idle release")
        assert app.gc_policy.stats.releases >= 1
    assert not app.gc_policy.installed
    gc.unfreeze()


def test_a_terminal_that_lost_focus_need_not_wait(policy: GcPolicy) -> None:
    record = Node()
    gc.collect()
    died = weakref.ref(record)
    del record
    assert not policy.tick(busy=True, away=True), "a running turn still comes first"
    assert policy.tick(busy=False, away=True)
    assert died() is None


def test_uninstall_right_after_a_release_still_hands_frozen_objects_back(policy: GcPolicy, clock: Clock) -> None:
    record = Node()
    gc.collect()
    clock.now += 10
    assert policy.tick(busy=False)  # the release's own pass froze its survivors again
    assert frozen(record) and policy.growth == 0
    policy.uninstall()
    assert not frozen(record), "an app closed just after a release leaves nothing of its own frozen"
    died = weakref.ref(record)
    del record
    gc.collect()
    assert died() is None
