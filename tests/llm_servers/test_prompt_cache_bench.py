"""The prompt-cache benchmark runs (a few steps) and prints its figures; no figure is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_benchmark_runs_both_sessions_and_reports_its_figures() -> None:
    script = Path(__file__).resolve().parents[2] / "bench" / "prompt_cache.py"
    run = subprocess.run([sys.executable, str(script), "--steps", "5", "--warmup", "2"],
                         capture_output=True, text=True, timeout=180)

    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "5 read_file steps + complete (6 model calls)" in out
    assert "outcomes: completed / completed" in out
    for figure in ("input billed at full price", "cache reads", "cache writes", "input read from cache after call 2",
                   "cost (litellm prices)", "read from cache after the first 2 calls:", "cost with caching:"):
        assert figure in out, figure
