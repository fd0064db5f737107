"""The prompt: a task box that turns into the answer box when the agent asks a question.

Above the input sit the question and its options (when the agent calls ``clarify``) and a hint
line that says what submitting does now: start a task, answer, resume with guidance. What it is
for comes from the session view's ``waiting_for``, never from the names of chart states.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual import on
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agentcli.describe import describe
from agentcli.events import ClarificationRequested, PermissionRequested, TurnEnded

if TYPE_CHECKING:  # the session layer is imported after the first frame, not for a type
    from agentcli.session.view import SessionView

PromptMode = str
"""``task`` (idle), ``busy`` (running), ``answer`` (a question waits), ``permission`` (a tool call
waits for approval), ``guidance`` (paused or halted)."""

_PLACEHOLDERS = {
    "task": "Describe a task and press enter",
    "busy": "The agent is working — ctrl+s pauses it",
    "answer": "Type your answer (or a number from the list) and press enter",
    "permission": "y allows once, n denies — or pick from the list above",
    "guidance": "Guidance for the agent (optional) — enter resumes",
    "readonly": "This session is shown read-only",
}

PERMISSION_CHOICES = ("once", "session", "always", "deny")
"""What the permission options send, in the order they are listed."""
_PERMISSION_WORDS = {"y": "once", "yes": "once", "s": "session", "a": "always", "n": "deny", "no": "deny"}

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

        def __init__(self, text: str, mode: PromptMode) -> None:
            super().__init__()
            self.text = text
            """What to send: the task, the answer or the guidance."""
            self.mode = mode
            """The mode the prompt was in."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.question: ClarificationRequested | None = None
        self.permission: PermissionRequested | None = None
        # Attributes, not queries: the app may still set the mode while the screen closes.
        self.input = Input(placeholder=_PLACEHOLDERS["task"], id="prompt-input")
        self._question_text = Static(id="question-text")
        self._options = OptionList(id="question-options")
        self._hint = Static(id="prompt-hint")
        self._turn_hint = ""
        """How the last turn ended and what to do next; shown while the agent waits for a task or guidance."""

    def compose(self) -> Iterable[Widget]:
        with Vertical(id="question"):
            yield self._question_text
            yield self._options
        yield self._hint
        yield self.input

    def reset(self) -> None:
        """Forget the last session's question, request and hints (a new or another session)."""
        self.question = None
        self.permission = None
        self._turn_hint = ""
        self.hint = ""
        self.mode = "task"

    def show_view(self, view: SessionView) -> None:
        """Become what the session waits for: the answer box, the approval, guidance or a task."""
        waiting = view.waiting_for
        pause = " (ctrl+s pauses instead)" if view.allows("pause") else ""
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
        self._question_text.update(Content(f"🔒 {request.tool}: {request.summary}{why}"))
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
        self.input.placeholder = _PLACEHOLDERS.get(new, "")
        self.input.disabled = new == "readonly"
        if new != "answer":
            self.question = None
        if new != "permission":
            self.permission = None

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

    @on(Input.Submitted, "#prompt-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text and self.mode not in ("guidance",):
            return
        self.post_message(self.Submitted(self.resolve(text), self.mode))

    @on(OptionList.OptionSelected, "#question-options")
    def _option_picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is None:
            return
        if self.mode == "permission":
            self.post_message(self.Submitted(event.option.id, "permission"))
        elif self.question is not None:
            self.post_message(self.Submitted(self.question.options[int(event.option.id) - 1], "answer"))
