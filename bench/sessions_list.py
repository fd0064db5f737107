"""How fast `agentcli sessions` lists many sessions.

Creates N sessions (meta.json plus a 200-event log each) in a temporary data directory, then times
`list_sessions` in this process and the whole `agentcli sessions --all` command in a fresh
process, against a baseline in the same run: reading the same meta files with plain `json.load`.
Goal: 1,000 sessions listed in under a second.

    python bench/sessions_list.py [--sessions 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from agentcli.events import SCHEMA_VERSION, TextDelta, event_to_dict
from agentcli.session.log import SessionMeta, list_sessions


def populate(data: Path, count: int) -> None:
    line = json.dumps({"v": SCHEMA_VERSION, **event_to_dict(TextDelta(text="x" * 80))}) + "\n"
    now = datetime.now(timezone.utc)
    for n in range(count):
        directory = data / "sessions" / f"s{n:06d}"
        directory.mkdir(parents=True)
        meta = SessionMeta(id=directory.name, workspace=f"/work/project{n % 7}", created=now - timedelta(minutes=n),
                           updated=now - timedelta(minutes=n), title=f"task number {n}", model="openai/gpt-4o",
                           outcome="completed", steps=12, tool_calls=30, input_tokens=50_000, output_tokens=3_000,
                           cost=0.12)
        (directory / "meta.json").write_text(meta.model_dump_json(by_alias=True))
        (directory / "events.jsonl").write_text(line * 200)


def median_time(fn, repeats: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    count = parser.parse_args().sessions
    home = Path(tempfile.mkdtemp(prefix="agentcli-bench-sessions-"))
    data = home / "agentcli"
    populate(data, count)

    def baseline() -> None:
        for directory in (data / "sessions").iterdir():
            json.loads((directory / "meta.json").read_text())

    ours = median_time(lambda: list_sessions(data))
    raw = median_time(baseline)
    env = {**os.environ, "XDG_DATA_HOME": str(home), "COLUMNS": "120"}
    command = median_time(
        lambda: subprocess.run([sys.executable, "-m", "agentcli", "sessions", "--all"], env=env,
                               capture_output=True, check=True),
        repeats=3,
    )
    empty_env = {**env, "XDG_DATA_HOME": str(home / "none")}
    startup = median_time(
        lambda: subprocess.run([sys.executable, "-m", "agentcli", "sessions", "--all"], env=empty_env,
                               capture_output=True, check=True),
        repeats=3,
    )
    print(f"sessions: {count}")
    print(f"list_sessions: {ours * 1000:.1f} ms   baseline json.load of every meta.json: {raw * 1000:.1f} ms   "
          f"ratio {ours / raw:.1f}x")
    print(f"`agentcli sessions --all`: {command * 1000:.0f} ms (of which process start with no sessions: "
          f"{startup * 1000:.0f} ms)   goal: under 1000 ms")


if __name__ == "__main__":
    main()
