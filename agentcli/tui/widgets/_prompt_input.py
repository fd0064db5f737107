"""The prompt's text box: multi-line, with paste chips, and enter that sends.

A ``TextArea`` rather than an ``Input``: an ``Input`` keeps only the first line of a paste
(without a word), and has no way to type a newline. ``enter`` sends; ``shift+enter`` (where the
terminal reports it), ``ctrl+j`` and a trailing ``\\`` before ``enter`` start a new line. A
paste of many lines shows as a chip (``[pasted 120 lines #1]``) that stands for the whole text
and expands in place with ``ctrl+o``; what is sent always has every line.
"""

from __future__ import annotations

import re
from typing import ClassVar, Protocol

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea

CHIP_LINES = 8
"""A paste of more lines than this becomes a chip."""
CHIP_CHARS = 1200
"""…or of more characters than this."""
_CHIP = re.compile(r"\[pasted \d+ lines? #(\d+)\]")


class KeyRouter(Protocol):
    """Whoever owns the completion menu and the history sees keys first."""

    def route_key(self, key: str) -> bool:
        """Handle ``key`` (up, down, tab, enter, escape…) if the menu or the history wants it."""
        ...


class PromptInput(TextArea):
    """The text box of the prompt."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; border: tall $border-blurred; padding: 0 1; }
    PromptInput:focus { border: tall $border; }
    PromptInput .text-area--cursor-line { background: transparent; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+j,shift+enter", "newline", "New line", show=False, id="agentcli.prompt.newline",
                tooltip="Start a new line in the prompt (a trailing \\ before enter does it too)"),
        Binding("ctrl+o", "expand_pastes", "Expand paste", show=False, id="agentcli.prompt.expand",
                tooltip="Replace the [pasted N lines] chips with the text they stand for, to edit it"),
        Binding("ctrl+r", "search_history", "History", show=False, id="agentcli.prompt.history",
                tooltip="Search what you sent before in this workspace"),
        Binding("pageup", "page_conversation(-1)", "Page up", show=False, id="agentcli.prompt.page_up",
                tooltip="Page the conversation back (the prompt's own lines while it is taller than its box)"),
        Binding("pagedown", "page_conversation(1)", "Page down", show=False, id="agentcli.prompt.page_down",
                tooltip="Page the conversation forward (the prompt's own lines while it is taller than its box)"),
    ]

    class Submitted(Message):
        """The user pressed enter on a message."""

        def __init__(self, prompt_input: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt_input = prompt_input
            self.text = text
            """Everything typed, chips expanded."""

        @property
        def control(self) -> PromptInput:
            return self.prompt_input

    class HistorySearched(Message):
        """ctrl+r: search the history for what is typed."""

    class ConversationPaged(Message):
        """pageup / pagedown in a prompt that fits its box: the conversation pages instead."""

        def __init__(self, direction: int) -> None:
            super().__init__()
            self.direction = direction
            """-1 back (older), 1 forward."""

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", placeholder=placeholder,
                         highlight_cursor_line=False, id=id)
        self.router: KeyRouter | None = None
        self.pastes: dict[int, str] = {}
        """What each chip stands for, by its number."""
        self._chips = 0

    @property
    def value(self) -> str:
        """What is typed, as shown (chips not expanded)."""
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def render_line(self, y: int) -> Strip:
        # Textual wraps the placeholder to the content width, and wrapping to 0 raises: the app
        # crashed when a terminal went from 200 columns to 80, for the frame laid out before the
        # narrow layout hides the side panes (they left the prompt no column of its own).
        if self.content_size.width <= 0:
            return Strip.blank(self.size.width, self.visual_style.rich_style)
        return super().render_line(y)

    @property
    def expanded(self) -> str:
        """What is typed with every chip replaced by its text: what is sent."""
        return _CHIP.sub(lambda m: self.pastes.get(int(m.group(1)), m.group(0)), self.text)

    def clear(self) -> None:  # type: ignore[override]  # TextArea.clear returns an EditResult no caller here needs
        super().clear()
        self.pastes.clear()

    async def _on_key(self, event: events.Key) -> None:
        if self.router is not None and self.router.route_key(event.key):
            event.stop()
            event.prevent_default()
            return
        if event.key in ("ctrl+j", "shift+enter"):
            # Here rather than only through the binding: a binding's action runs after the keys
            # already queued, so a fast typist (or a paste without bracketed paste) would see
            # the newline land after the next characters.
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            row, column = self.cursor_location
            line = self.document[row]
            if column > 0 and line[:column].endswith("\\"):
                # The shell's way to go on: the backslash becomes the newline.
                self.replace("\n", (row, column - 1), (row, column))
                return
            self.post_message(self.Submitted(self, self.expanded))
            return
        if await self._run_own_binding(event):
            return
        await super()._on_key(event)

    async def _run_own_binding(self, event: events.Key) -> bool:
        """Run the editor's own binding for the key (backspace, arrows, ctrl+k, …) here and now.

        Textual runs a widget's bindings only once the key has bubbled up to the app, through the
        message queues, while printable keys are inserted where they arrive: keys sent faster than
        that round trip (a fast typist, a paste without bracketed paste, a terminal multiplexer's
        send-keys) were applied out of order — ``abcd``, left, ``x`` gave ``abcdx``
        (Textualize/textual#6605). Priority bindings ran before the key got here, as before. The
        user's keymap applies as it does on Textual's own path (a binding moved off this key does
        not run for it).
        """
        bindings = self._bindings
        keymap = self.app._keymap  # Textual's; its binding chain applies it the same way
        if keymap:
            bindings = bindings.copy()
            bindings.apply_keymap(keymap)
        for binding in bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return True
        return False

    async def _on_paste(self, event: events.Paste) -> None:
        if self.read_only:
            return
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.rstrip("\n").count("\n") + 1
        if lines > CHIP_LINES or len(text) > CHIP_CHARS:
            self._chips += 1
            self.pastes[self._chips] = text
            text = f"[pasted {lines} line{'s' if lines != 1 else ''} #{self._chips}]"
        event.stop()
        event.prevent_default()
        self.insert(text)
        self.focus()

    def action_newline(self) -> None:
        self.insert("\n")

    def action_expand_pastes(self) -> None:
        if not _CHIP.search(self.text):
            self.app.notify("No pasted text to expand.", severity="warning")
            return
        self.value = self.expanded
        self.pastes.clear()

    def action_search_history(self) -> None:
        self.post_message(self.HistorySearched())

    def action_page_conversation(self, direction: int) -> None:
        # A page key moving the cursor of a prompt that fits its box does nothing a reader
        # wants; paging what the agent wrote without leaving the prompt does.
        if self.wrapped_document.height > self.content_size.height:
            (self.action_cursor_page_up if direction < 0 else self.action_cursor_page_down)()
        else:
            self.post_message(self.ConversationPaged(direction))
