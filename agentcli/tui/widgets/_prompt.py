"""The prompt: a task box that turns into the answer box when the agent asks a question.

Above the input sit the question and its options (when the agent calls ``clarify``), the
messages queued while the agent works, the completion menu (``/`` commands, ``@`` paths,
ctrl+r history) and a hint line that says what submitting does now: start a task, answer,
resume with guidance, queue. What it is for comes from the session view's ``waiting_for``,
never from the names of chart states.

Over 400 lines on purpose: the modes, the menu, the history and the approval's single keys all
route the same keys of one input, and the menu's pieces are imported just after the first frame,
each where it is used.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual import events, on
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agentcli.tui.widgets._prompt_first import FirstFramePrompt

# The first frame has a stand-in for the editor only (``_prompt_first``): the editor itself (a
# ``TextArea``), the completion menu and what it completes (the slash commands, the workspace's
# paths), the describer of a turn's end and the approval's diff are imported just after it
# (~17 ms before the first frame; bench/tui_startup.py).
if TYPE_CHECKING:  # the session layer and the event classes come after the first frame
    from textual.notifications import Notification

    from agentcli.events import ClarificationRequested, PermissionRequested, TurnEnded
    from agentcli.prompt.history import PromptHistory  # loaded after the first frame
    from agentcli.prompt.slash import SlashCommand
    from agentcli.session.view import SessionView
    from agentcli.tui.widgets._prompt_input import PromptInput
    from agentcli.tui.widgets._prompt_menu import CompletionMenu

PromptMode = str
"""``task`` (idle), ``busy`` (running), ``answer`` (a question waits), ``permission`` (a tool call
waits for approval), ``guidance`` (paused or halted)."""

_PLACEHOLDERS = {
    "task": "Describe a task · / commands · @ files · ctrl+j new line",
    "busy": "Type to queue a message for the agent's next step — ctrl+s pauses it",
    "answer": "Type your answer (or a number from the list) and press enter",
    "permission": "y once · s session · a always · n deny (one key) · ? explains",
    "guidance": "Guidance for the agent (optional) — enter resumes",
    "readonly": "This session is shown read-only",
}

PATHS_FRESH_S = 10.0
"""A listing of the workspace older than this is made again when a new ``@`` is typed."""

PERMISSION_CHOICES = ("once", "session", "always", "deny")
"""What the permission options send, in the order they are listed."""
_PERMISSION_WORDS = {"y": "once", "yes": "once", "s": "session", "a": "always", "n": "deny", "no": "deny"}
_PERMISSION_KEYS = {"y": "once", "s": "session", "a": "always", "n": "deny",
                    **{str(n): choice for n, choice in enumerate(PERMISSION_CHOICES, start=1)}}
"""Keys that answer an approval at once while the prompt is empty (as in Claude Code and aider)."""

_MODES = {"answer": "answer", "approval": "permission", "guidance": "guidance", "task": "task", None: "busy"}
"""The prompt's mode for what the agent waits for (None: it works)."""
_NEXT_STEP = {
    "turn-paused": "ctrl+s resumes; or type guidance and press enter",
    "turn-halted": "type guidance and press enter to continue",
    "turn-error": "type a message to try again",
}
"""What the user can do after a turn ended this way, by the describer's role for it."""


class PromptArea(Vertical):
    """Question, hint and input; says ``Submitted(text, mode)`` when the user sends something."""

    DEFAULT_CSS = """
    PromptArea { height: auto; dock: bottom; }
    PromptArea #question { display: none; height: auto; max-height: 12; padding: 0 1;
        border-top: solid $secondary; }
    PromptArea.-answer #question, PromptArea.-permission #question { display: block; }
    PromptArea.-permission #question { border-top: solid $warning; }
    PromptArea.-permission #question-text { color: $warning; }
    PromptArea.-permission #prompt-input { border: tall $warning; }
    PromptArea #question-text { color: $secondary; text-style: bold; }
    PromptArea #question-options { height: auto; max-height: 8; border: none; padding: 0; }
    PromptArea #prompt-hint { height: auto; padding: 0 1; color: $text-muted; }
    PromptArea #queued { display: none; height: auto; max-height: 4; padding: 0 1; color: $accent; }
    PromptArea.-queued #queued { display: block; }
    PromptArea.-guidance #prompt-hint { color: $warning; }
    PromptArea.-answer #prompt-input { border: tall $secondary; }
    PromptArea.-guidance #prompt-input { border: tall $warning; }
    """

    mode: reactive[PromptMode] = reactive("task")
    """What submitting does now."""
    hint: reactive[str] = reactive("")
    """The line above the input (a pause or halt reason, the state)."""

    class Submitted(Message):
        """The user sent text (or picked an option) in the current mode."""

        def __init__(self, text: str, mode: PromptMode, typed: str = "") -> None:
            super().__init__()
            self.text = text
            """What to send: the task, the answer or the guidance."""
            self.mode = mode
            """The mode the prompt was in."""
            self.typed = typed
            """The editor's text when it was sent (chips unexpanded; empty for a menu pick or a
            key): what ``consume`` takes out once it is used, sparing what was typed since."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.question: ClarificationRequested | None = None
        self.permission: PermissionRequested | None = None
        # Attributes, not queries: the app may still set the mode while the screen closes.
        self.first = FirstFramePrompt(placeholder=_PLACEHOLDERS["task"], id="prompt-first")
        """What the first frame shows for the editor; replaced by it in ``upgrade``."""
        self._input: PromptInput | None = None
        self._upgraded = False
        """The editor has replaced the stand-in."""
        self.menu: CompletionMenu | None = None
        """The completion menu; None until ``mount_extras`` (just after the first frame)."""
        self._question_text = Static(id="question-text")
        self._options = OptionList(id="question-options")
        self._hint = Static(id="prompt-hint")
        self._queued = Static(id="queued")
        self._commands: list[SlashCommand] | None = None
        self.paths: list[str] | None = None
        """What ``@`` offers; None until the app has listed the workspace."""
        self.paths_listed_at = 0.0
        """When the listing was last asked for (monotonic seconds)."""
        self.history: PromptHistory | None = None
        """What up/down and ctrl+r go through; None until the app has loaded it."""
        self._history_at: int | None = None
        """Where up/down is in the history (None: at the draft)."""
        self._draft = ""
        self._explanation: Notification | None = None
        """What ``?`` put on screen at an approval."""
        self._decided: PermissionRequested | None = None
        """The request a verdict key was sent for: a second key (a double press) waits for the
        next request rather than answering it unseen."""
        self._turn_hint = ""
        """How the last turn ended and what to do next; shown while the agent waits for a task or guidance."""

    def compose(self) -> Iterable[Widget]:
        # The first frame has the hint and the editor's stand-in only. The question box, the
        # queued list and the completion menu (two OptionLists, with their stylesheets to parse
        # and apply) show nothing before a session exists; ``mount_extras`` mounts them, and
        # ``upgrade`` the editor, just after that frame.
        yield self._hint
        yield self.first

    @property
    def input(self) -> PromptInput:
        """The editor, made on first use: in the app that is ``upgrade``, just after the first
        frame and before any session (tests may ask for it sooner, to stop its cursor blinking).
        Until it is mounted, what is typed is in ``first``."""
        if self._input is None:
            from agentcli.tui.widgets._prompt_input import PromptInput

            editor = PromptInput(placeholder=self.first.placeholder, id="prompt-input")
            editor.router = self
            editor.disabled = self.first.disabled
            self._input = editor
        return self._input

    async def upgrade(self) -> None:
        """Replace the first frame's stand-in by the editor, which gets every key and paste the
        stand-in kept (in order, before any typed later) and the focus if the stand-in had it."""
        if self._upgraded:
            return
        self._upgraded = True
        editor = self.input
        editor.display = False  # one frame with both would move the screen by three rows
        await self.mount(editor, before=self.first)
        # From here to the end no await: keys the app routes meanwhile go to the stand-in and are
        # in what it hands over, or come after the focus moved and go to the editor.
        had_focus = self.screen.focused is self.first
        editor.display = True
        self.first.display = False
        if had_focus:
            self.screen.set_focus(editor, scroll_visible=False)
        self.first.hand_over(editor)
        await self.first.remove()

    @property
    def commands(self) -> list[SlashCommand]:
        """What ``/`` offers: the built-in commands and the custom ones (the app adds those)."""
        if self._commands is None:
            from agentcli.prompt.slash import BUILT_IN

            self._commands = list(BUILT_IN)
        return self._commands

    @commands.setter
    def commands(self, commands: list[SlashCommand]) -> None:
        self._commands = commands

    async def mount_extras(self) -> None:
        """Mount the question box, the queued list and the completion menu over the hint."""
        from agentcli.tui.widgets._prompt_menu import CompletionMenu

        self.menu = CompletionMenu(id="completion")
        await self.mount_all([Vertical(self._question_text, self._options, id="question"), self._queued, self.menu],
                             before=self._hint)
        self._update_menu()  # a "/" or "@" typed before the menu was there gets its menu now

    def _close_menu(self) -> None:
        if self.menu is not None:
            self.menu.close()

    def reset(self) -> None:
        """Forget the last session's question, request and hints (a new or another session)."""
        self.question = None
        self.permission = None
        self._turn_hint = ""
        self.hint = ""
        self.mode = "task"
        self.show_queued([])
        self._close_menu()
        self._update_menu()  # text typed while the session opened keeps its menu (a "/hel" its commands)

    def show_view(self, view: SessionView) -> None:
        """Become what the session waits for: the answer box, the approval, guidance or a task."""
        waiting = view.waiting_for
        # A question is answered, never paused away (``controller.pausable``); an approval may be.
        pause = " (ctrl+s pauses instead)" if view.allows("pause") and waiting == "approval" else ""
        if waiting == "answer" and view.question is not None and self.question is not view.question:
            self.ask(view.question)
        elif waiting == "approval" and view.permission is not None and self.permission is not view.permission:
            self.ask_permission(view.permission)
        self.mode = _MODES[waiting]
        if waiting == "answer":
            self.hint = "The agent asks you — answer below" + pause
        elif waiting == "approval":
            self.hint = "A tool call waits for your approval" + pause
        elif waiting is None:
            self._turn_hint = ""  # a new turn: how the last one ended no longer matters
            self.hint = f"{view.control}… ctrl+s or esc pauses" if view.allows("pause") else f"{view.control}…"
        else:
            self.hint = self._turn_hint

    def show_turn_end(self, event: TurnEnded) -> None:
        """Say how the turn ended and what to do now; a completed turn clears the hint (the stream
        says it), a question or an approval says what to do itself."""
        from agentcli.describe import describe

        description = describe(event)
        if description is None or description.role in ("turn-clarify", "turn-approval"):
            return
        next_step = _NEXT_STEP.get(description.role)
        # An error's one line is in the stream just above; the hint only says what to do.
        said = description.label.rstrip(":") if description.role == "turn-error" else description.headline
        self._turn_hint = f"{said} — {next_step}" if next_step else ""
        if self.mode in ("task", "guidance"):
            self.hint = self._turn_hint

    def ask(self, question: ClarificationRequested) -> None:
        """Show the agent's question and options; the input becomes the answer box."""
        self.question = question
        self._question_text.update(Content(f"? {question.question}"))
        options = self._options
        options.set_options(Option(f"{n}. {text}", id=str(n)) for n, text in enumerate(question.options, start=1))
        options.display = bool(question.options)
        if question.options:
            options.highlighted = 0
        self.mode = "answer"

    def ask_permission(self, request: PermissionRequested) -> None:
        """Show a tool call that waits for approval, with the four ways to answer."""
        self.permission = request
        why = f"\n{request.reason}" if request.reason else ""
        text = Content(f"🔒 {request.tool}: {request.summary}{why}")
        from agentcli.tui.call_details import approval_detail

        diff = approval_detail(request.tool, request.arguments)  # what the edit would change
        self._question_text.update(Content("\n").join([text, diff]) if diff is not None else text)
        rules = ", ".join(request.rules or [request.rule])
        options = self._options
        options.set_options([
            Option("1. Allow once (y)", id="once"),
            Option(f"2. Allow for this session: {rules} (s)", id="session"),
            Option(f"3. Always allow: {rules} (a, saved in .agentcli.toml)", id="always"),
            Option("4. Deny (n)", id="deny"),
        ])
        options.display = True
        options.highlighted = 0
        self.mode = "permission"

    def watch_mode(self, old: str, new: str) -> None:
        self.set_class(new == "answer", "-answer")
        self.set_class(new == "permission", "-permission")
        self.set_class(new == "guidance", "-guidance")
        for field in (self.first, self._input):
            if field is not None:
                field.placeholder = _PLACEHOLDERS.get(new, "")
                field.disabled = new == "readonly"
        self.first.refresh()
        if new == "permission":
            self._close_menu()
        if new != "answer":
            self.question = None
        if new != "permission":
            self.permission = None
            self._forget_explanation()

    def watch_hint(self, hint: str) -> None:
        widget = self._hint
        widget.update(Content(hint))
        widget.display = bool(hint)

    def resolve(self, text: str) -> str:
        """An answer of just an option's number means that option; y/s/a/n answer a permission."""
        if self.mode == "permission":
            word = text.strip().lower()
            if word.isdigit() and 1 <= int(word) <= len(PERMISSION_CHOICES):
                return PERMISSION_CHOICES[int(word) - 1]
            return _PERMISSION_WORDS.get(word, word)
        if self.mode == "answer" and self.question is not None and text.strip().isdigit():
            number = int(text.strip())
            if 1 <= number <= len(self.question.options):
                return self.question.options[number - 1]
        return text

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        # Handlers by name, not ``@on(PromptInput.Submitted)``: that would import the editor
        # with this module, before the first frame. The editor is this prompt's only one.
        event.stop()
        text = event.text.strip()
        if not text and self.mode not in ("guidance",):
            return
        if self.history is not None and text and self.mode != "permission":
            self.history.add(text)
        self._history_at = None
        self._close_menu()
        self.post_message(self.Submitted(self.resolve(text), self.mode, self.input.text))

    @property
    def draft(self) -> str:
        """What the user has typed and not sent (chips expanded): the editor's text, or what
        the first frame's stand-in kept; while up/down shows an earlier message unchanged, the
        text that was there before."""
        if self._input is None or not self._upgraded:
            return self.first.typed
        text = self._input.expanded
        at = self._history_at
        if at is not None and self.history is not None and at < len(self.history.entries) \
                and self._input.text == self.history.entries[at]:
            return self._draft
        return text

    def consume(self, typed: str | None) -> None:
        """Take what was sent (``typed``, the editor's text then) out of the editor.

        Sending takes a moment (attaching files, a picker for ``/model``): keys typed meanwhile
        are the user's next message and stay. Clearing whatever the editor held at the end (as
        before) dropped them. Text the user changed since is theirs now and is kept whole.
        """
        if typed is None or self._input is None:
            return
        field = self._input
        current = field.text
        if current == typed:
            field.clear()
        elif typed and current.startswith(typed):
            field.value = current[len(typed):].lstrip()

    # -- queued messages -----------------------------------------------------------------

    def show_queued(self, texts: list[str]) -> None:
        """List the messages waiting for the agent's next step (esc takes the last one back)."""
        lines = [f"» queued: {_first_line(text)}" for text in texts]
        if lines:
            lines[-1] += "   (esc takes it back)"
        self._queued.update(Content("\n".join(lines)))
        self.set_class(bool(texts), "-queued")

    # -- completion and history ----------------------------------------------------------

    class PathsWanted(Message):
        """``@`` was typed and the workspace's paths are not listed yet."""

    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        event.stop()
        if event.text_area is self._input:
            self._update_menu()

    def refresh_menu(self) -> None:
        """Offer again what the text at the cursor asks for (the paths have just been listed)."""
        self._update_menu()

    def _update_menu(self) -> None:
        menu = self.menu
        if menu is None or not menu.is_mounted:
            return  # the first instant: mount_extras offers what was typed once it is mounted
        from agentcli.tui.widgets._prompt_menu import history_choices, mention_choices, slash_choices, token_at

        if menu.kind == "history":
            assert self.history is not None
            menu.show("history", None, history_choices(self.history, self.input.text))
            return
        token = token_at(self.input.text, self.input.cursor_location)
        if token is None:
            menu.close()
        elif token.kind == "slash":
            menu.show("slash", token, slash_choices(self.commands, token.typed))
        elif token.kind == "mention":
            stale = time.monotonic() - self.paths_listed_at > PATHS_FRESH_S
            if self.paths is None or (stale and token.typed == ""):
                # Listed again when a new "@" starts and the list is old: the agent adds files.
                self.paths_listed_at = time.monotonic()
                self.post_message(self.PathsWanted())
            if self.paths is None:
                menu.close()
                return
            menu.show("mention", token, mention_choices(self.paths, token.typed))

    def on_prompt_input_history_searched(self, event: PromptInput.HistorySearched) -> None:
        event.stop()
        if self.history is None or not self.history.entries:
            self.app.notify("No earlier messages in this workspace yet.")
            return
        if self.menu is None:
            return  # the history is loaded after the menu is mounted
        from agentcli.tui.widgets._prompt_menu import history_choices

        self.menu.show("history", None, history_choices(self.history, self.input.text))

    def route_key(self, key: str) -> bool:
        """The menu takes up/down/tab/enter/escape while open; up/down walk the history at the
        first or last line of the text; while an approval waits and nothing is typed, y/s/a/n
        (or 1–4) answer it at once and ``?`` lists them."""
        if self.mode == "permission" and self.permission is not None and not self.input.text:
            return self._permission_key(key)
        menu = self.menu
        if menu is not None and menu.is_open:
            if key in ("tab", "enter") and self._menu_stale():
                # Keys typed faster than the editor reports its changes (a paste without bracketed
                # paste, tmux send-keys): the menu still offers what an earlier text asked for,
                # e.g. every command for "/" with /help first. Offer for the text as it is now.
                self._update_menu()
                if not menu.kind:  # (not ``is_open``: mypy holds it True from the test above)
                    # "/theme dark" no longer asks for the menu: enter sends it; tab does nothing
                    # (moving the focus away instead of completing would surprise more).
                    return key == "tab"
            if key == "enter" and menu.kind == "slash" and self._typed_command():
                menu.close()
                return False  # a command typed in full runs as typed, never the highlighted entry
            if key in ("up", "down"):
                menu.move(-1 if key == "up" else 1)
                return True
            if key in ("tab", "enter"):
                return self._accept(run=key == "enter")
            if key == "escape":
                menu.close()
                return True
            return False
        if key == "up" and self.input.cursor_location[0] == 0:
            return self._walk_history(-1)
        if key == "down" and self._history_at is not None \
                and self.input.cursor_location[0] == self.input.document.line_count - 1:
            return self._walk_history(1)
        return False

    def _menu_stale(self) -> bool:
        """The open menu was made for another text than the editor's (history search excepted:
        it lists for what was typed when ctrl+r was pressed)."""
        from agentcli.tui.widgets._prompt_menu import token_at

        menu = self.menu
        if menu is None or menu.kind not in ("slash", "mention"):
            return False
        return token_at(self.input.text, self.input.cursor_location) != menu.token

    def _typed_command(self) -> bool:
        """The editor holds a whole command's name (``/model``, ``/theme x``)."""
        from agentcli.prompt.slash import parse_slash

        slash = parse_slash(self.input.text)
        return slash is not None and any(command.name == slash.name for command in self.commands)

    def _permission_key(self, key: str) -> bool:
        """A single key at an approval (the prompt empty): True when it was taken."""
        if key == "question_mark":
            self.explain_permission()
            return True
        verdict = _PERMISSION_KEYS.get(key.lower() if len(key) == 1 else key)
        if verdict is None:
            return False  # any other key types: a message, a /command
        if self._decided is not self.permission:
            self._decided = self.permission
            self.post_message(self.Submitted(verdict, "permission"))
        return True

    def explain_permission(self) -> None:
        """Say what each key does at the waiting approval (``?``)."""
        request = self.permission
        if request is None:
            return
        from textual.notifications import Notification, Notify

        rules = ", ".join(request.rules or [request.rule])
        # Built here rather than through ``notify`` to keep a handle: it goes with the request.
        self._explanation = Notification(
            f"y (or 1) allow once\ns (2) allow for this session: {rules}\n"
            f"a (3) always allow: {rules} — saved in .agentcli.toml\nn (4) deny\n"
            "Each acts at once while the prompt is empty; or pick from the list.",
            title=f"Approve {request.tool}?", timeout=30, markup=False)
        self.app.post_message(Notify(self._explanation))

    def _forget_explanation(self) -> None:
        """Take the ``?`` explanation off the screen once its request is answered."""
        note, self._explanation = self._explanation, None
        if note is not None and note in self.app._notifications:  # Textual has no public unnotify
            self.app._unnotify(note)

    def on_key(self, event: events.Key) -> None:
        # The same keys when the options list has the focus (clicked, or reached with tab).
        if self.mode == "permission" and self.permission is not None and self.screen.focused is self._options \
                and self._permission_key(event.key):
            event.stop()
            event.prevent_default()

    def _accept(self, *, run: bool) -> bool:
        menu = self.menu
        assert menu is not None  # only called while it is open
        choice = menu.current
        kind, token = menu.kind, menu.token
        menu.close()
        if choice is None:
            return True
        field = self.input
        if kind == "history":
            field.value = choice.value
        elif kind == "slash" and token is not None:
            if run and choice.runs:
                field.value = ""
                self.post_message(self.Submitted(f"/{choice.value}", self.mode))
                return True
            field.replace(f"/{choice.value} ", token.start, token.end)
        elif kind == "mention" and token is not None:
            from agentcli.tui.widgets._prompt_menu import mention_text

            field.replace(mention_text(choice.value), token.start, token.end)
            if choice.value.endswith("/"):
                self._update_menu()  # a folder: go on completing inside it
        return True

    def _walk_history(self, step: int) -> bool:
        history = self.history
        if history is None or not history.entries:
            return False
        entries = history.entries
        at = self._history_at
        if at is None:
            if step > 0:
                return False
            self._draft = self.input.text
            at = len(entries)
        at += step
        if at < 0:
            return True  # the oldest: stay there
        if at >= len(entries):
            self._history_at = None
            self.input.value = self._draft
            return True
        self._history_at = at
        self.input.value = entries[at]
        return True

    @on(OptionList.OptionSelected, "#question-options")
    def _option_picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is None:
            return
        if self.mode == "permission":
            self.post_message(self.Submitted(event.option.id, "permission"))
        elif self.question is not None:
            self.post_message(self.Submitted(self.question.options[int(event.option.id) - 1], "answer"))


def _first_line(text: str, width: int = 70) -> str:
    first, *rest = text.strip().split("\n")
    return (first[:width] + ("…" if len(first) > width else "")) + (f" (+{len(rest)} lines)" if rest else "")
