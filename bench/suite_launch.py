"""What the test suite's agentcli processes cost: forked from a server that has imported agentcli
and litellm (tests/support/agentcli_process.py) against a fresh interpreter each (the baseline).

Two measurements, each in pairs that alternate which side runs first, so a machine whose load
changes during the run weighs on both sides alike:

* ``launch``: one ``agentcli run`` against the suite's local OpenAI-compatible server, to the end
  of a one-step task: the wall time the test waits for it.
* ``module``: one pytest run (one worker, ``-n 0``) of the modules given (by default the ones
  that start the most processes), with ``TESTS_FRESH_AGENTCLI=1`` as the baseline.

Each line prints both sides and forked ÷ fresh; the summary gives the median of the per-pair
ratios. Goal: the whole suite's pytest part ≤ 220 s on 2 quiet cores (it took 278-282 s before).

    python bench/suite_launch.py [--pairs 5] [--module-pairs 2] [MODULE ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import agentcli_process  # noqa: E402 - the repository root is on the path first
from tests.support.openai_server import Call, OpenAIServer, Reply  # noqa: E402

MODULES = ["tests/e2e/test_resume.py", "tests/e2e/test_permissions.py"]


def _launch(server: OpenAIServer, workspace: Path, fresh: bool) -> float:
    server.add(Reply(calls=[Call("complete", {"summary": "done"})]))
    began = time.perf_counter()
    done = agentcli_process.run(["run", "go", "--model", "openai/m", "--api-base", server.base_url, "-o", "jsonl"],
                                cwd=workspace, fresh=fresh)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"agentcli run failed ({done.returncode}): {done.stderr[-2000:]}")
    return took


def _module(modules: list[str], fresh: bool) -> float:
    env = {**os.environ, "CI": "true", "TESTS_FRESH_AGENTCLI": "1" if fresh else "0"}
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", *modules],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"pytest failed:\n{done.stdout[-3000:]}")
    return took


def _pairs(label: str, count: int, measure: object) -> list[float]:
    ratios = []
    for number in range(count):
        order = (False, True) if number % 2 == 0 else (True, False)
        took = {fresh: measure(fresh) for fresh in order}  # type: ignore[operator]
        ratios.append(took[False] / took[True])
        print(f"{label} pair {number + 1}: forked {took[False]:.2f} s, fresh {took[True]:.2f} s, "
              f"ratio {ratios[-1]:.2f}", flush=True)
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5, help="pairs of single launches")
    parser.add_argument("--module-pairs", type=int, default=2, help="pairs of pytest runs (0: none)")
    parser.add_argument("modules", nargs="*", default=MODULES, help="test modules for the pytest pairs")
    options = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")

    with tempfile.TemporaryDirectory() as folder:
        os.environ["XDG_DATA_HOME"] = str(Path(folder) / "data")
        os.environ["XDG_CONFIG_HOME"] = str(Path(folder) / "config")
        workspace = Path(folder) / "ws"
        workspace.mkdir()
        server = OpenAIServer().start()
        try:
            _launch(server, workspace, fresh=False)  # starts the fork server: paid once per pytest worker
            launches = _pairs("launch", options.pairs, lambda fresh: _launch(server, workspace, fresh))
        finally:
            server.stop()
    modules = _pairs("module", options.module_pairs, lambda fresh: _module(options.modules, fresh))

    print(f"launch: forked ÷ fresh, median of {len(launches)} pairs: {statistics.median(launches):.2f}")
    if modules:
        print(f"{' '.join(options.modules)}: forked ÷ fresh, median of {len(modules)} pairs: "
              f"{statistics.median(modules):.2f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
