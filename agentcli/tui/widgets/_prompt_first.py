"""The prompt's first-frame form: one light widget that looks like the empty, focused editor.

The real editor is a ``TextArea`` (``_prompt_input``): importing, building and styling it cost
~12 ms of the first frame (bench/tui_startup.py), for a box that is empty then. So the first
frame shows this stand-in instead: the same border, padding, colours, placeholder and cursor,
focused from the start. It keeps every key and paste sent to it, in order, and the prompt hands
them to the real editor when it replaces this one just after the frame
(``PromptArea.upgrade``): the editor then does with them exactly what it would have done had it
been there from the start (text, cursor, newlines, enter, bindings).
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.content import Content
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget


class FirstFramePrompt(Widget, can_focus=True):
    """Stands in for the prompt's editor in the first frame and keeps what is typed into it."""

    # The rules of ``TextArea`` and ``PromptInput`` that show on an empty, focused editor, under
    # the same component class names. tests/tui/test_first_frame.py compares the two screens
    # cell by cell, so a Textual release that restyles its TextArea fails there, not silently.
    DEFAULT_CSS = """
    FirstFramePrompt {
        width: 1fr; height: 3; border: tall $border-blurred; padding: 0 1; margin: 0 0;
        color: $foreground; background: $surface; pointer: text;
        & .text-area--cursor { text-style: $input-cursor-text-style; }
        & .text-area--placeholder { color: $text 40%; }
        &:focus { border: tall $border; }
        &:ansi .text-area--cursor {
            color: $input-cursor-foreground; background: $input-cursor-background; text-style: reverse;
        }
        &:dark .text-area--cursor { color: $input-cursor-foreground; background: $input-cursor-background; }
        &:light .text-area--cursor { color: $text 90%; background: $foreground 70%; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"text-area--cursor", "text-area--placeholder"}

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self.placeholder = placeholder
        """Shown while nothing is typed (the prompt's mode sets it, as it does the editor's)."""
        self.kept: list[events.Key | events.Paste] = []
        """Every key and paste sent here, oldest first, for the editor that replaces this one."""
        self.successor: Widget | None = None
        """The editor, once it has taken over: anything still sent here goes on to it."""

    def _forward_event(self, event: events.Event) -> None:
        # The app (keys, pastes) and the screen (the mouse) call this synchronously on their own
        # task when they route an event here. Keeping keys at this point rather than in a key
        # handler means none can wait in this widget's queue at the moment of the hand-over, so
        # the editor gets them strictly before any key routed to it afterwards.
        if isinstance(event, events.Key | events.Paste):
            copy = _copy(event)
            if self.successor is not None:
                self.successor._forward_event(copy)
                return
            self.kept.append(copy)
            self.refresh()
            return
        super()._forward_event(event)

    def hand_over(self, successor: Widget) -> None:
        """Send what was kept to ``successor`` (focused by now), and from now on all that comes."""
        self.successor = successor
        kept, self.kept = self.kept, []
        for event in kept:
            successor._forward_event(event)

    @property
    def typed(self) -> str:
        """The text typed so far, as the editor will show it if nothing but characters, new lines
        and backspaces were pressed (what this widget draws until it is replaced)."""
        text: list[str] = []
        for event in self.kept:
            if isinstance(event, events.Paste):
                text.append(event.text)
            elif event.key in ("ctrl+j", "shift+enter"):  # the editor's new line
                text.append("\n")
            elif event.key == "backspace":
                if text:
                    text[-1] = text[-1][:-1]
            elif event.is_printable and event.character is not None:
                text.append(event.character)
        return "".join(text)

    def render_line(self, y: int) -> Strip:
        # As ``TextArea.render_line`` draws an empty editor: the placeholder's first line with
        # the cursor on its first cell; once keys are kept, what they typed and the cursor after it.
        if y != 0:
            return Strip.blank(self.content_size.width, self.visual_style.rich_style)
        width = self.content_size.width
        cursor = Style.from_rich_style(self.get_component_rich_style("text-area--cursor"))
        typed = self.typed.split("\n")[-1][-max(width - 1, 0):]  # its end, as the editor scrolls to it
        if typed or not self.placeholder:
            content = Content(typed + " ").stylize(cursor, len(typed), len(typed) + 1)
        else:
            lines = Content.from_text(self.placeholder).wrap(max(1, width)) or [Content()]
            content = lines[0].stylize(self.get_visual_style("text-area--placeholder"))
            if self.has_focus:
                content = content.stylize(cursor, 0, 1)
        return Strip(content.render_segments(self.visual_style), content.cell_length).crop(0, width)


def _copy(event: events.Key | events.Paste) -> events.Key | events.Paste:
    """A fresh event to post again (one that was routed once carries its routing flags)."""
    if isinstance(event, events.Key):
        return events.Key(event.key, event.character)
    return events.Paste(event.text)
