"""Splitting a bash command line into the simple commands a rule is matched against.

``bash:git status`` must not allow ``git status; rm -rf ~``, so rules are matched against each
simple command of a compound one (split at ``;``, ``&&``, ``||``, ``|``, ``&``, newlines and
subshell parentheses), never against the whole line with a wildcard. The scanner is quote-aware
(single, double and ``$'...'`` quotes, backslash escapes, comments, line continuations) and errs on
the side of splitting more: an extra split only makes a command need approval.

What cannot be judged from the text — command substitution ``$(...)`` and backticks, process
substitution, arithmetic expansion, here-documents, function definitions, ``case`` — makes the
command *opaque*: only a rule that names the whole command literally (or a bare ``bash`` rule)
allows it. The bodies of substitutions and ``bash -c``/``eval`` scripts are still split, so deny
rules see the commands inside them.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache

_SEPARATOR_CHARS = frozenset(";&|\n()")
_RESERVED_PREFIXES = frozenset({"!", "{", "}", "then", "do", "else", "if", "elif", "while", "until", "time"})
"""Words that may precede a command without being one; dropped before matching."""
_TERMINATORS = frozenset({"fi", "done", "esac", "}", "{"})
"""Whole parts that only close a construct."""
_WRAPPERS = frozenset({
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "ionice", "timeout",
    "stdbuf", "xargs", "setsid", "chronic", "unbuffer", "watch", "caffeinate",
})
"""Commands that run another command; deny rules also look at the command they run."""
_WRAPPER_ARGUMENT_OPTIONS = {"sudo": {"-u", "-g", "-C", "-D"}, "nice": {"-n"}, "ionice": {"-c", "-n"},
                             "xargs": {"-I", "-n", "-P", "-L", "-d", "-s", "-E"}, "watch": {"-n"}}
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


@dataclass(frozen=True)
class SimpleCommand:
    """One command of a compound command line."""

    text: str
    """The command as written (quotes kept), unquoted whitespace collapsed, leading reserved
    words (``then``, ``do``, ``!``...) dropped: what allow rules are matched against."""
    writes: bool
    """It redirects output into a file (``> out.txt``); ``/dev/null`` and ``2>&1`` do not count.
    A rule's wildcard never covers such a redirection (see :mod:`agentcli.permissions.rules`)."""
    words: tuple[str, ...] = ()
    """The words after shell unquoting; empty when they could not be told."""


@dataclass(frozen=True)
class ParsedCommand:
    """A command line, split for matching."""

    source: str
    """The command as the model sent it, stripped."""
    normalized: str
    """The same with unquoted whitespace collapsed and comments dropped."""
    commands: tuple[SimpleCommand, ...]
    """Its simple commands, in order; empty for a blank or comment-only line."""
    opaque: tuple[str, ...] = ()
    """Why the command cannot be judged part by part ("command substitution $(...)"...)."""
    nested: tuple[str, ...] = field(default=())
    """Scripts run inside it: substitution bodies, ``bash -c`` and ``eval`` arguments."""

    def deny_candidates(self) -> list[str]:
        """Every text a deny rule is matched against: the whole line, each command, each
        command without its wrappers (``sudo``, ``env X=1``, ``timeout 5``...), recursively for
        nested scripts."""
        seen: dict[str, None] = {}
        for text in (self.source, self.normalized):
            seen[text] = None
        for command in self.commands:
            seen[command.text] = None
            core = _unwrap(command.words)
            if core:
                seen[" ".join(core)] = None
        for script in self.nested:
            for text in parse_command(script).deny_candidates():
                seen[text] = None
        return [text for text in seen if text]


@lru_cache(maxsize=512)
def parse_command(command: str) -> ParsedCommand:
    """Split a bash command line into its simple commands.

    Args:
        command: The ``command`` argument of a ``bash`` call.

    Returns:
        The parts, the reasons it is opaque (if any) and the scripts nested in it.
    """
    scanner = _Scanner(command)
    scanner.run()
    parts: list[SimpleCommand] = []
    nested = list(scanner.nested)
    opaque = list(scanner.opaque)
    for raw in scanner.parts:
        text = _drop_reserved(raw)
        if not text:
            continue
        words, writes = _words_and_writes(text)
        if words and words[0] in {"case", "function", "select", "coproc"}:
            opaque.append(f"a `{words[0]}` construct")
        if words:
            core = _unwrap(words)
            if core and core[0] in _SHELLS and "-c" in core:
                index = core.index("-c")
                if index + 1 < len(core):
                    nested.append(core[index + 1])
            elif core and core[0] in {"eval", "source", "."}:
                if core[0] == "eval":
                    nested.append(" ".join(core[1:]))
        parts.append(SimpleCommand(text=text, writes=writes, words=tuple(words)))
    normalized = "; ".join(part.text for part in parts) if not opaque else " ".join(command.split())
    return ParsedCommand(
        source=command.strip(),
        normalized=normalized,
        commands=tuple(parts),
        opaque=tuple(dict.fromkeys(opaque)),
        nested=tuple(dict.fromkeys(script for script in nested if script.strip())),
    )


def _drop_reserved(text: str) -> str:
    words = text.split(" ")
    while words and words[0] in _RESERVED_PREFIXES:
        words.pop(0)
    rest = " ".join(words).strip()
    return "" if rest in _TERMINATORS else rest


def _words_and_writes(text: str) -> tuple[list[str], bool]:
    """The unquoted words of one simple command, and whether it redirects output into a file."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars="<>&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return [], True  # unbalanced quotes: assume the worst
    writes = False
    words: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if set(token) <= set("<>&|") and any(char in token for char in "<>"):
            target = tokens[index + 1] if index + 1 < len(tokens) else ""
            duplicates_fd = token in {">&", "<&"} and (target.isdigit() or target == "-")
            if token in _WRITE_OPERATORS or (token == ">&" and not duplicates_fd):
                if target not in _HARMLESS_TARGETS and not duplicates_fd:
                    writes = True
            if words and words[-1].isdigit() and text.find(words[-1] + token) != -1:
                words.pop()  # the fd number of `2>`
            index += 2
            continue
        words.append(token)
        index += 1
    return words, writes


def _unwrap(words: tuple[str, ...] | list[str]) -> list[str]:
    """The command a wrapper runs: drops assignments (``X=1 cmd``), ``sudo -u bob``, ``env``,
    ``timeout 5``, ``nice -n 5``... Best effort, for deny rules."""
    rest = list(words)
    while rest:
        if _ASSIGNMENT.match(rest[0]):
            rest.pop(0)
            continue
        head = rest[0]
        if head not in _WRAPPERS:
            break
        rest.pop(0)
        takes_value = _WRAPPER_ARGUMENT_OPTIONS.get(head, set())
        while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
            option = rest.pop(0)
            if option in takes_value and rest:
                rest.pop(0)
        if head == "timeout" and rest and rest[0][:1].isdigit():
            rest.pop(0)
    return rest


class _Scanner:
    """One left-to-right pass over a command line, tracking quotes and nesting."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.parts: list[str] = []
        self.opaque: list[str] = []
        self.nested: list[str] = []
        self._buf: list[str] = []

    def run(self) -> None:
        text = self.text
        i = 0
        n = len(text)
        while i < n:
            char = text[i]
            if char == "\\":
                if i + 1 < n and text[i + 1] == "\n":
                    i += 2  # line continuation
                    continue
                self._buf.append(text[i : i + 2])
                i += 2
                continue
            if char == "'":
                end = text.find("'", i + 1)
                if end == -1:
                    self._unterminated("'")
                    self._buf.append(text[i:])
                    break
                self._buf.append(text[i : end + 1])
                i = end + 1
                continue
            if char == '"':
                i = self._double_quoted(i)
                continue
            if char == "$" and i + 1 < n and text[i + 1] == "'":
                i = self._ansi_quoted(i)
                continue
            if char == "$" and i + 1 < n and text[i + 1] == "(":
                i = self._substitution(i, 1)
                continue
            if char == "`":
                i = self._backticks(i)
                continue
            if char in "<>" and i + 1 < n and text[i + 1] == "(":
                i = self._substitution(i, 1, what="process substitution")
                continue
            if char == "<" and text.startswith("<<", i) and not text.startswith("<<<", i):
                self.opaque.append("a here-document (<<)")
                self._buf.append("<<")
                i += 2
                continue
            if char == "#" and self._at_word_start():
                end = text.find("\n", i)
                i = n if end == -1 else end
                continue
            if char in " \t\r":
                if self._buf and self._buf[-1] != " ":
                    self._buf.append(" ")
                i += 1
                continue
            if char in _SEPARATOR_CHARS:
                i = self._separator(i)
                continue
            self._buf.append(char)
            i += 1
        self._end_part()

    # -- pieces -----------------------------------------------------------------------------

    def _at_word_start(self) -> bool:
        return not self._buf or self._buf[-1] == " "

    def _end_part(self) -> None:
        part = "".join(self._buf).strip()
        self._buf = []
        if part:
            self.parts.append(part)

    def _separator(self, i: int) -> int:
        text = self.text
        char = text[i]
        previous = self._buf[-1][-1:] if self._buf else ""
        if char == "&" and (text.startswith("&>", i) or previous in {">", "<"}):
            self._buf.append(char)  # `&>file`, `2>&1`, `<&3`: a redirection, not a separator
            return i + 1
        if char == "|" and previous == ">":
            self._buf.append(char)  # `>|file`
            return i + 1
        if char == "(":
            rest = text[i + 1 :].lstrip(" \t")
            if rest.startswith(")"):
                self.opaque.append("a function definition")
            elif text.startswith("((", i):
                self.opaque.append("an arithmetic command (( ))")
        self._end_part()
        return i + 1

    def _unterminated(self, quote: str) -> None:
        self.opaque.append(f"an unterminated {quote} quote")

    def _double_quoted(self, i: int) -> int:
        """Copy a "..." string; substitutions inside it still run."""
        text = self.text
        j = i + 1
        start = i
        while j < len(text):
            char = text[j]
            if char == "\\":
                j += 2
                continue
            if char == '"':
                self._buf.append(text[start : j + 1])
                return j + 1
            if char == "$" and text.startswith("$(", j):
                self._buf.append(text[start:j])
                j = self._substitution(j, 1)
                start = j
                continue
            if char == "`":
                self._buf.append(text[start:j])
                j = self._backticks(j)
                start = j
                continue
            j += 1
        self._unterminated('"')
        self._buf.append(text[start:])
        return len(text)

    def _ansi_quoted(self, i: int) -> int:
        text = self.text
        j = i + 2
        while j < len(text):
            if text[j] == "\\":
                j += 2
                continue
            if text[j] == "'":
                self._buf.append(text[i : j + 1])
                return j + 1
            j += 1
        self._unterminated("$'")
        self._buf.append(text[i:])
        return len(text)

    def _substitution(self, i: int, prefix: int, *, what: str = "") -> int:
        """``$(...)``, ``$((...))``, ``<(...)``: copy it whole, record its body as nested."""
        open_at = i + prefix
        end = _matching_paren(self.text, open_at)
        body = self.text[open_at + 1 : end] if end != -1 else self.text[open_at + 1 :]
        if not what:
            what = "arithmetic expansion $((...))" if body.startswith("(") else "command substitution $(...)"
        self.opaque.append(what)
        self.nested.append(body[1:-1] if what.startswith("arithmetic") and body.endswith(")") else body)
        if end == -1:
            self._unterminated("(")
            self._buf.append(self.text[i:])
            return len(self.text)
        self._buf.append(self.text[i : end + 1])
        return end + 1

    def _backticks(self, i: int) -> int:
        text = self.text
        j = i + 1
        while j < len(text):
            if text[j] == "\\":
                j += 2
                continue
            if text[j] == "`":
                break
            j += 1
        self.opaque.append("command substitution `...`")
        self.nested.append(text[i + 1 : j].replace("\\`", "`"))
        if j >= len(text):
            self._unterminated("`")
            self._buf.append(text[i:])
            return len(text)
        self._buf.append(text[i : j + 1])
        return j + 1


def _matching_paren(text: str, open_at: int) -> int:
    """Index of the ``)`` closing the ``(`` at ``open_at``, skipping quotes; -1 when unclosed."""
    depth = 0
    j = open_at
    n = len(text)
    while j < n:
        char = text[j]
        if char == "\\":
            j += 2
            continue
        if char == "'":
            end = text.find("'", j + 1)
            if end == -1:
                return -1
            j = end + 1
            continue
        if char == '"':
            k = j + 1
            while k < n and text[k] != '"':
                k += 2 if text[k] == "\\" else 1
            j = k + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return -1
