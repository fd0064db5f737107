"""Custom commands: Markdown files in ``.agentcli/commands/`` and ``~/.config/agentcli/commands/``.

A file ``review.md`` is the command ``/review``; its body is the message sent, with
``$ARGUMENTS`` (everything after the name) and ``$1`` … ``$9`` (the words, shell-quoted
allowed) substituted. Optional front matter between ``---`` lines sets ``description``,
``model`` and ``workflow``. The workspace's file wins over the user's of the same name; a file
that cannot be used is listed with its path and the problem, never silently dropped.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.config_sources import config_home, utf8_problem
from agentcli.prompt.slash import BUILT_IN_NAMES

FIELDS = ("description", "model", "workflow")
"""What the front matter may set."""
_NAME = re.compile(r"^[a-z0-9][a-z0-9_:-]*$")
_POSITIONAL = re.compile(r"\$([1-9])")


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """One usable command file."""

    name: str
    path: Path
    body: str
    """The message template."""
    description: str = ""
    model: str | None = None
    """A litellm model string the command runs on (its default role), if set."""
    workflow: str | None = None
    """The workflow the command runs in, if set."""

    def expand(self, args: str) -> str:
        """The message for ``/name args``: ``$ARGUMENTS`` and ``$1``… replaced; with neither in
        the template, the arguments are appended (so ``/review auth.py`` still says what)."""
        try:
            words = shlex.split(args)
        except ValueError:
            words = args.split()  # an unclosed quote: plain words rather than an error
        uses_args = "$ARGUMENTS" in self.body or _POSITIONAL.search(self.body) is not None
        text = self.body.replace("$ARGUMENTS", args)
        text = _POSITIONAL.sub(lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "", text)
        if not uses_args and args:
            text = f"{text}\n\n{args}"
        return text.strip()


@dataclass(frozen=True, slots=True)
class CommandProblem:
    """A command file that could not be used, and why."""

    path: Path
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


@dataclass
class CustomCommands:
    """The commands found and the files that failed."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: list[CommandProblem] = field(default_factory=list)


def command_dirs(workspace: Path, user_dir: Path | None = None) -> list[Path]:
    """Where commands are looked for, the one that wins first."""
    return [workspace / ".agentcli" / "commands", (user_dir or config_home()) / "commands"]


def load_commands(workspace: Path, user_dir: Path | None = None) -> CustomCommands:
    """Every custom command of the workspace and the user, with the files that failed."""
    found = CustomCommands()
    for folder in command_dirs(workspace, user_dir):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            result = parse_command(path)
            if isinstance(result, CommandProblem):
                found.problems.append(result)
            elif result.name not in found.commands:
                found.commands[result.name] = result
    return found


def parse_command(path: Path) -> CustomCommand | CommandProblem:
    """Read one command file."""
    name = path.stem.lower()
    if not _NAME.match(name):
        return CommandProblem(path, f"the name {path.stem!r} is not a command name (letters, digits, - _ :)")
    if name in BUILT_IN_NAMES:
        return CommandProblem(path, f"/{name} is a built-in command; rename the file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        return CommandProblem(path, utf8_problem(error))
    except OSError as error:
        return CommandProblem(path, f"cannot be read: {error}")
    meta: dict[str, str] = {}
    body = text
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---")
        except StopIteration:
            return CommandProblem(path, "the front matter opened with --- is never closed with ---")
        for number, line in enumerate(lines[1:end], start=2):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, colon, value = line.partition(":")
            key = key.strip().lower()
            if not colon:
                return CommandProblem(path, f"line {number}: expected 'key: value', got {line.strip()!r}")
            if key not in FIELDS:
                return CommandProblem(path, f"line {number}: unknown field {key!r} (known: {', '.join(FIELDS)})")
            meta[key] = value.strip().strip("\"'")
        body = "\n".join(lines[end + 1:])
    if not body.strip():
        return CommandProblem(path, "the command has no text to send")
    return CustomCommand(name=name, path=path, body=body.strip(), description=meta.get("description", ""),
                         model=meta.get("model") or None, workflow=meta.get("workflow") or None)


class CommandError(Exception):
    """A ``/command`` that cannot run headless: a TUI-only one, an unknown one, a bad file."""


def headless_task(workspace: Path, text: str, user_dir: Path | None = None) -> tuple[str, CustomCommand | None]:
    """What ``agentcli run TEXT`` sends: the text itself, or a custom command's expansion.

    Returns:
        The message, and the command it came from (its model and workflow apply), if any.

    Raises:
        CommandError: a built-in command (those belong to the TUI), or an unknown or broken one.
    """
    from agentcli.prompt.slash import parse_slash

    if text.lstrip().startswith("//"):  # "//text" sends "/text", as the TUI's prompt does
        return text.lstrip()[1:], None
    slash = parse_slash(text)
    if slash is None:
        return text, None
    if slash.name in BUILT_IN_NAMES:
        raise CommandError(f"/{slash.name} is a TUI command; headless runs take custom commands "
                           "(.agentcli/commands/NAME.md) or a task")
    found = load_commands(workspace, user_dir)
    command = found.commands.get(slash.name)
    if command is None:
        broken = [p for p in found.problems if p.path.stem.lower() == slash.name]
        if broken:
            raise CommandError(str(broken[0]))
        known = ", ".join(f"/{name}" for name in sorted(found.commands)) or "none"
        raise CommandError(f"unknown command /{slash.name} (custom commands here: {known}); "
                           "to send the text as a task, start it with // or a word")
    return command.expand(slash.args), command
