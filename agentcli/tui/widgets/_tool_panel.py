"""The tool-call panel: every call with its status, and the selected one in full."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual import on
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agentcli.events import ToolCallFinished, ToolCallStarted
from agentcli.tui.call_details import arguments_of
from agentcli.tui.call_details import call_detail as edit_detail
from agentcli.tui.calls import ToolCallInfo, ToolCalls, format_duration
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.widgets._blocks import status_mark
from agentcli.tui.widgets._laid_out import SteadyOptionList

DETAIL_OUTPUT_CHARS = 20_000
"""The detail view shows this much of a result (tools already cap what the model sees)."""


def call_option_prompt(info: ToolCallInfo, now: float) -> Content:
    elapsed = format_duration(info.elapsed(now))
    return Content.assemble(status_mark(info), " ", (info.name, "bold"), " ", (info.preview, "$text-muted"),
                            " ", (elapsed, "$text-muted"))


def call_detail(info: ToolCallInfo, now: float) -> Content:
    """Everything about one call: status, timing, arguments, result."""
    status = {"running": "running", "ok": "ok", "error": "error", "interrupted": "interrupted"}[info.status]
    timing = f"{format_duration(info.elapsed(now))}" + (" so far" if info.status == "running" else "")
    parts = [
        Content.assemble(status_mark(info), " ", (info.name, "bold"), "  ", (status, "italic"), "  ", timing),
        Content.styled(f"id {info.call_id}", "$text-muted"),
    ]
    # Edits as a diff, commands as the command: a file's content as escaped JSON reads badly.
    change = (edit_detail(info.name, info.arguments, "", False, True) if info.name in ("edit_file", "write_file")
              else Content.styled(f"$ {arguments_of(info.arguments).get('command', info.preview)}", "bold")
              if info.name == "bash" else None)
    if change is not None:
        parts += [Content.styled("change" if info.name != "bash" else "command", "bold $text-muted"), change]
    else:
        parts += [Content.styled("arguments", "bold $text-muted"), Content(info.pretty_arguments)]
    if info.status != "running":
        output = info.output
        if len(output) > DETAIL_OUTPUT_CHARS:
            output = output[:DETAIL_OUTPUT_CHARS] + f"\n… {len(info.output) - DETAIL_OUTPUT_CHARS:,} more characters"
        parts += [Content.styled("result", "bold $text-muted"), Content(output.rstrip() or "(empty)")]
        if info.error and info.error not in info.output:
            parts.append(Content.styled(info.error, "$tool-error"))
        if info.files_changed:
            parts.append(Content.styled("changed: " + ", ".join(info.files_changed), "$text-muted"))
    return Content("\n").join(parts)


class ToolPanel(Vertical):
    """A list of calls (line API, so thousands stay fast) over the selected call's details."""

    DEFAULT_CSS = """
    ToolPanel { height: 1fr; }
    ToolPanel > OptionList { height: 1fr; min-height: 3; border: none; padding: 0; }
    ToolPanel > #tool-detail { height: 1fr; border-top: solid $panel-lighten-1; padding: 0 1; }
    """

    class CallSelected(Message):
        """The user picked a call in the panel; the stream scrolls to it."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id
            """The tool call's id."""

    def __init__(self, calls: ToolCalls, clock: Callable[[], float], *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.calls = calls
        self._clock = clock
        self._quiet: str | None = None
        """A call highlighted by the program (not the user): its highlight is not announced."""
        self.following = True
        """Highlight each new call until the user picks one."""
        self.selected: str | None = None
        self.option_list = SteadyOptionList(id="tool-list")
        self._detail = Static(Content.styled("No tool calls yet.", "$text-muted"), id="tool-detail-text")

    def compose(self) -> Iterable[Widget]:
        yield self.option_list
        with VerticalScroll(id="tool-detail"):
            yield self._detail

    def load(self, calls: Iterable[ToolCallInfo]) -> None:
        """Show calls already made (a reopened session)."""
        now = self._clock()
        options = [Option(call_option_prompt(info, now), id=info.call_id) for info in calls]
        self.option_list.set_options(options)
        if options:
            self._highlight(options[-1].id or "", quiet=True)

    def clear(self) -> None:
        self.option_list.clear_options()
        self.selected = None
        self.following = True
        self._detail.update(Content.styled("No tool calls yet.", "$text-muted"))

    def on_session_event_posted(self, message: SessionEventPosted) -> None:
        event = message.event
        if isinstance(event, ToolCallStarted):
            info = self.calls.get(event.call_id)
            if info is None:
                return
            self.option_list.add_option(Option(call_option_prompt(info, self._clock()), id=info.call_id))
            if self.following:
                self._highlight(info.call_id, quiet=True)
        elif isinstance(event, ToolCallFinished):
            info = self.calls.get(event.call_id)
            if info is None:
                return
            try:
                self.option_list.replace_option_prompt(info.call_id, call_option_prompt(info, self._clock()))
            except Exception:  # noqa: BLE001 - OptionDoesNotExist: a result with no start
                self.option_list.add_option(Option(call_option_prompt(info, self._clock()), id=info.call_id))
            if self.selected == info.call_id:
                self._show(info)

    def refresh_running(self) -> None:
        """Update the elapsed time of running calls."""
        now = self._clock()
        for info in self.calls.running:
            try:
                self.option_list.replace_option_prompt(info.call_id, call_option_prompt(info, now))
            except Exception:  # noqa: BLE001 - not listed (yet)
                continue
            if self.selected == info.call_id:
                self._show(info)

    def select(self, call_id: str) -> None:
        """Show a call picked elsewhere (in the stream), without echoing the pick back."""
        if call_id in self.calls:
            self.following = False
            self._highlight(call_id, quiet=True)

    def _highlight(self, call_id: str, *, quiet: bool) -> None:
        option_list = self.option_list
        try:
            index = option_list.get_option_index(call_id)
        except Exception:  # noqa: BLE001 - OptionDoesNotExist
            return
        if quiet:
            self._quiet = call_id
        option_list.highlighted = index
        info = self.calls.get(call_id)
        if info is not None:
            self.selected = call_id
            self._show(info)

    def _show(self, info: ToolCallInfo) -> None:
        self._detail.update(call_detail(info, self._clock()))

    @on(OptionList.OptionHighlighted, "#tool-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        call_id = event.option.id
        if call_id is None:
            return
        info = self.calls.get(call_id)
        if info is not None:
            self.selected = call_id
            self._show(info)
        if self._quiet == call_id:
            self._quiet = None
            return
        self.following = call_id == self.option_list.get_option_at_index(self.option_list.option_count - 1).id
        self.post_message(self.CallSelected(call_id))

    @on(OptionList.OptionSelected, "#tool-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.CallSelected(event.option.id))
