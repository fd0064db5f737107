"""The prompt under a demanding user's keys: quoted @-mentions and the ones that attach nothing,
single-key approvals, enter on a command typed in full however fast, text typed while a command
runs, and a draft left in the prompt at ctrl+q — each against a real Session on a replayed model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from textual import events
from textual.pilot import Pilot

from agentcli.events import PermissionDecided
from agentcli.llm.replay import ReplayModel
from agentcli.prompt.history import history_path
from agentcli.session import Session
from agentcli.tui.app import AgentApp
from agentcli.tui.help import HelpScreen, PickOne
from tests.tui.helpers import drain, make_app, make_session, recording, wait_for, wait_idle
from tests.tui.test_prompt_input import DONE, Recorder

RUN_TESTS = recording(
    ("Running the tests.", [("bash", {"command": "echo 4 passed"})]),
    ("They pass.", [("complete", {"summary": "tests pass"})]),
)


def notified(app: AgentApp, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)


def burst(app: AgentApp, *keys: str) -> None:
    """Keys into the app's queue all at once, as a terminal (or tmux send-keys) delivers them."""
    for key in keys:
        character = {"space": " "}.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, character))


@asynccontextmanager
async def at_approval(
    project: Path, decided: list[PermissionDecided]
) -> AsyncIterator[tuple[AgentApp, Pilot[object], Session]]:
    """The app, waiting for approval of the replay's bash call; each verdict lands in ``decided``."""
    session = make_session(project, ReplayModel(RUN_TESTS), permission_mode="ask")
    session.subscribe(lambda e: decided.append(e) if isinstance(e, PermissionDecided) else None)
    app = make_app(project, session, initial_prompt="run the tests")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.prompt.mode == "permission" and app.prompt.permission is not None,
                       what="the approval request")
        yield app, pilot, session


async def test_tab_quotes_a_name_with_spaces_and_the_file_is_attached(project: Path) -> None:
    (project / "my notes.txt").write_text("remember the milk\n")
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"look at @my")
        await wait_for(pilot, lambda: app.prompt.menu.is_open and app.prompt.menu.choices, what="completions")
        assert app.prompt.menu.choices[0].label == '@"my notes.txt"', "shown as it will be written"
        await pilot.press("tab")
        await drain(pilot)
        assert app.prompt.input.text == 'look at @"my notes.txt" '
        await pilot.press(*"please", "enter")
        await wait_idle(pilot, app)
        sent = model.user_texts(0)[-1]
        assert '<file path="my notes.txt">\n     1\tremember the milk\n</file>' in sent
        assert not notified(app, "not attached")


async def test_completion_goes_on_inside_an_open_quote(project: Path) -> None:
    (project / "old stuff").mkdir()
    (project / "old stuff" / "plan v2.md").write_text("# plan\n")
    app = make_app(project, make_session(project, ReplayModel(DONE)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"read @old")
        await wait_for(pilot, lambda: app.prompt.menu.is_open and app.prompt.menu.choices, what="completions")
        assert app.prompt.menu.choices[0].value == "old stuff/"
        await pilot.press("tab")  # a folder: the quote stays open and the menu lists inside it
        await wait_for(pilot, lambda: app.prompt.menu.is_open and app.prompt.menu.choices
                       and app.prompt.menu.choices[0].value == "old stuff/plan v2.md", what="the folder's files")
        assert app.prompt.input.text == 'read @"old stuff/'
        await pilot.press("tab")
        await drain(pilot)
        assert app.prompt.input.text == 'read @"old stuff/plan v2.md" '


async def test_a_mention_that_attaches_nothing_is_said_and_the_message_still_goes(project: Path) -> None:
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"fix @docs/guide.md and thank @alice", "enter")
        await wait_for(pilot, lambda: notified(app, "@docs/guide.md: not attached (no such file)"),
                       what="the notice")
        await wait_idle(pilot, app)
        assert model.user_texts(0)[-1] == "fix @docs/guide.md and thank @alice"
        assert not notified(app, "@alice"), "a handle is plain text"


async def test_a_decorator_or_a_package_scope_in_a_prompt_gets_no_notice(project: Path) -> None:
    """``@app.route`` was taken for a missing file named app.route and warned about."""
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        text = "why does @app.route 404? see @mock.patch and @types/node, not @textstats/gone.txt"
        await pilot.press(*text, "enter")
        await wait_for(pilot, lambda: notified(app, "@textstats/gone.txt: not attached (no such file)"),
                       what="the notice for the path")
        await wait_idle(pilot, app)
        assert model.user_texts(0)[-1] == text
        for plain in ("@app.route", "@mock.patch", "@types/node"):
            assert not notified(app, plain), f"{plain} is plain text"


async def test_a_single_key_answers_the_approval_and_question_mark_explains(project: Path) -> None:
    decided: list[PermissionDecided] = []
    async with at_approval(project, decided) as (app, pilot, session):
        app.prompt.input.focus()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: notified(app, "s (2) allow for this session"), what="the explanation")
        assert app.prompt.input.text == "" and decided == []
        await pilot.press("h", "i")  # any other key types: a message can still be written
        await drain(pilot)
        assert app.prompt.input.text == "hi" and decided == []
        await pilot.press("y")  # not empty: y is a letter of the message
        await drain(pilot)
        assert app.prompt.input.text == "hiy" and decided == []
        await pilot.press("ctrl+u")
        await wait_for(pilot, lambda: app.prompt.input.text == "", what="the prompt emptied")
        burst(app, "y", "y")  # no enter; the second y (a double press) answers nothing more
        await wait_for(pilot, lambda: session.last_turn is not None and session.last_turn.outcome == "completed",
                       what="completion")
        assert app.prompt.input.text == ""
        assert not notified(app, "s (2) allow for this session"), "the explanation went with its request"
    assert [(d.allowed, d.scope) for d in decided] == [(True, "once")]


async def test_a_number_key_picks_the_listed_verdict(project: Path) -> None:
    decided: list[PermissionDecided] = []
    async with at_approval(project, decided) as (app, pilot, session):
        app.prompt.input.focus()
        await pilot.press("4")
        await wait_idle(pilot, app)
    assert [(d.allowed, d.scope) for d in decided] == [(False, "once")]


async def test_the_same_keys_answer_from_the_options_list(project: Path) -> None:
    decided: list[PermissionDecided] = []
    async with at_approval(project, decided) as (app, pilot, session):
        app.query_one("#question-options").focus()
        await pilot.press("s")
        await wait_idle(pilot, app)
    assert [(d.allowed, d.scope) for d in decided] == [(True, "session")]


async def test_enter_on_a_command_typed_in_full_runs_it_not_the_stale_highlighted_entry(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(DONE)), remember_themes=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready and app.prompt.menu is not None)
        field = app.prompt.input
        field.focus()
        # The menu as it stands after "/": every command, /help highlighted. The rest of the text
        # lands before the editor's change reaches the menu (as keys from tmux send-keys do).
        await pilot.press("/")
        await wait_for(pilot, lambda: app.prompt.menu.is_open, what="the menu")
        assert app.prompt.menu.current is not None and app.prompt.menu.current.value == "help"
        field.insert("theme")
        assert app.prompt.route_key("enter") is False, "enter is left to send the typed command"
        assert not app.prompt.menu.is_open
        await drain(pilot)
        assert not isinstance(app.screen, HelpScreen) and field.text == "/theme"
        field.clear()
        await drain(pilot)
        # The same through the app's key queue: the whole string, then enter, without waiting.
        burst(app, *"/theme", "space", *"agentcli-light", "enter")
        await wait_for(pilot, lambda: app.theme == "agentcli-light", what="the theme switched")
        assert not isinstance(app.screen, HelpScreen)
        await wait_for(pilot, lambda: field.text == "", what="the command taken out of the prompt")
        burst(app, *"/cost", "enter")
        await wait_for(pilot, lambda: field.text == "" and notified(app, "tokens in"), what="/cost to run")
        assert not isinstance(app.screen, HelpScreen)


async def test_text_typed_while_a_picker_is_open_stays_in_the_prompt(project: Path) -> None:
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        field = app.prompt.input
        field.focus()
        await pilot.press(*"/model", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PickOne), what="the model picker")
        field.insert("hello again")  # what the user types as the picker closes
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PickOne), what="the picker closed")
        await app.workers.wait_for_complete()
        await drain(pilot)
        assert field.text == "hello again"
        field.focus()
        await pilot.press("enter")
        await wait_idle(pilot, app)
        assert model.user_texts(0)[-1] == "hello again"


async def test_ctrl_q_keeps_the_draft_in_the_history_and_says_so(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(DONE)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready and app.prompt.history is not None)
        app.prompt.input.focus()
        await pilot.press(*"half a thought about", "ctrl+j", *"the parser")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to exit")
        said = " ".join(str(r) for r in app._exit_renderables)
        assert "kept in the prompt history" in said, said
    assert app.return_code == 0
    lines = history_path(project).read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1]) == "half a thought about\nthe parser"
    again = make_app(project, make_session(project, ReplayModel(DONE), session_id="0123456789ab"))
    async with again.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: again.prompt.history is not None)
        again.prompt.input.focus()
        await pilot.press("up")
        await drain(pilot)
        assert again.prompt.input.text == "half a thought about\nthe parser"


async def test_ctrl_q_with_an_empty_prompt_adds_nothing(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(DONE)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready and app.prompt.history is not None)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to exit")
        assert app._exit_renderables == []
    assert not history_path(project).exists()
