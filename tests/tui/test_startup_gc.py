"""The collector is paused while the program starts, and only then (agentcli/startup_gc.py).

The real command line runs in a child process: the TUI's first frame is drawn with automatic
collection off, and it is back on once the session is open; any other command runs with it on;
and a pause is only undone by whoever made it.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from agentcli import startup_gc

TUI = r"""
import gc, sys
import agentcli.tui.app as tui_app

class Watched(tui_app.AgentApp):
    def on_mount(self):
        super().on_mount()
        self.call_after_refresh(lambda: print("FIRST FRAME collecting:", gc.isenabled(), flush=True))
        self.set_interval(0.02, self.check_ready)

    def check_ready(self):
        if self.session_ready:
            print("SESSION collecting:", gc.isenabled(), flush=True)
            self.exit()

    def run(self, **options):
        return super().run(headless=True, size=(100, 30))

tui_app.AgentApp = Watched
import agentcli.cli as cli
cli._interactive = lambda: True
sys.argv = ["agentcli", "--cwd", sys.argv[1], "--model", "openai/gpt-4o-mini"]
cli.main()
"""

COMMAND = r"""
import gc, sys
import agentcli.session.log as log
listed = log.list_sessions

def list_sessions(*args, **kwargs):
    print("COMMAND collecting:", gc.isenabled(), flush=True)
    return listed(*args, **kwargs)

log.list_sessions = list_sessions
import agentcli.cli as cli
sys.argv = ["agentcli", "sessions", "--cwd", sys.argv[1]]
cli.main()
"""


def run_child(script: str, project: Path, tmp_path: Path) -> list[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "AGENTCLI_NO_WARMUP": "1"}
    out = subprocess.run([sys.executable, "-c", script, str(project)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if "collecting:" in line]


def test_the_first_frame_is_drawn_without_collections_and_the_session_runs_with_them(project: Path,
                                                                                    tmp_path: Path) -> None:
    lines = run_child(TUI, project, tmp_path)
    assert lines == ["FIRST FRAME collecting: False", "SESSION collecting: True"]


def test_a_command_other_than_the_tui_runs_with_the_collector_on(project: Path, tmp_path: Path) -> None:
    assert run_child(COMMAND, project, tmp_path) == ["COMMAND collecting: True"]


def test_only_a_pause_made_here_is_resumed_here() -> None:
    assert gc.isenabled()
    try:
        startup_gc.pause()
        assert not gc.isenabled() and startup_gc.paused()
        startup_gc.resume()
        startup_gc.resume()  # idempotent
        assert gc.isenabled() and not startup_gc.paused()

        gc.disable()  # someone else's reason (as litellm's background import has)
        startup_gc.pause()
        startup_gc.resume()
        assert not gc.isenabled(), "a collector disabled elsewhere was turned back on"
    finally:
        gc.enable()
