"""Fleet: batch throughput with --jobs 1, --jobs 2 and on a local Ray head; per-attempt overhead.

Part 1 builds a repository of ``--files`` files and measures, per attempt, writing the snapshot's
tree into a fresh directory (against ``shutil.copytree`` of the same working tree, the obvious
alternative, in the same run), capturing it as the base, and collecting the result after one
file changed. The goal: materializing plus collecting under 1 s at 10k files.

Part 2 runs ``agentcli batch`` on ``--tasks`` scripted tasks (the local test server answers each
reply after ``--reply-delay`` seconds, standing in for a model's latency) with ``--jobs 1``,
``--jobs 2`` and ``--ray local``, and prints wall times and the speed-up against ``--jobs 1``.
Every session is a process that imports litellm (~5 s of CPU), so on a 2-core machine that cost,
not the model's latency, bounds the speed-up.

    .venv/bin/python bench/fleet.py [--files 10000] [--tasks 8] [--reply-delay 0.5] [--no-ray] [--overhead-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.fleet.workdir import capture_workspace, collect, from_snapshot  # noqa: E402
from tests.support.openai_server import Call, OpenAIServer, Reply  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--reply-delay", type=float, default=0.5)
    parser.add_argument("--no-ray", action="store_true", help="Skip the Ray run.")
    parser.add_argument("--overhead-only", action="store_true", help="Only part 1: the per-attempt overhead.")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-fleet-")).resolve()
    os.environ["XDG_DATA_HOME"] = str(root / "data")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (the figures shift with it; "
          "the ratios less)")
    try:
        overhead(root, args.files, args.rounds)
        if not args.overhead_only:
            throughput(root, args.tasks, args.reply_delay, ray=not args.no_ray)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _repo(folder: Path, files: int) -> Path:
    folder.mkdir(parents=True)
    per_dir = 100
    for number in range(files):
        sub = folder / f"pkg{number // per_dir:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"mod{number % per_dir:03d}.py").write_text(f"VALUE = {number}\n" + "x = 1\n" * 30)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "init"]):
        subprocess.run(argv, cwd=folder, env=GIT_ENV, check=True)
    (folder / "pkg000" / "mod000.py").write_text("VALUE = 'uncommitted'\n")
    return folder


def overhead(root: Path, files: int, rounds: int) -> None:
    data = root / "data" / "agentcli"
    workspace = _repo(root / "big", files)
    tree, _ = capture_workspace(workspace, data, "bench-race", "race start")
    writes, captures, collects, copies = [], [], [], []
    for round_number in range(rounds):
        started = time.perf_counter()
        shutil.copytree(workspace, root / f"copy{round_number}", ignore=shutil.ignore_patterns(".git"), symlinks=True)
        copies.append(time.perf_counter() - started)
        workdir = root / "attempts" / str(round_number) / "work"
        prepared = from_snapshot(workspace, tree, workdir, data)
        writes.append(prepared.write_s)
        captures.append(prepared.capture_s)
        (workdir / "pkg001" / "mod001.py").write_text("VALUE = 'changed by the attempt'\n")
        collects.append(collect(workdir, data).seconds)
    write, capture, gather, copy = (statistics.median(v) for v in (writes, captures, collects, copies))
    print(f"per attempt, {files:,} files (median of {rounds}):")
    print(f"  materialize   {write:6.3f} s   (shutil.copytree of the working tree: {copy:.3f} s; "
          f"ratio {write / copy:.2f}x)")
    print(f"  base capture  {capture:6.3f} s   (the session's own first capture, moved ahead of it)")
    print(f"  collect       {gather:6.3f} s")
    total = write + gather
    print(f"  overhead      {total:6.3f} s   materialize + collect; goal < 1 s: {'met' if total < 1 else 'NOT met'}")


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "calc.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "init"]):
        subprocess.run(argv, cwd=folder, env=GIT_ENV, check=True)
    return folder


def throughput(root: Path, tasks: int, delay: float, *, ray: bool) -> None:
    project = _project(root / "project")
    lines = [{"id": f"t{n}", "workspace": str(project), "prompt": f"task {n}",
              "checks": ["python3 -c 'import calc; assert calc.add(1, 2) == 3'"]} for n in range(tasks)]
    tasks_file = root / "tasks.jsonl"
    tasks_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    text = "Working on it."
    pace = delay / max(1, len(text) // 2)

    def answer(body: dict[str, Any]) -> Reply:
        said = sum(1 for m in body["messages"] if m["role"] == "assistant")
        call = Call("write_file", {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}) \
            if said == 0 else Call("complete", {"summary": "done"})
        return Reply(text=text, calls=[call], chunk_size=2, delay_s=pace)

    runs: list[tuple[str, list[str]]] = [("--jobs 1", ["--jobs", "1"]), ("--jobs 2", ["--jobs", "2"])]
    if ray:
        try:
            import ray as _  # noqa: F401
            runs.append(("ray local (2 CPUs)", ["--ray", "local"]))
        except ImportError:
            print("ray is not installed (pip install 'agentcli[ray]'): skipping the Ray run")
    times: dict[str, float] = {}
    with OpenAIServer() as server:
        server.start()
        server.default = answer
        for label, flags in runs:
            results = root / f"results-{len(times)}.jsonl"
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "agentcli", "batch", str(tasks_file), "--results",
                                   str(results), "--model", "openai/bench", "--api-base", server.base_url, *flags],
                                  capture_output=True, text=True)
            times[label] = time.perf_counter() - started
            statuses = [json.loads(line)["status"] for line in results.read_text().splitlines()] \
                if results.exists() else []
            if done.returncode != 0 or statuses.count("passed") != tasks:
                print(f"{label}: exit {done.returncode}, {statuses}\n{done.stderr[-2000:]}")
    base = times["--jobs 1"]
    print(f"batch of {tasks} scripted tasks ({delay:.1f} s per model reply, 2 replies each):")
    for label, seconds in times.items():
        print(f"  {label:<20} {seconds:7.1f} s   speed-up {base / seconds:4.2f}x")


if __name__ == "__main__":
    main()
