"""Slash commands: the built-in catalog, and splitting ``/name args`` off what the user typed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One entry of the completion menu and of ``/help``."""

    name: str
    """Without the slash."""
    help: str
    """One line: what it does."""
    args: str = ""
    """How its arguments read in the help (``[ROLE] MODEL``)."""
    source: str = "built-in"
    """``built-in``, or the file a custom command came from."""


BUILT_IN: tuple[SlashCommand, ...] = (
    SlashCommand("help", "Keys and commands"),
    SlashCommand("new", "Start a new session in this workspace"),
    SlashCommand("sessions", "List this workspace's sessions to open one"),
    SlashCommand("resume", "Open an earlier session (the latest, or the one named)", "[ID]"),
    SlashCommand("model", "Switch the model of a role for this session", "[ROLE] [MODEL]"),
    SlashCommand("workflow", "Start a new session with another workflow", "[NAME]"),
    SlashCommand("compact", "Summarize the older part of the model's view now", "[FOCUS]"),
    SlashCommand("undo", "Restore the files to the snapshot before the last change"),
    SlashCommand("rewind", "Go back to before one of your messages (code, conversation or both)"),
    SlashCommand("diff", "Show what changed since the session started"),
    SlashCommand("cost", "Tokens and cost of this session"),
    SlashCommand("theme", "Switch the theme (remembered)", "[NAME]"),
    SlashCommand("init", "Have the agent draft an AGENTS.md for this repository"),
    SlashCommand("quit", "Leave (a running agent is paused first)"),
)
"""The TUI's own commands, in the order the menu lists them."""

BUILT_IN_NAMES = frozenset(command.name for command in BUILT_IN)


@dataclass(frozen=True, slots=True)
class SlashInput:
    """A message that starts with ``/name``."""

    name: str
    """The command's name, lower-cased, without the slash."""
    args: str
    """Everything after the name, stripped (may span lines)."""


def parse_slash(text: str) -> SlashInput | None:
    """``/name args`` as a command; None for anything else.

    A leading ``//`` or a slash followed by a path (``/usr/bin is odd``) is a message, not a
    command: only a name of letters, digits, ``-``, ``_`` and ``:`` counts.
    """
    stripped = text.lstrip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    head, newline, more = head.partition("\n")
    if newline:
        rest = more + (" " + rest if rest else "")
    name = head.strip().lower()
    if not name or not all(ch.isalnum() or ch in "-_:" for ch in name):
        return None
    return SlashInput(name=name, args=rest.strip())


def matching(commands: list[SlashCommand], typed: str) -> list[SlashCommand]:
    """The commands for the menu while ``/typed`` is being written: prefix matches first, then
    the ones that merely contain the letters in order (``/cmp`` finds ``compact``)."""
    typed = typed.lower()
    prefix = [c for c in commands if c.name.startswith(typed)]
    rest = [c for c in commands if c not in prefix and _subsequence(typed, c.name)]
    return prefix + rest


def _subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)
