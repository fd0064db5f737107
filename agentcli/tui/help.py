"""The help screen (``f1``, ``?`` in the stream, ``/help``) and the one-line pick lists the slash
commands open (sessions, models, workflows, themes, rewind points)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agentcli.prompt.slash import SlashCommand

if TYPE_CHECKING:
    from rich.console import RenderableType

KEYS: tuple[tuple[str, str], ...] = (
    ("enter", "send the message (or run the /command)"),
    ("ctrl+j · shift+enter · \\ enter", "new line in the prompt"),
    ("ctrl+o", "expand pasted text chips to edit them"),
    ("up / down", "earlier messages sent in this workspace"),
    ("ctrl+r", "search earlier messages"),
    ("/", "commands (tab completes, enter runs)"),
    ("@path", "attach a file's content or a folder's listing"),
    ("!command", "run a shell command in the workspace; its output joins the conversation"),
    ("ctrl+s · esc", ("pause the agent / resume it, the prompt's text sent as guidance (esc first takes back "
                      "a queued message; in a side pane it goes back to the prompt)")),
    ("ctrl+c", "copies selected text; with none, pauses a running agent as ctrl+s does"),
    ("pageup · pagedown", "page the conversation without leaving the prompt"),
    ("y · s · a · n  (1–4)", ("at an approval, with the prompt empty: allow once · for the session · "
                             "always · deny (? explains)")),
    ("1, 2, … enter", "at a question: pick that option (or type any answer)"),
    ("ctrl+b", "show or hide the side panes (graph, tool calls, snapshots)"),
    ("ctrl+g · ctrl+t · ctrl+l", "state graph · tool calls · snapshot timeline"),
    ("f2 · f3 · f4", "focus the timeline · the tool calls · the prompt"),
    ("ctrl+n", "new session"),
    ("ctrl+p", "command palette: every action by name"),
    ("f1 · ? outside the prompt", "this help (↑ ↓ pageup pagedown scroll it)"),
    ("ctrl+q · /quit", "quit (a running agent is paused first, so it can be resumed)"),
)

PANE_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓ ← → · home · end", "snapshot timeline: scrub; the preview shows the entry's diff"),
    ("d", "snapshot timeline: compare with the working tree / the previous snapshot"),
    ("enter", "snapshot timeline: restore the files to the snapshot (lists what changes, asks first)"),
    ("u", "snapshot timeline: undo the last restore (also /undo)"),
    ("?", "state graph: show or hide the legend"),
    ("enter · space", "stream: open or fold a tool call or a thought"),
    ("end", "stream: jump to the newest message"),
    ("any letter", "in a pane or the stream: typed into the prompt, which takes the focus"),
)
"""The keys the side panes and the stream have of their own (README "The TUI")."""


def help_text(commands: Iterable[SlashCommand], problems: Iterable[str] = (),
              mcp_tools: Iterable[tuple[str, str]] = ()) -> RenderableType:
    """The help's body: keys, then commands, then the MCP servers' tools (name, description),
    then any command file that could not be used.

    Rich grids rather than one markup string: the descriptions wrap under themselves at 80
    columns instead of under the keys.
    """
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    def grid(rows: Iterable[tuple[str, str]]) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column(ratio=1)
        for key, what in rows:
            table.add_row(key, what)
        return table

    parts: list[RenderableType] = [Text("Keys", style="bold underline"), grid(KEYS), Text(""),
                                   Text("In the panes (f2, f3, or a click)", style="bold underline"),
                                   grid(PANE_KEYS), Text(""), Text("Commands", style="bold underline")]
    parts.append(grid((f"/{c.name} {c.args}".rstrip(),
                       c.help + ("" if c.source == "built-in" else f"  ({c.source})")) for c in commands))
    mcp_tools = list(mcp_tools)
    if mcp_tools:
        parts += [Text(""), Text("MCP tools (the mcp servers pane shows each server's state)",
                                 style="bold underline"), grid(mcp_tools)]
    problems = list(problems)
    if problems:
        parts += [Text(""), Text("Command files that could not be used", style="bold underline")]
        parts += [Text(problem) for problem in problems]
    return Group(*parts)


class HelpScreen(ModalScreen[None]):
    """Keys and commands, over the app; any of escape, q, f1 closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 96; max-width: 100%; height: auto; max-height: 100%;
        border: thick $accent; background: $surface; padding: 0 1; }
    HelpScreen #help-title { text-style: bold; }
    HelpScreen VerticalScroll { height: auto; max-height: 100%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f1", "close", "Close", id="agentcli.help.close", tooltip="Close the help"),
    ]

    def __init__(self, body: RenderableType) -> None:
        super().__init__()
        self.body = body

    def compose(self) -> Iterable[Widget]:
        with Vertical():
            yield Static("agentcli — help  (esc closes)", id="help-title")
            with VerticalScroll():
                yield Static(self.body, id="help-body")

    def on_mount(self) -> None:
        # The body scrolls with the keys only while it has the focus: at 80x24 the help is three
        # screens long, and with nothing focused pagedown and the arrows did nothing.
        self.query_one(VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)


class PickOne(ModalScreen[str | None]):
    """A titled list to pick one from; dismisses with the picked id, or None on escape."""

    DEFAULT_CSS = """
    PickOne { align: center middle; }
    PickOne > Vertical { width: 90; max-width: 100%; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1; }
    PickOne #pick-title { text-style: bold; }
    PickOne OptionList { height: auto; max-height: 20; border: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="agentcli.pick.cancel", tooltip="Close without picking"),
    ]

    def __init__(self, title: str, options: list[tuple[str, str]]) -> None:
        """
        Args:
            title: What is being picked (and how).
            options: (id, label) pairs, in order.
        """
        super().__init__()
        self.title_text = title
        self.options = options

    def compose(self) -> Iterable[Widget]:
        with Vertical():
            yield Static(Content(self.title_text), id="pick-title")
            yield OptionList(*(Option(Content(label), id=key) for key, label in self.options), id="pick-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
