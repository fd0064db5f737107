"""Every key binding is remappable and explained; every app action is in the command palette."""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding

from agentcli.tui.app import AgentApp, all_binding_ids, binding_classes
from agentcli.tui.keymap import keymap_file, load_keymap
from agentcli.llm.replay import ReplayModel
from tests.tui.helpers import make_app, make_session, recording, wait_for


def test_every_binding_has_an_id_a_description_and_a_tooltip() -> None:
    seen: set[str] = set()
    for cls in binding_classes():
        for binding in cls.BINDINGS:
            assert isinstance(binding, Binding)
            assert binding.id and binding.id.startswith("agentcli."), (cls.__name__, binding)
            assert binding.description and binding.tooltip, binding.id
            seen.add(binding.id)
    assert seen == all_binding_ids()


async def test_every_app_action_is_in_the_palette(project: Path) -> None:
    app = make_app(project, None)
    async with app.run_test(size=(100, 30)):
        # The list is built from the composed app (no session needed): nothing to wait for.
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for expected in ("agent: pause", "agent: resume", "session: new", "view: toggle side panes",
                         "view: toggle state graph", "view: toggle tool-call panel", "view: toggle snapshot timeline",
                         "focus: prompt", "focus: tool calls", "focus: snapshot timeline", "snapshot: undo last restore",
                         "snapshot: toggle diff base", "stream: show earlier messages", "permission: allow once",
                         "permission: deny"):
            assert expected in titles, expected
        ours = titles[titles.index("agent: pause") :]
        assert all(": " in title for title in ours), "our entries read group: action"


def test_a_keymap_file_remaps_by_id_and_reports_unknown_ids() -> None:
    path = keymap_file()
    path.parent.mkdir(parents=True)
    path.write_text('"agentcli.pause" = "f5"\n"agentcli.nope" = "f6"\n"agentcli.pane.graph" = 3\n')
    keymap, warnings = load_keymap(known_ids=all_binding_ids())
    assert keymap == {"agentcli.pause": "f5"}
    assert len(warnings) == 2 and "agentcli.nope" in warnings[0]


async def test_a_remapped_key_pauses(project: Path) -> None:
    keymap_file().parent.mkdir(parents=True)
    keymap_file().write_text('"agentcli.pause" = "f5"\n')
    rec = recording(("Running something slow.", [("bash", {"command": "sleep 20"})]))
    app = make_app(project, make_session(project, ReplayModel(rec)), initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.control_state == "executingTool", what="the tool to run")
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.control_state == "paused", what="paused by f5")
    assert isinstance(app, AgentApp)


async def test_a_remapped_prompt_key_moves_and_the_old_key_no_longer_runs_it(project: Path) -> None:
    from textual import events

    keymap_file().parent.mkdir(parents=True)
    keymap_file().write_text('"agentcli.prompt.expand" = "f7"\n')
    app = make_app(project, make_session(project, ReplayModel(recording(("Done.", [])))))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        field = app.prompt.input
        field.focus()
        field.post_message(events.Paste("\n".join(f"line {n}" for n in range(12))))
        await wait_for(pilot, lambda: "[pasted 12 lines #1]" in field.text, what="the chip")
        await pilot.press("ctrl+o")
        await pilot.press("x")
        await wait_for(pilot, lambda: field.text.endswith("x"), what="the key after ctrl+o")
        assert "[pasted 12 lines #1]" in field.text, "ctrl+o was moved away by the keymap"
        await pilot.press("f7")
        await wait_for(pilot, lambda: "line 11" in field.text, what="the chip expanded by f7")


async def test_a_keymap_that_is_not_utf8_is_skipped_with_a_notification(project: Path) -> None:
    keymap_file().parent.mkdir(parents=True)
    keymap_file().write_bytes(b'"agentcli.pause" = "\xe9"\n')
    wanted = f"{keymap_file()}: not UTF-8 (byte 0xe9 at offset 20)"
    app = make_app(project, None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: any(wanted in n.message for n in app._notifications), what="the notification")
        assert app.is_running  # the app goes on with its own keys
