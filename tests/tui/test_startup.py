"""Start-up as `agentcli` does it: the first frame comes before the settings are validated.

The app is given the flags only; it reads the theme from the raw config before its first frame,
then validates everything, reports a bad config (exit 2, naming file and field) and asks before
opening a session in a home folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentcli.tui.app import EXIT_USAGE, AgentApp
from agentcli.tui.screens import ConfirmWorkspace
from tests.tui.helpers import recording, wait_for, write_recording

REC = recording(("Done.", [("complete", {"summary": "nothing to do"})]))


def app_for(workspace: Path, **overrides: object) -> AgentApp:
    return AgentApp(workspace=workspace, overrides=overrides, remember_themes=False, warm_up=False)


def record_exit(app: AgentApp) -> list[dict[str, object]]:
    """Every call of ``app.exit`` (which still exits), to read the message it prints after."""
    calls: list[dict[str, object]] = []
    original = app.exit

    def exit(result: object = None, return_code: int = 0, message: object = None) -> None:
        calls.append({"return_code": return_code, "message": message})
        original(result, return_code, message)

    app.exit = exit  # type: ignore[method-assign]
    return calls


async def test_the_settings_are_loaded_after_the_first_frame_with_the_flags_on_top(project: Path,
                                                                                   tmp_path: Path) -> None:
    model = write_recording(tmp_path / "rec.json", REC)
    (project / ".agentcli.toml").write_text('theme = "agentcli-light"\nmax_steps = 7\n')
    app = app_for(project, model=model)
    async with app.run_test(size=(100, 30)) as pilot:
        # The workspace's theme is used from the first frame, before any validation.
        assert app.theme == "agentcli-light"
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert app.settings.model == model and app.settings.max_steps == 7
        assert app.session is not None and app.session.settings.model == model


async def test_a_bad_config_ends_the_app_with_code_2_naming_the_file_and_the_field(project: Path) -> None:
    config = project / ".agentcli.toml"
    config.write_text("max_steps = 0\n")
    app = app_for(project)
    exits = record_exit(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: bool(exits), what="the app to exit")
    assert app.return_code == EXIT_USAGE and app.session is None
    [call] = exits
    assert str(config) in str(call["message"]) and "max_steps" in str(call["message"])


async def test_a_config_file_that_is_not_toml_is_reported_after_the_first_frame(project: Path) -> None:
    config = project / ".agentcli.toml"
    config.write_text("max_steps = = 1\n")
    app = app_for(project)
    exits = record_exit(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: bool(exits), what="the app to exit")
    assert app.return_code == EXIT_USAGE and app.session is None
    assert f"invalid TOML in {config}" in str(exits[0]["message"])


async def test_a_bad_flag_value_is_reported_as_the_command_line_option(project: Path) -> None:
    app = app_for(project, max_steps="many")
    exits = record_exit(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: bool(exits), what="the app to exit")
    assert app.return_code == EXIT_USAGE
    assert "command-line options" in str(exits[0]["message"]) and "max_steps" in str(exits[0]["message"])


async def test_a_home_folder_asks_first_and_no_quits_with_code_2(home: Path, tmp_path: Path) -> None:
    app = app_for(home, model=write_recording(tmp_path / "rec.json", REC))
    exits = record_exit(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmWorkspace), what="the question")
        assert "home directory" in app.screen.reason
        await pilot.press("n")
        await wait_for(pilot, lambda: bool(exits), what="the app to exit")
    assert app.return_code == EXIT_USAGE and app.session is None


async def test_a_home_folder_opens_after_yes(home: Path, tmp_path: Path) -> None:
    model = write_recording(tmp_path / "rec.json", REC)
    app = app_for(home, model=model)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmWorkspace), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert app.session is not None and app.session.workspace == home.resolve()


async def test_with_snapshots_off_a_home_folder_opens_without_asking(home: Path, tmp_path: Path) -> None:
    (home / ".agentcli.toml").write_text("[snapshots]\nenabled = false\n")
    app = app_for(home, model=write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert not isinstance(app.screen, ConfirmWorkspace)


FIRST_FRAME = r"""
import sys
import agentcli.tui.app as tui_app

class FirstFrame(tui_app.AgentApp):
    def on_mount(self):
        self.call_after_refresh(self.report)

    def report(self):
        print("LOADED", " ".join(sorted(sys.modules)), flush=True)
        self.exit()

    def run(self, **options):
        return super().run(headless=True, size=(100, 30))

tui_app.AgentApp = FirstFrame
import agentcli.cli as cli
cli._interactive = lambda: True
sys.argv = ["agentcli", "--cwd", sys.argv[1], "--model", "openai/gpt-4o-mini"]
cli.main()
"""


HEAVY = ("pydantic", "litellm", "pygit2", "statemachine", "agentcli.session", "agentcli.config",
         # Ours, deferred past the first frame (bench/tui_startup.py): the event classes, the state
         # graph's drawing, the side panes, the session bridge and the commands other than run's.
         "agentcli.events", "agentcli.chart_drawing", "agentcli.tui.bridge", "agentcli.tui.widgets._timeline",
         "agentcli.cli.race")


def test_the_real_command_draws_its_first_frame_before_the_heavy_imports(project: Path, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "AGENTCLI_NO_WARMUP": "1"}
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME, str(project)], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    [line] = [line for line in out.stdout.splitlines() if line.startswith("LOADED ")]
    loaded = set(line.split()[1:])
    assert "textual" in loaded
    early = [heavy for heavy in HEAVY if any(m == heavy or m.startswith(heavy + ".") for m in loaded)]
    assert not early, f"loaded before the first frame: {early}"
