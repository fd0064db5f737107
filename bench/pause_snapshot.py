"""What the snapshot of a call cut off by a pause adds to the pause.

A pause (Ctrl-C, esc in the TUI) kills the running command and, since the interrupted call got a
snapshot of its own, captures what it did before the turn ends (the watcher's hints, no tree
walk). This times ``Session.pause()`` from the call to its return, with a `bash` command that
has written one file and sleeps, in a workspace of N committed files: with snapshots on, against
the same pause with snapshots off (the kill alone) as the baseline, in pairs, alternating.
Prints the medians and the median of the per-pair ratios.

Goal: the capture adds at most a few tens of milliseconds at 10k files (not noticeable).

    python bench/pause_snapshot.py [--files 10000] [--pairs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from agentcli.config import Settings
from agentcli.events import SnapshotCaptured
from agentcli.llm.replay import RecordedCall, RecordedTurn, Recording, ReplayModel
from agentcli.session.factory import new_session


def _workspace(root: Path, files: int) -> Path:
    folder = root / "ws"
    for index in range(files):
        path = folder / f"d{index // 500}" / f"f{index}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {index}\n")
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"], cwd=folder,
                   check=True)
    return folder


CAPTURES: list[float] = []
"""The interrupted calls' captures' own durations (the store's figure), for the report."""


async def _pause_once(folder: Path, data: Path, snapshots: bool) -> float:
    marker = folder / f"m{uuid.uuid4().hex[:8]}.txt"
    sleep = f"sleep 60.{uuid.uuid4().int % 10**6:06d}"
    turn = RecordedTurn(tool_calls=[RecordedCall(name="bash", arguments={"command": f"touch {marker.name}; {sleep}"})])
    client = ReplayModel(Recording(turns=[turn]))
    settings = Settings(snapshots={"enabled": snapshots})  # type: ignore[arg-type]
    session = new_session(folder, settings, model_client=client, data_dir=data, default_permission_mode="all",
                          record=False)
    captured: list[SnapshotCaptured] = []
    session.subscribe(lambda event: captured.append(event) if isinstance(event, SnapshotCaptured) else None)
    await session.send_user_message("go")
    for _ in range(6000):  # the command has written its file (30 s at most)
        if marker.exists():
            break
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)  # the command is in its sleep
    started = time.perf_counter()
    await session.pause()
    elapsed = time.perf_counter() - started
    await session.wait_turn()
    session.close()
    cut = [event for event in captured if event.reason.endswith("(interrupted)")]
    if snapshots and not cut:
        raise SystemExit("no snapshot of the interrupted call: the bench measures nothing")
    CAPTURES.extend(event.duration_s for event in cut)
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = _workspace(root, args.files)
        await _pause_once(folder, root / "data", True)  # warm: the store seeded, the watcher's first walk
        ours, base = [], []
        for pair in range(args.pairs):
            order = (True, False) if pair % 2 == 0 else (False, True)
            for snapshots in order:
                (ours if snapshots else base).append(await _pause_once(folder, root / "data", snapshots))
        ratios = [a / b for a, b in zip(ours, base, strict=True)]
        print(f"{args.files:,} files, {args.pairs} pairs")
        print(f"pause with the interrupted call's snapshot: median {statistics.median(ours) * 1000:.1f} ms")
        print(f"pause with snapshots off (baseline, the kill alone): median {statistics.median(base) * 1000:.1f} ms")
        print(f"of which the capture itself (the store's own figure): median "
              f"{statistics.median(CAPTURES[1:]) * 1000:.1f} ms")
        print(f"ratio (median of pairs): {statistics.median(ratios):.2f}; added: "
              f"{(statistics.median(ours) - statistics.median(base)) * 1000:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
