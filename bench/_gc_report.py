"""What the TUI's collector policy (agentcli/tui/gc_policy.py) did in a bench, and what it kept.

Shared by tui_streaming.py and tui_history.py: resident memory, the frozen count, the policy's
freezes, and how long the release the app runs at idle takes at the end of the run (it walks
every object, start-up's too).
"""

from __future__ import annotations

import gc
import resource
import time
from pathlib import Path

from agentcli.tui.gc_policy import GcPolicy


class PolicyOff(GcPolicy):
    """The app without the policy (``--no-gc-policy``): assigned as ``app.gc_policy`` before it runs."""

    def install(self) -> None:
        pass


def rss_mb() -> float:
    """Resident memory now, in MB (the peak where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def state() -> str:
    return f"RSS {rss_mb():.0f} MB, frozen {gc.get_freeze_count():,}, tracked {len(gc.get_objects()):,}"


def report_end(policy: GcPolicy, *, enabled: bool) -> None:
    """Print what the policy did, then run what idle would run (a release or, without the
    policy, one full collection) and time it, with memory before and after."""
    stats = policy.stats
    if enabled:
        print(f"gc policy: on; {stats.freezes} full passes' survivors frozen ({policy.growth:,} objects since "
              f"the last release), {stats.releases} releases during the run")
    else:
        print("gc policy: off (--no-gc-policy)")
    print(f"  at the end: {state()}")
    started = time.perf_counter()
    if enabled:
        found = policy.release()
        what = "the idle release (unfreeze everything, collect, freeze)"
    else:
        found = gc.collect()
        what = "one full collection (what idle would cost without the policy)"
    took = time.perf_counter() - started
    print(f"  {what}: {took * 1000:.0f} ms, {found:,} unreachable objects; after it: {state()}")
