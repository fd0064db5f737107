"""The prompt's completion menu: slash commands after ``/``, paths after ``@``, history on ctrl+r.

The menu is an ``OptionList`` above the text box; the text box routes up/down/tab/enter/escape
here while the menu is open, so the cursor stays in the text (as in Claude Code and OpenCode).
What is offered comes from :mod:`agentcli.prompt` (Textual-free): this module only decides what
the text at the cursor asks for and how a choice rewrites it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agentcli.prompt.mentions import complete, mention
from agentcli.prompt.slash import SlashCommand, matching

if TYPE_CHECKING:  # a type only: the history (hashlib, json) is loaded after the first frame
    from agentcli.prompt.history import PromptHistory

MenuKind = Literal["slash", "mention", "history"]
MAX_ROWS = 8
_OPEN_QUOTE = re.compile(r'(?<![\w@])@"((?:[^"\\]|\\.)*)$')
"""A quoted mention still open at the cursor (``@"my fi``): completion goes on inside it."""


@dataclass(frozen=True, slots=True)
class Choice:
    """One row of the menu and what picking it does to the text."""

    label: str
    value: str
    """The command name, the path or the history entry."""
    runs: bool = False
    """A slash command without arguments: enter runs it at once."""


@dataclass(frozen=True, slots=True)
class Token:
    """The part of the text the menu would replace."""

    kind: MenuKind
    typed: str
    """What is typed after ``/`` or ``@`` (or the whole text, for the history)."""
    start: tuple[int, int]
    end: tuple[int, int]


def token_at(text: str, cursor: tuple[int, int]) -> Token | None:
    """What the text at the cursor asks to complete, if anything.

    ``/name`` completes only as the first word of the message (a slash later is a path);
    ``@path`` completes anywhere, from the ``@`` to the cursor, and so does ``@"a path`` (its
    quote still open: spaces are part of the name).
    """
    row, column = cursor
    lines = text.split("\n")
    if row >= len(lines):
        return None
    before = lines[row][:column]
    if row == 0 and before.startswith("/") and " " not in before and len(lines) == 1:
        return Token("slash", before[1:], (0, 0), (0, column))
    if (quoted := _OPEN_QUOTE.search(before)) is not None:
        typed = re.sub(r"\\(.)", r"\1", quoted.group(1))
        return Token("mention", typed, (row, quoted.start()), (row, column))
    word_start = max(before.rfind(" "), before.rfind("\t")) + 1
    word = before[word_start:]
    if word.startswith("@") and "@" not in word[1:]:
        return Token("mention", word[1:], (row, word_start), (row, column))
    return None


def slash_choices(commands: list[SlashCommand], typed: str) -> list[Choice]:
    # Enter runs a command whose arguments are optional; one that needs some gets them typed first.
    return [Choice(f"/{c.name}{' ' + c.args if c.args else ''}  —  {c.help}", c.name,
                   runs=not c.args or c.args.startswith("["))
            for c in matching(commands, typed)]


def mention_choices(paths: list[str], typed: str) -> list[Choice]:
    # Labelled as they will be written: a name with a space shows its quotes before it is picked.
    return [Choice(f"@{mention(path)}", path) for path in complete(paths, typed)]


def mention_text(path: str) -> str:
    """What picking ``path`` writes: ``@path `` (quoted when it must be), or for a folder the
    mention left open (``@src/``, ``@"my dir/``) so completion goes on inside it."""
    written = "@" + mention(path)
    if not path.endswith("/"):
        return written + " "
    return written[:-1] if written.endswith('"') else written


def history_choices(history: PromptHistory, typed: str) -> list[Choice]:
    return [Choice(_one_line(entry), entry) for entry in history.search(typed)]


def _one_line(text: str, width: int = 100) -> str:
    first, *rest = text.split("\n")
    more = f"  (+{len(rest)} lines)" if rest else ""
    return (first[:width] + ("…" if len(first) > width else "")) + more


class CompletionMenu(OptionList):
    """The rows on offer; the prompt decides when it shows."""

    DEFAULT_CSS = """
    CompletionMenu { display: none; height: auto; max-height: 10; border: tall $accent; padding: 0 1;
        background: $surface; }
    CompletionMenu.-open { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kind: MenuKind | None = None
        self.token: Token | None = None
        self.choices: list[Choice] = []

    @property
    def is_open(self) -> bool:
        return self.kind is not None

    def show(self, kind: MenuKind, token: Token | None, choices: list[Choice]) -> None:
        """Offer ``choices`` (closing the menu when there are none, except for history search,
        which stays open to say nothing matched)."""
        if not choices and kind != "history":
            self.close()
            return
        self.kind, self.token, self.choices = kind, token, choices
        options = [Option(Content(choice.label)) for choice in choices]
        if not options:
            options = [Option(Content("no earlier message matches"), disabled=True)]
        self.set_options(options)
        self.highlighted = 0 if choices else None
        self.add_class("-open")

    def close(self) -> None:
        self.kind, self.token, self.choices = None, None, []
        self.remove_class("-open")

    def move(self, step: int) -> None:
        if not self.choices:
            return
        current = self.highlighted if self.highlighted is not None else 0
        self.highlighted = (current + step) % len(self.choices)

    @property
    def current(self) -> Choice | None:
        if self.highlighted is None or not (0 <= self.highlighted < len(self.choices)):
            return None
        return self.choices[self.highlighted]
