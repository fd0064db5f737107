"""Run every performance bench of issue 20 in one go, quiet or beside a CPU hog, and keep the output.

    python bench/run_all.py                 # a quiet run: nothing else should use the machine
    python bench/run_all.py --hog           # the same with one busy process beside each bench
    python bench/run_all.py --quick         # smaller sizes and fewer pairs, to try the setup

Each bench prints its own paired ratios and its baseline's command; this script only runs them
one after another, records the load average before each, and writes everything to
``bench/out/YYYYmmdd-HHMMSS-{quiet,hog}/`` (one ``NAME.txt`` per bench plus ``summary.txt``).
The hog is a Python busy loop (``HOG``): one core of a 2-core machine kept busy, the case the
issue asks the figures to hold in. It runs in a session of its own, as a build in another terminal
does: where Linux groups tasks by session for the scheduler (autogroups, on by default), a hog in
the bench's own session would share that session's CPU thread by thread with the bench, git and
agentcli, which favours whichever side starts the most threads (git's `add` starts up to 20) and is
not how another program competes with agentcli.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Bench:
    name: str
    args: tuple[str, ...]
    quick_args: tuple[str, ...]


BENCHES = (
    Bench("tui_startup", ("--runs", "10"), ("--runs", "3")),
    Bench("tui_streaming_200", ("--rate", "200"), ("--rate", "200", "--tokens", "4000")),
    Bench("tui_streaming_ceiling", (), ("--tokens", "4000")),
    Bench("tui_history", (), ("--messages", "500")),
    Bench("tui_long_turn", ("--steps", "300"), ("--steps", "30")),
    Bench("step_cost", ("--pairs", "2"), ("--steps", "2", "50", "--pairs", "1")),
    Bench("snapshots", ("--sizes", "1000", "10000", "50000", "100000", "--repeat", "3"),
          ("--sizes", "1000", "10000", "--repeat", "2")),
)


HOG = "import os\nparent = os.getppid()\nwhile os.getppid() == parent: pass"
"""A busy loop that ends with its runner: in a session of its own, a kill of the runner's
process group or a hang-up would not reach it, and it would skew every later measurement."""


def script_of(bench: Bench) -> Path:
    return BENCH / (bench.name.removesuffix("_200").removesuffix("_ceiling") + ".py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hog", action="store_true", help="keep one busy process running beside each bench")
    parser.add_argument("--quick", action="store_true", help="small sizes, few pairs (to try the setup)")
    parser.add_argument("--only", nargs="+", default=None, help="run only these benches (names as listed)")
    args = parser.parse_args()
    label = "hog" if args.hog else "quiet"
    out = BENCH / "out" / f"{time.strftime('%Y%m%d-%H%M%S')}-{label}"
    out.mkdir(parents=True)
    summary = [f"{label} run, {os.cpu_count()} cores, python {sys.version.split()[0]}"]
    for bench in BENCHES:
        if args.only and bench.name not in args.only:
            continue
        command = [sys.executable, str(script_of(bench)), *(bench.quick_args if args.quick else bench.args)]
        hog = (
            subprocess.Popen([sys.executable, "-c", HOG], start_new_session=True) if args.hog else None
        )
        load = os.getloadavg()[0]
        began = time.monotonic()
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        finally:
            if hog is not None:
                hog.kill()
                hog.wait()
        took = time.monotonic() - began
        text = f"$ {' '.join(command[1:])}\n# load average before: {load:.2f}; took {took:.0f} s\n\n"
        text += done.stdout + (f"\n--- stderr ---\n{done.stderr}" if done.returncode else "")
        (out / f"{bench.name}.txt").write_text(text)
        line = f"{bench.name}: exit {done.returncode}, {took:.0f} s, load before {load:.2f}"
        summary.append(line)
        print(line, flush=True)
    (out / "summary.txt").write_text("\n".join(summary) + "\n")
    print(f"output in {out}")


if __name__ == "__main__":
    main()
