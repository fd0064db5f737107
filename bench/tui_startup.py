"""Time from launch to the TUI's first frame, next to a minimal Textual app launched the same way.

Each app runs in a fresh interpreter (``python -c``), headless, and reports the wall-clock time
of its first frame (the first refresh after mount) relative to the moment the parent started
the process; then it exits. agentcli is launched through its real command line
(``agentcli --cwd WORKSPACE --model M``: typer, the config files, the workspace checks, then the
app); only the terminal test and the app class (to report the frame) are swapped. A litellm
model is configured, so its background import starts after the first frame. A second figure for
agentcli is the moment the session is attached (created after the first frame).

Bytecode is cached as in an installed package (``PYTHONDONTWRITEBYTECODE`` is dropped for the
children; the warm-up runs write the caches), so neither app pays for compiling its source.

In both apps the footer's keys are composed just after the first frame: Textual does that when
the active bindings change, and agentcli focuses its prompt just after its first frame.

Goal: first frame under 1 s and under 1.5x the minimal app.

    python bench/tui_startup.py [--runs 7]
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
from pathlib import Path

MINIMAL = r"""
import sys, time
from textual.app import App
from textual.widgets import Footer, Header, Static
print(f"IMPORTED {time.time():.6f}", flush=True)

class Minimal(App):
    def compose(self):
        yield Header()
        yield Static("hello")
        yield Footer()

    def on_mount(self):
        self.call_after_refresh(self.first_frame)

    def first_frame(self):
        print(f"FIRST {time.time():.6f}", flush=True)
        self.exit()

Minimal().run(headless=True, size=(120, 40))
"""

AGENTCLI = r"""
import sys, time
import agentcli.tui.app as tui_app

class Timed(tui_app.AgentApp):
    def on_mount(self):
        # Textual calls every class's on_mount in turn: no super() call here.
        self.call_after_refresh(self.first_frame)

    def first_frame(self):
        print(f"FIRST {time.time():.6f}", flush=True)
        self.set_interval(0.005, self.wait_for_session)

    def wait_for_session(self):
        if self.session_ready:
            print(f"SESSION {time.time():.6f}", flush=True)
            self.exit()

    def run(self, **options):
        return super().run(headless=True, size=(120, 40))

# The real command line, run as `agentcli --cwd WORKSPACE --model M` runs it: typer, the settings
# and the workspace checks, then the app. Only the terminal test and the app class are swapped.
tui_app.AgentApp = Timed
import agentcli.cli as cli
cli._interactive = lambda: True
print(f"IMPORTED {time.time():.6f}", flush=True)
sys.argv = ["agentcli", "--cwd", sys.argv[1], "--model", "openai/gpt-4o-mini"]
cli.main()
"""


def launch(code: str, *args: str, env: dict[str, str]) -> dict[str, float]:
    started = time.time()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"app failed:\n{out.stderr[-3000:]}")
    marks = {}
    for line in out.stdout.splitlines():
        name, _, stamp = line.partition(" ")
        if name in ("IMPORTED", "FIRST", "SESSION"):
            marks[name] = float(stamp) - started
    marks["exit"] = time.time() - started
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    workspace = home / "project"
    workspace.mkdir()
    (workspace / "main.py").write_text("print('hi')\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    env.pop("AGENTCLI_NO_WARMUP", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    launch(MINIMAL, env=env)  # warm the file cache for both
    launch(AGENTCLI, str(workspace), env=env)
    minimal, first, session = [], [], []
    minimal_imports, imports, minimal_app, app = [], [], [], []
    for _ in range(options.runs):  # interleaved, so drifting machine load hits both alike
        marks = launch(MINIMAL, env=env)
        minimal.append(marks["FIRST"])
        minimal_imports.append(marks["IMPORTED"])
        minimal_app.append(marks["FIRST"] - marks["IMPORTED"])
        marks = launch(AGENTCLI, str(workspace), env=env)
        first.append(marks["FIRST"])
        imports.append(marks["IMPORTED"])
        app.append(marks["FIRST"] - marks["IMPORTED"])
        session.append(marks.get("SESSION", float("nan")))

    def fmt(values: list[float]) -> str:
        return f"median {statistics.median(values) * 1000:6.0f} ms  (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})"

    ratio = statistics.median(first) / statistics.median(minimal)
    print(f"runs: {options.runs}, python {sys.version.split()[0]}")
    print(f"minimal Textual app, first frame:   {fmt(minimal)}")
    print(f"agentcli TUI, first frame:          {fmt(first)}")
    print(f"agentcli TUI, session attached:     {fmt(session)}")
    print(f"  of which interpreter + imports:   minimal {statistics.median(minimal_imports) * 1000:4.0f} ms, "
          f"agentcli {statistics.median(imports) * 1000:4.0f} ms ")
    print(f"  of which app start -> first frame: minimal {statistics.median(minimal_app) * 1000:4.0f} ms, "
          f"agentcli {statistics.median(app) * 1000:4.0f} ms")
    print(f"first frame ratio agentcli/minimal: {ratio:.2f}x   (goal < 1.5x and < 1000 ms)")
    verdict = statistics.median(first) < 1.0 and ratio < 1.5
    print(f"goal met: {'yes' if verdict else 'no'}")
    print(json.dumps({"minimal_ms": statistics.median(minimal) * 1000, "first_frame_ms": statistics.median(first) * 1000,
                      "session_ms": statistics.median(session) * 1000, "ratio": round(ratio, 3)}))


if __name__ == "__main__":
    main()
