"""The first frame is the real screen, and what the user types from the first instant is kept.

The app draws the header, the stream, the prompt and the footer first and mounts the side panes
and the graph strip just after; the session is made after that. Keys typed meanwhile, or even
before the app reads the terminal, must land in the prompt, none lost or sent anywhere else.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual import events
from textual.geometry import Region
from textual.widget import Widget

from agentcli.tui.app import STARTUP_SWITCH_INTERVAL_S, AgentApp
from agentcli.tui.widgets._prompt import PromptArea
from tests.tui.helpers import recording, wait_for, write_recording

REC = recording(("Done.", [("complete", {"summary": "nothing to do"})]))
TYPED = "fix the flaky test"


def app_for(workspace: Path, model: str) -> AgentApp:
    return AgentApp(workspace=workspace, overrides={"model": model}, remember_themes=False, warm_up=False)


async def test_keys_sent_before_the_panes_mount_reach_the_prompt(project: Path, tmp_path: Path) -> None:
    app = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=(80, 24)) as pilot:
        # Straight into the app's queue, as a terminal delivers them, before it has had a turn to
        # mount the side panes, focus anything or make the session.
        panes_then = app._panes_mounted
        for character in TYPED:
            app.post_message(events.Key(character, character))
        await wait_for(pilot, lambda: app.session_ready and app.prompt.input.text == TYPED,
                       what=f"the session, and {TYPED!r} in the prompt")
        assert app.focused is app.prompt.input
        assert not panes_then, "the keys came too late to test anything: the panes were already mounted"


async def test_a_slash_typed_before_the_menu_is_mounted_opens_it_once_it_is(project: Path, tmp_path: Path) -> None:
    app = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=(80, 24)) as pilot:
        menu_then = app.prompt.menu is not None  # made (and its module imported) just after the first frame
        for character in "/hel":
            app.post_message(events.Key(character, character))
        await wait_for(pilot, lambda: app.prompt.menu is not None and app.prompt.menu.is_open,
                       what="the completion menu")
        assert app.prompt.menu is not None
        assert [choice.value for choice in app.prompt.menu.choices] == ["help"]
        assert app.prompt.input.text == "/hel"
        assert not menu_then, "the keys came too late to test anything: the menu was already mounted"


async def test_keys_pressed_at_once_reach_the_prompt_and_outlive_the_session_start(project: Path,
                                                                                   tmp_path: Path) -> None:
    app = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"hello", "space", *"there")
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        await pilot.press("!")
        assert app.prompt.input.text == "hello there!"
        assert app.query_one("#sidebar").children, "the side panes are mounted after the first frame"


@pytest.fixture
def held_upgrade(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Holds the prompt's editor back (its stand-in stays) until the returned event is set."""
    release = asyncio.Event()
    upgrade = PromptArea.upgrade

    async def held(prompt: PromptArea) -> None:
        await release.wait()
        await upgrade(prompt)

    monkeypatch.setattr(PromptArea, "upgrade", held)
    return release


def cells(widget: Widget) -> list[list[tuple[str, str]]]:
    """What ``widget`` draws, border included: each cell's character and style."""
    width, height = widget.outer_size
    lines = widget.render_lines(Region(0, 0, width, height))
    return [[(character, str(segment.style)) for segment in line for character in segment.text]
            for line in lines]


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_first_frames_prompt_looks_like_the_editor_that_replaces_it(
        project: Path, tmp_path: Path, held_upgrade: asyncio.Event, size: tuple[int, int]) -> None:
    app = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=size) as pilot:
        first = app.prompt.first
        await wait_for(pilot, lambda: app.focused is first and first.region.height > 0, what="the first frame")
        before, where = cells(first), first.region
        held_upgrade.set()
        await wait_for(pilot, lambda: app.focused is app.prompt.input and not first.is_attached, what="the editor")
        editor = app.prompt.input
        editor.cursor_blink = False  # drawn as at the moment it took the focus, however long this took
        await pilot.pause()
        assert editor.region == where
        assert cells(editor) == before, "the editor's stand-in looks different from the editor"


def styles_of(app: AgentApp) -> list[tuple[str, str | None, str, str, bool]]:
    """Every node's rules as applied, its resolved colours and whether it shows."""
    return [(type(node).__name__, node.id, node.styles.base.css, str(node.rich_style), node.display)
            for node in app.screen.walk_children(with_self=True)]


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_first_frame_is_styled_as_a_full_restyle_styles_it(
        project: Path, tmp_path: Path, held_upgrade: asyncio.Event, size: tuple[int, int]) -> None:
    # The first screen skips Textual's restyle of every widget as it first shows (main_screen.py).
    app = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.focused is app.prompt.first and app.screen.region.area > 0,
                       what="the first frame")
        as_shown = styles_of(app)
        app.stylesheet.update_nodes(app.screen.walk_children(with_self=True), animate=False)
        assert styles_of(app) == as_shown
        held_upgrade.set()


async def test_keys_typed_into_the_first_frames_prompt_edit_as_in_the_editor(
        project: Path, tmp_path: Path, held_upgrade: asyncio.Event) -> None:
    app = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=(80, 24)) as pilot:
        first = app.prompt.first
        await wait_for(pilot, lambda: app.focused is first, what="the stand-in focused")
        # Keys the editor handles itself (characters, a paste, ctrl+j). Keys it handles through
        # bindings (arrows, backspace) run when they bubble up to the app, so in a burst like
        # this one they land after the characters that follow them, with or without the
        # stand-in: Textual's own order for keys that arrive at once.
        typed: list[events.Key | events.Paste] = [
            *(events.Key(c, c) for c in "fix"), events.Paste(" the test"), events.Key("ctrl+j", None),
            events.Key("y", "y")]
        for event in typed:
            app.post_message(event)
        await wait_for(pilot, lambda: len(first.kept) == len(typed), what="the keys kept by the stand-in")
        assert first.typed == "fix the test\ny"
        held_upgrade.set()
        app.post_message(events.Key("!", "!"))  # while the editor takes over: after the rest
        await wait_for(pilot, lambda: app.session_ready and app.prompt.input.text == "fix the test\ny!",
                       what="the keys, in order, in the editor")
        assert app.prompt.input.cursor_location == (1, 2)
        assert app.focused is app.prompt.input
        assert not first.is_attached


async def test_a_long_line_typed_into_the_first_frames_prompt_stays_inside_its_box(
        project: Path, tmp_path: Path, held_upgrade: asyncio.Event) -> None:
    app = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=(80, 24)) as pilot:
        first = app.prompt.first
        await wait_for(pilot, lambda: app.focused is first, what="the stand-in focused")
        line = "".join(str(n % 10) for n in range(150))
        app.post_message(events.Paste(line))
        await wait_for(pilot, lambda: first.typed == line, what="the paste kept")
        await pilot.pause()
        [top, middle, bottom] = cells(first)
        assert len(middle) == len(top) == 80
        shown = "".join(character for character, _ in middle)
        assert shown.startswith("▊ ") and shown.endswith(" ▎"), shown  # the border and padding, whole
        assert line.endswith(shown[2:-3].rstrip()), "the end of what was typed, then the cursor"
        held_upgrade.set()
        await wait_for(pilot, lambda: app.session_ready and app.prompt.input.text == line, what="the editor")


async def test_threads_switch_often_only_until_the_panes_are_mounted(
        project: Path, tmp_path: Path, held_upgrade: asyncio.Event) -> None:
    # So Textual's writer thread puts the first frame on the terminal at once (app.py).
    default = sys.getswitchinterval()
    app = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.focused is app.prompt.first, what="the first frame")
        assert sys.getswitchinterval() == pytest.approx(STARTUP_SWITCH_INTERVAL_S)
        held_upgrade.set()
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert sys.getswitchinterval() == default
    held_upgrade.clear()
    ended_early = app_for(project, write_recording(tmp_path / "rec.json", REC))
    async with ended_early.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: ended_early.focused is ended_early.prompt.first, what="the first frame")
    assert sys.getswitchinterval() == default, "an app that ended before its panes were mounted"


def capture(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.may_skip(reason="needs tmux, to run agentcli in a real terminal")
def test_in_a_real_terminal_keys_typed_before_the_app_starts_are_kept(project: Path, tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    model = write_recording(tmp_path / "rec.json", REC)
    session = f"agentcli-first-frame-{os.getpid()}"
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "HOME": str(project.parent), "TERM": "xterm-256color", "AGENTCLI_NO_WARMUP": "1"}
    exports = " ".join(f"{key}={value}" for key, value in env.items())
    command = f"env {exports} {sys.executable} -m agentcli --cwd {project} --model {model}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command], check=True)
    try:
        # Typed at once: the keys wait in the terminal until the app reads them.
        subprocess.run(["tmux", "send-keys", "-t", session, "-l", TYPED], check=True)
        deadline = time.monotonic() + 60
        screen = ""
        while time.monotonic() < deadline:
            screen = capture(session)
            if TYPED in screen and "nothing to do" not in screen and "^g graph" in screen:
                break
            time.sleep(0.05)  # polling a terminal: the condition is what is waited on
        assert TYPED in screen and "^g graph" in screen, screen  # typed, and the session is ready
        lines = screen.rstrip("\n").splitlines()
        [row] = [number for number, line in enumerate(lines) if TYPED in line]  # once, not echoed twice
        assert row >= len(lines) - 5, f"the text is not in the prompt over the footer:\n{screen}"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
