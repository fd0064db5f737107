"""The prompt a person can live in: multi-line input and pastes, slash commands that never reach
the model, @file attachments, AGENTS.md, queued messages, history — each against a real Session
on a replayed model that records what it was sent."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

from rich.console import Console
from textual import events
from textual.containers import VerticalScroll

from agentcli.llm.replay import ReplayModel
from agentcli.llm.types import ModelRequest, StreamItem
from agentcli.tui.help import HelpScreen
from agentcli.tui.widgets import UserBlock
from tests.tui.helpers import GatedModel, drain, make_app, make_session, recording, wait_for, wait_idle

DONE = recording(("Done.", [("complete", {"summary": "ok"})]), ("Done again.", [("complete", {"summary": "ok"})]))


class Recorder:
    """A model at the network edge that remembers every request it was sent."""

    def __init__(self, inner: ReplayModel | GatedModel) -> None:
        self.inner = inner
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.requests.append(request)
        async for item in self.inner.stream(request):
            yield item

    def user_texts(self, index: int = -1) -> list[str]:
        return [str(m["content"]) for m in self.requests[index].messages if m["role"] == "user"]

    def system(self, index: int = 0) -> str:
        return str(self.requests[index].messages[0]["content"])


async def test_a_multi_line_paste_shows_as_a_chip_and_reaches_the_model_whole(project: Path) -> None:
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    pasted = "\n".join(f"line {n}" for n in range(1, 41))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        field = app.prompt.input
        field.focus()
        await pilot.press(*"Look at this:", "ctrl+j")
        field.post_message(events.Paste(pasted))
        await wait_for(pilot, lambda: "[pasted 40 lines #1]" in field.text, what="the chip")
        assert "line 17" not in field.text, "the chip stands for the text"
        await pilot.press("enter")
        await wait_idle(pilot, app)
        assert model.user_texts(0)[-1] == "Look at this:\n" + pasted
        assert field.text == ""


async def test_ctrl_j_and_a_trailing_backslash_start_new_lines_and_enter_sends(project: Path) -> None:
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"one\\", "enter", *"two", "ctrl+j", *"three")
        await drain(pilot)
        assert app.prompt.input.text == "one\ntwo\nthree"
        assert model.requests == [], "nothing was sent before enter"
        await pilot.press("enter")
        await wait_idle(pilot, app)
        assert model.user_texts(0)[-1] == "one\ntwo\nthree"
        assert [b.render().plain for b in app.query(UserBlock)] == ["one\ntwo\nthree"]


async def test_keys_sent_faster_than_the_app_handles_them_apply_in_order(project: Path) -> None:
    """A burst of keys (a fast typist, tmux send-keys, a paste without bracketed paste) lands as
    typed: bound keys such as backspace and the arrows used to run after the characters that came
    behind them (Textualize/textual#6605)."""
    app = make_app(project, make_session(project, ReplayModel(DONE)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        field = app.prompt.input
        field.focus()
        await drain(pilot)

        def burst(*keys: str) -> None:
            for key in keys:  # into the app's queue all at once, as a terminal delivers them
                app.post_message(events.Key(key, key if len(key) == 1 else None))

        burst(*"abcd", "left", "x", "backspace", "backspace", "y", "home", "z", "end", "!")
        await wait_for(pilot, lambda: field.text.endswith("!"), what="the burst")
        assert field.text == "zabyd!"
        burst("ctrl+u", *"one", "ctrl+j", *"two", "up", "end", "s")
        await wait_for(pilot, lambda: "ones" in field.text, what="the second burst")
        assert field.text == "ones\ntwo"


async def test_ctrl_o_expands_the_chips_in_place(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(DONE)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        field = app.prompt.input
        field.focus()
        field.post_message(events.Paste("a\nb\nc\nd\ne\nf\ng\nh\ni\nj"))
        await wait_for(pilot, lambda: "[pasted 10 lines #1]" in field.text)
        await pilot.press("ctrl+o")
        await drain(pilot)
        assert field.text == "a\nb\nc\nd\ne\nf\ng\nh\ni\nj"


async def test_help_opens_the_help_and_never_reaches_the_model(project: Path) -> None:
    model = Recorder(ReplayModel(DONE))
    session = make_session(project, model)
    app = make_app(project, session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press("/", "h", "e")
        await wait_for(pilot, lambda: app.prompt.menu.is_open, what="the menu")
        assert app.prompt.menu.choices[0].value == "help"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        console = Console(width=100, record=True, file=io.StringIO())
        console.print(screen.body)
        body = console.export_text()
        assert "/compact [FOCUS]" in body and "ctrl+j" in body and "/rewind" in body
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))
        assert model.requests == [] and session.last_turn is None
        assert not app.query(UserBlock)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="f1")


async def test_the_help_scrolls_with_the_keys_at_80x24(project: Path) -> None:
    """At 80x24 the help is several screens long and nothing in it had the focus: pagedown and
    the arrows did nothing, and only its first screen could be read."""
    app = make_app(project, make_session(project, ReplayModel(DONE)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        body = app.screen.query_one(VerticalScroll)
        await wait_for(pilot, lambda: body.max_scroll_y > 0, what="the help laid out")
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: body.scroll_y > 0, what="pagedown to scroll the help")
        await pilot.press("end")
        await wait_for(pilot, lambda: body.scroll_y == body.max_scroll_y, what="end to reach the last line")
        await pilot.press("q")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), what="q to close it")
        assert app.focused is app.prompt.input


async def test_an_unknown_command_is_refused_and_the_text_kept(project: Path) -> None:
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"/frobnicate now", "enter")
        await wait_for(pilot, lambda: any("Unknown command /frobnicate" in str(n.message)
                                          for n in app._notifications), what="the refusal")
        assert app.prompt.input.text == "/frobnicate now"
        assert model.requests == []


async def test_a_mentioned_file_is_attached_with_line_numbers(project: Path) -> None:
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"explain @texts")
        await wait_for(pilot, lambda: app.prompt.menu.is_open and app.prompt.menu.choices, what="completions")
        assert app.prompt.menu.choices[0].value == "textstats.py"
        await pilot.press("tab")
        await drain(pilot)
        assert app.prompt.input.text == "explain @textstats.py "
        await pilot.press("enter")
        await wait_idle(pilot, app)
        sent = model.user_texts(0)[-1]
        first_line = (project / "textstats.py").read_text().splitlines()[0]
        assert sent.startswith("explain @textstats.py")
        assert '<file path="textstats.py">' in sent and f"     1\t{first_line}" in sent
        # The transcript shows what was typed, not the file.
        assert [b.render().plain for b in app.query(UserBlock)][0].startswith("explain @textstats.py")


async def test_agents_md_is_in_the_system_prompt_of_the_first_request(project: Path) -> None:
    (project / "AGENTS.md").write_text("Always run the tests with `python -m unittest`.\n")
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model), initial_prompt="go")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(pilot, app)
        assert "Always run the tests with `python -m unittest`." in model.system(0)
        assert "--- AGENTS.md ---" in model.system(0)
        await wait_for(pilot, lambda: any(n.title == "Project instructions" and n.message == "AGENTS.md"
                                          for n in app._notifications), what="the files named on start")
        assert any("instructions: AGENTS.md" in block.render().plain for block in app.conversation.query("*")
                   if hasattr(block, "render") and block.__class__.__name__ == "NoticeBlock")


async def test_a_message_typed_while_the_agent_works_is_queued_then_delivered(project: Path) -> None:
    gated = GatedModel(recording(("Working on it, reading files now.", [("list_files", {})]),
                                 ("Noted.", [("complete", {"summary": "ok"})])), gate_after=10)
    model = Recorder(gated)
    app = make_app(project, make_session(project, model), initial_prompt="start")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: gated.reached_gate, what="the model mid-reply")
        app.prompt.input.focus()
        await pilot.press(*"also check the README", "enter")
        await wait_for(pilot, lambda: app.prompt.has_class("-queued"), what="the queued line")
        assert app.session is not None and app.session.queued == ["also check the README"]
        await pilot.press(*"and the tests", "enter")
        await wait_for(pilot, lambda: app.session is not None and len(app.session.queued) == 2)
        await pilot.press("escape")  # takes back the newest, does not pause
        await wait_for(pilot, lambda: app.prompt.input.text == "and the tests", what="the take-back")
        assert app.session.queued == ["also check the README"] and app.view is not None
        assert app.view.waiting_for is None, "esc with a queued message does not pause"
        gated.gate.set()
        await wait_idle(pilot, app)
        assert "also check the README" in model.user_texts(1)
        assert not app.prompt.has_class("-queued")


async def test_history_is_kept_across_sessions_of_the_workspace(project: Path) -> None:
    app = make_app(project, make_session(project, ReplayModel(DONE)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.prompt.history is not None)
        app.prompt.input.focus()
        await pilot.press(*"first task", "enter")
        await wait_idle(pilot, app)
    again = make_app(project, make_session(project, ReplayModel(DONE), session_id="0123456789ab"))
    async with again.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: again.prompt.history is not None)
        again.prompt.input.focus()
        await pilot.press("up")
        await drain(pilot)
        assert again.prompt.input.text == "first task"
        await pilot.press("down")
        await drain(pilot)
        assert again.prompt.input.text == ""
        await pilot.press(*"fir", "ctrl+r")
        await wait_for(pilot, lambda: again.prompt.menu.kind == "history")
        await pilot.press("enter")
        await drain(pilot)
        assert again.prompt.input.text == "first task"


async def test_a_custom_command_expands_and_a_bad_one_is_named(project: Path) -> None:
    folder = project / ".agentcli" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("---\ndescription: Review a file\n---\nReview $1 for bugs. Context: $ARGUMENTS\n")
    (folder / "broken.md").write_text("---\ncolour: blue\n---\nhi\n")
    model = Recorder(ReplayModel(DONE))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: any(c.name == "review" for c in app.prompt.commands), what="the commands")
        await wait_for(pilot, lambda: any("broken.md" in str(n.message) and "unknown field 'colour'" in str(n.message)
                                          for n in app._notifications), what="the bad file named")
        app.prompt.input.focus()
        await pilot.press(*"/rev")
        await wait_for(pilot, lambda: app.prompt.menu.is_open)
        assert app.prompt.menu.choices[0].value == "review"
        await pilot.press("tab", *"auth.py quickly", "enter")
        await wait_idle(pilot, app)
        assert model.user_texts(0)[-1] == "Review auth.py for bugs. Context: auth.py quickly"


async def test_slash_compact_runs_the_compaction(project: Path) -> None:
    from agentcli.events import ContextCompacted
    from agentcli.llm.replay import RecordedCall, RecordedTurn, Recording

    turns = [RecordedTurn(text="Reading.", tool_calls=[RecordedCall(name="list_files", arguments={})]),
             RecordedTurn(text="Done.", tool_calls=[RecordedCall(name="complete", arguments={"summary": "listed"})]),
             RecordedTurn(text="The user asked for a listing; it was made.")]
    session = make_session(project, ReplayModel(Recording(turns=turns)))
    compacted: list[ContextCompacted] = []
    session.subscribe(lambda e: compacted.append(e) if isinstance(e, ContextCompacted) else None)
    # A task long enough that the summary is shorter than the part it replaces (a summary that
    # would grow the view is not used).
    task = "list the files; " + "say which of them are sources and which are tests. " * 8
    app = make_app(project, session, initial_prompt=task)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_idle(pilot, app)
        app.prompt.input.focus()
        await pilot.press(*"/compact keep the listing", "enter")
        await wait_for(pilot, lambda: bool(compacted), what="the compaction")
        assert compacted[0].reason == "manual"
        await wait_for(pilot, lambda: app.prompt.input.text == "")
        assert not any(b.render().plain.startswith("/compact") for b in app.query(UserBlock))


async def test_slash_model_switches_the_model_for_the_session(project: Path) -> None:
    from agentcli.events import ModelChanged

    model = Recorder(ReplayModel(DONE))
    session = make_session(project, model)
    switched: list[str] = []
    session.subscribe(lambda e: switched.append(e.model) if isinstance(e, ModelChanged) else None)
    app = make_app(project, session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"/model build openai/gpt-4.1-mini", "enter")
        await wait_for(pilot, lambda: session.settings.models.build == "openai/gpt-4.1-mini")
        assert session.settings.model == "replay:test.json", "the default role keeps its model"
        await pilot.press(*"/model replay:other.json", "enter")
        await wait_for(pilot, lambda: session.settings.model == "replay:other.json")
        await wait_for(pilot, lambda: app.status.model == "replay:other.json", what="the header")
        for bad in ("nosuchprovider/some-model", "openai/"):
            await pilot.press(*f"/model {bad}", "enter")
            await wait_for(pilot, lambda: any("The model was not changed" in str(n.message)
                                              for n in app._notifications), what="the refusal")
            assert app.prompt.input.text == f"/model {bad}", "kept to be corrected"
            app.clear_notifications()
            app.prompt.input.clear()
        assert session.settings.model == "replay:other.json", "a model that cannot work is not taken"
        assert switched == ["openai/gpt-4.1-mini", "replay:other.json"], "nor logged for a resume to inherit"
        assert model.requests == []


async def test_a_recording_cannot_be_switched_to_in_a_session_that_talks_to_a_server(project: Path) -> None:
    from agentcli.config import RetrySettings
    from agentcli.llm.litellm_client import LiteLLMClient

    session = make_session(project, LiteLLMClient(RetrySettings()))
    problem = await session.model_problem("replay:other.json")
    assert problem is not None and "a recording plays only in a session started with it" in problem
    assert await session.model_problem("openai/gpt-4o") is None


async def test_bang_runs_a_command_and_slash_undo_takes_its_change_back(project: Path) -> None:
    from tests.tui.helpers import make_session as make

    session = make(project, ReplayModel(DONE), snapshots=True, permission_mode="all")
    app = make_app(project, session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"!echo changed > notes.txt", "enter")
        await wait_for(pilot, lambda: (project / "notes.txt").exists(), what="the command")
        await wait_for(pilot, lambda: len(app.timeline.entries) >= 2, what="the snapshots")
        assert app.prompt.input.text == ""
        await pilot.press(*"/undo", "enter")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmRestore", what="the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: not (project / "notes.txt").exists(), what="the undo")


async def test_rewind_from_the_prompt_then_undo(project: Path) -> None:
    from agentcli.tui.help import PickOne

    rec = recording(
        ("Writing.", [("write_file", {"path": "a.txt", "content": "one\n"})]),
        ("Done.", [("complete", {"summary": "one"})]),
        ("Changing.", [("write_file", {"path": "a.txt", "content": "two\n"})]),
        ("Done.", [("complete", {"summary": "two"})]),
    )
    session = make_session(project, ReplayModel(rec), snapshots=True, permission_mode="all")
    app = make_app(project, session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"write one", "enter")
        await wait_idle(pilot, app)
        await pilot.press(*"make it two", "enter")
        await wait_for(pilot, lambda: (project / "a.txt").read_text() == "two\n" and session.last_turn is not None
                       and session.last_turn.reason.endswith("two") if session.last_turn else False)
        await wait_idle(pilot, app)
        view_after = session.turn.messages.view()
        await pilot.press(*"/rewind", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PickOne), what="the message list")
        await pilot.press("enter")  # the newest message, listed first
        await wait_for(pilot, lambda: isinstance(app.screen, PickOne) and "Rewind what" in app.screen.title_text)
        await pilot.press("enter")  # code and conversation
        await wait_for(pilot, lambda: (project / "a.txt").read_text() == "one\n", what="the code rewound")
        await wait_for(pilot, lambda: app.prompt.input.text == "make it two", what="the message back in the prompt")
        assert len(session.turn.messages.view()) < len(view_after)
        app.prompt.input.clear()
        await pilot.press(*"/undo", "enter")
        await wait_for(pilot, lambda: (project / "a.txt").read_text() == "two\n", what="the rewind undone")
        assert session.turn.messages.view() == view_after


async def test_the_user_is_called_back_only_when_the_terminal_is_not_focused(project: Path) -> None:
    from agentcli.config import Settings
    from agentcli.tui.notify import call_back

    session = make_session(project, ReplayModel(DONE))
    app = make_app(project, session, settings=Settings(model="replay:none.json", notify="osc777"))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        assert call_back(app, "agentcli waits for you", "✓ completed") is None, "focused: the screen says it"
        app.app_focus = False
        sent = call_back(app, "agentcli", "asks:\x1b]0;evil\x07 which?")
        assert sent == "\x1b]777;notify;agentcli;asks: ]0;evil  which?\x07"
        app._settings = Settings(model="replay:none.json", notify="off")
        assert call_back(app, "agentcli", "done") is None


async def test_a_pause_puts_the_queued_message_back_into_the_prompt(project: Path) -> None:
    gated = GatedModel(recording(("Working on it, reading files now.", [("list_files", {})]),
                                 ("Noted.", [("complete", {"summary": "ok"})])), gate_after=10)
    model = Recorder(gated)
    app = make_app(project, make_session(project, model), initial_prompt="start")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: gated.reached_gate, what="the model mid-reply")
        app.prompt.input.focus()
        await pilot.press(*"use the new API", "enter")
        await wait_for(pilot, lambda: app.prompt.has_class("-queued"))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.view is not None and app.view.waiting_for == "guidance", what="paused")
        await wait_for(pilot, lambda: app.prompt.input.text == "use the new API", what="the message back")
        assert app.session is not None and app.session.queued == []
        assert len(model.requests) == 1, "nothing was sent: the user paused"
        await pilot.press("enter")
        await wait_idle(pilot, app)
        assert "use the new API" in model.user_texts(-1)


async def test_a_message_queued_when_the_app_quits_comes_back_when_the_session_is_resumed(project: Path) -> None:
    from agentcli.config import Settings, data_home
    from agentcli.events import QueueChanged
    from agentcli.session import factory
    from agentcli.session.log import find_session, read_events
    from agentcli.session.resume import rebuild

    gated = GatedModel(recording(("Working on it, reading files now.", [("list_files", {})])), gate_after=10)
    session = make_session(project, gated, session_id="9e0e0e000000", record=True, data_dir=data_home())
    app = make_app(project, session, initial_prompt="start")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: gated.reached_gate, what="the model mid-reply")
        app.prompt.input.focus()
        await pilot.press(*"use the new API", "enter")
        await pilot.press(*"and keep the old one", "enter")
        await wait_for(pilot, lambda: len(session.queued) == 2, what="two queued")
        await pilot.press("escape")  # the newest comes back to the prompt: it is not queued anymore
        await wait_for(pilot, lambda: session.queued == ["use the new API"], what="the take-back")
        await pilot.press("ctrl+q")
    entry = find_session(data_home(), "9e0e0e000000")
    logged = [e for e in read_events(entry.directory) if isinstance(e, QueueChanged)]
    assert [[m.text for m in e.messages] for e in logged] == [
        ["use the new API"], ["use the new API", "and keep the old one"], ["use the new API"]]

    model = Recorder(ReplayModel(recording(("Switched.", [("complete", {"summary": "ok"})]))))
    resumed = factory.resume_session(entry, Settings(**factory.resume_settings_overrides(entry, {})),
                                     model_client=model)
    assert resumed.queued == ["use the new API"]
    app = make_app(project, resumed)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        assert app.view is not None and app.view.waiting_for == "guidance", "killed mid-turn: resumed paused"
        await wait_for(pilot, lambda: app.prompt.input.text == "use the new API", what="the message back")
        assert resumed.queued == [] and not model.requests, "back in the prompt, not sent: the user decides"
        app.prompt.input.focus()
        await pilot.press("enter")
        await wait_idle(pilot, app)
        assert "use the new API" in model.user_texts(-1)
    resumed.close()
    entry = find_session(data_home(), "9e0e0e000000")
    assert rebuild(read_events(entry.directory)).queued == [], "sent: a later resume has nothing queued"


async def test_page_keys_in_a_prompt_that_fits_page_the_conversation(project: Path) -> None:
    long_reply = "\n\n".join(f"paragraph {n} of a long answer" for n in range(60))
    model = Recorder(ReplayModel(recording((long_reply, [("complete", {"summary": "done"})]), chunk_chars=4000)))
    app = make_app(project, make_session(project, model))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        await pilot.press(*"go", "enter")
        await wait_idle(pilot, app)
        conversation = app.conversation
        await wait_for(pilot, lambda: conversation.max_scroll_y > 0 and conversation.scroll_y == conversation.max_scroll_y,
                       what="the reply laid out, at its end")
        bottom = conversation.scroll_y
        await pilot.press("pageup")
        await wait_for(pilot, lambda: conversation.scroll_y < bottom, what="the conversation paged back")
        assert app.screen.focused is app.prompt.input  # typing goes on where it was
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: conversation.scroll_y == bottom, what="the conversation paged forward")

        # A prompt taller than its box pages its own lines: the cursor moves, the conversation stays.
        prompt = app.prompt.input
        prompt.insert("\n".join(f"line {n}" for n in range(40)))
        await drain(pilot)
        assert prompt.wrapped_document.height > prompt.content_size.height
        row, where = prompt.cursor_location[0], conversation.scroll_y
        await pilot.press("pageup")
        await drain(pilot)
        assert prompt.cursor_location[0] < row
        assert conversation.scroll_y == where
