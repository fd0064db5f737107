"""The size budget is kept when a session closes its store, without a manual gc."""

from __future__ import annotations

import os
from pathlib import Path

from snaphelpers import write

from agentcli.snapshots import SnapshotStore


def test_closing_an_over_budget_store_brings_it_under(repo: Path, data_dir: Path) -> None:
    budget = 700 * 1024
    store = SnapshotStore(repo, data_dir, budget_bytes=budget)
    for number in range(6):
        write(repo / "blob.bin", os.urandom(200 * 1024))  # incompressible: ~200 KiB a snapshot
        store.capture(session_id="s", reason=f"{number}")
    assert store.size_bytes() > budget
    store.close()
    assert store.size_bytes() <= budget
    kept = [snap.seq for snap in store.timeline("s")]
    assert kept and kept == list(range(7 - len(kept), 7))  # the newest kept, the oldest dropped
    assert store.capture(session_id="s", reason="still usable").tree


def test_closing_a_store_under_budget_drops_nothing(repo: Path, data_dir: Path) -> None:
    store = SnapshotStore(repo, data_dir, budget_bytes=64 * 1024 * 1024)
    for number in range(3):
        write(repo / "note.txt", f"{number}\n")
        store.capture(session_id="s", reason=f"{number}")
    store.close()
    assert [snap.seq for snap in store.timeline("s")] == [1, 2, 3]
