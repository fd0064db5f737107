"""Allow and deny rules: ``tool`` or ``tool:pattern``.

- A bare tool name (``bash``, ``write_file``) matches every call of that tool.
- ``bash:PATTERN`` is an fnmatch pattern (``*``, ``?``, ``[...]``) matched against each simple
  command of the command line (see :mod:`agentcli.permissions.bash`): ``bash:pytest *``,
  ``bash:git status``. A wildcard never covers an output redirection into a file: to allow
  ``make > build.log`` write the ``>`` in the pattern (``bash:make > *``).
- ``TOOL:PATTERN`` for the file and search tools is matched against the workspace-relative path
  (symlinks resolved) with ``/`` separators: ``write_file:docs/*``, ``read_file:.env``. ``*``
  crosses folders; a pattern without ``/`` also matches the file name at any depth, as in
  ``.gitignore`` (``read_file:.env`` allows ``config/.env`` too).
- A tool name may be a pattern (``mcp__git__*``), and ``mcp__SERVER`` alone names every tool of
  that MCP server.
- To name a literal ``*``, ``?`` or ``[`` write it in brackets: ``[*]``. :func:`glob_escape` does it,
  and the rules agentcli suggests are escaped that way, so they allow exactly what was approved.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import lru_cache

from agentcli.permissions.bash import ParsedCommand, SimpleCommand

_TOOL_NAME = re.compile(r"[A-Za-z_][\w.*?-]*")
_MCP_PREFIX = "mcp__"
_WILDCARD = re.compile(r"\[[^\]!]\]|\[\]\]|[*?\[]")


class RuleError(ValueError):
    """A rule is malformed. The message names the rule and what is wrong."""


@dataclass(frozen=True)
class Rule:
    """One parsed ``tool[:pattern]`` rule."""

    text: str
    """The rule as written (whitespace around the parts trimmed)."""
    tool: str
    pattern: str | None
    """None for a bare tool name, which matches every call of the tool."""

    def applies_to(self, tool: str) -> bool:
        """Whether the rule is about ``tool``: its name, a pattern of names (``mcp__git__*``), or
        an MCP server's name (``mcp__git``, every tool of that server, as Claude Code reads it)."""
        if self.tool == tool:
            return True
        if "*" in self.tool or "?" in self.tool:
            return fnmatch.fnmatchcase(tool, self.tool)
        server = self.tool[len(_MCP_PREFIX):] if self.tool.startswith(_MCP_PREFIX) else ""
        return bool(server) and "__" not in server and tool.startswith(f"{self.tool}__")

    @property
    def literal(self) -> str | None:
        """The one string the pattern matches when it has no wildcard (escapes undone), else None."""
        if self.pattern is None:
            return None
        return _literal(self.pattern)

    def matches_command(self, command: SimpleCommand) -> bool:
        """Whether this ``bash`` rule allows one simple command."""
        if self.pattern is None:
            return True
        if command.writes and ">" not in self.pattern:
            return False
        return fnmatch.fnmatchcase(command.text, self.pattern)

    def matches_whole(self, parsed: ParsedCommand) -> bool:
        """Whether this rule names the whole command line literally (the only way an opaque
        command, one with ``$(...)`` for instance, can be allowed by a pattern rule)."""
        literal = self.literal
        return literal is not None and literal.strip() in {parsed.source, parsed.normalized}

    def matches_text(self, text: str, *, casefold: bool = False) -> bool:
        """Plain fnmatch against ``text`` (deny rules for commands)."""
        if self.pattern is None:
            return True
        if casefold:
            return fnmatch.fnmatchcase(text.casefold(), self.pattern.casefold())
        return fnmatch.fnmatchcase(text, self.pattern)

    def matches_path(self, rel: str, *, casefold: bool = False) -> bool:
        """Whether this rule matches a workspace-relative path."""
        if self.pattern is None:
            return True
        pattern, target = self.pattern, rel
        if casefold:
            pattern, target = pattern.casefold(), target.casefold()
        if pattern.endswith("/"):
            pattern += "*"
        if fnmatch.fnmatchcase(target, pattern):
            return True
        if "/" not in pattern:
            return fnmatch.fnmatchcase(target.rsplit("/", 1)[-1], pattern)
        return False


@lru_cache(maxsize=1024)
def parse_rule(text: str) -> Rule:
    """Parse ``tool`` or ``tool:pattern``.

    Raises:
        RuleError: the rule is empty, the tool name is not a name, or the pattern is empty.
    """
    if not isinstance(text, str) or not text.strip():
        raise RuleError(f"empty permission rule {text!r}; write `tool` or `tool:pattern`, e.g. `bash:pytest *`")
    tool, colon, pattern = text.strip().partition(":")
    tool = tool.strip()
    if not _TOOL_NAME.fullmatch(tool):
        raise RuleError(
            f"permission rule {text!r}: {tool!r} is not a tool name; write `tool` or `tool:pattern`, "
            "e.g. `bash:git status` or `write_file:docs/*`"
        )
    if not colon:
        return Rule(text=tool, tool=tool, pattern=None)
    pattern = pattern.strip()
    if not pattern:
        raise RuleError(f"permission rule {text!r} has an empty pattern; write `{tool}` alone to match every call")
    if tool != "bash":
        pattern = pattern.removeprefix("./") or "."
    return Rule(text=f"{tool}:{pattern}", tool=tool, pattern=pattern)


def parse_rules(texts: list[str] | tuple[str, ...], *, where: str) -> tuple[Rule, ...]:
    """Parse a list of rules from one config key.

    Args:
        texts: The rules.
        where: The key, for messages (``permissions.allow``).

    Raises:
        RuleError: naming the key and index of the first bad rule.
    """
    rules = []
    for index, text in enumerate(texts):
        try:
            rules.append(parse_rule(text))
        except RuleError as error:
            raise RuleError(f"{where}[{index}]: {error}") from None
    return tuple(rules)


def glob_escape(text: str) -> str:
    """``text`` as a pattern that matches only itself: ``*``, ``?`` and ``[`` go in brackets."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _literal(pattern: str) -> str | None:
    out: list[str] = []
    position = 0
    for match in _WILDCARD.finditer(pattern):
        token = match.group(0)
        if len(token) == 3 and token[0] == "[":  # a one-character class: an escape
            out.append(pattern[position : match.start()])
            out.append(token[1])
            position = match.end()
            continue
        return None
    out.append(pattern[position:])
    return "".join(out)
