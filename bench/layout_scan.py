"""What recording a snapshot's layout (modes, empty folders) costs next to the capture itself.

Turn-start captures and restores also walk the workspace for what a tree cannot hold
(`agentcli/snapshots/layout.py`). This prints, for a generated workspace of N files in a git
repository, the time of a no-change capture, of the layout walk, and their ratio: the walk is
the extra a turn's start pays.

    python bench/layout_scan.py [--files 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots.layout import scan_layout
from agentcli.snapshots.restore import umask


def _workspace(root: Path, files: int) -> Path:
    ws = root / "ws"
    for number in range(files):
        path = ws / f"pkg{number % 50}" / f"mod{number % 7}" / f"f{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"x = {number}\n")
    (ws / "empty").mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def _median(action: object, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        ws = _workspace(Path(scratch), options.files)
        store = SnapshotStore(ws, Path(scratch) / "data")
        store.capture(session_id="bench", reason="first")
        mask = umask()
        capture = _median(lambda: store.capture(session_id="bench", reason="no change"), options.rounds)
        walk = _median(lambda: scan_layout(ws, mask), options.rounds)
        print(f"{options.files} files: no-change capture {capture * 1000:.0f} ms, "
              f"layout walk {walk * 1000:.0f} ms, walk/capture {walk / capture:.2f}x")


if __name__ == "__main__":
    main()
