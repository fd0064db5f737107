"""What a bash command line runs, parsed with tree-sitter-bash, for deny rules.

A deny rule has to match what runs, not how it is spelled: ``bash:rm *`` must refuse
``command rm``, ``\\rm``, ``/bin/rm``, ``env rm``, ``xargs rm``, ``find -delete`` and
``sh -c 'rm …'`` alike. The hand-written splitter in :mod:`agentcli.permissions.bash` serves allow
rules (which must be exact); this module parses the line with a real bash grammar (tree-sitter-bash,
rather than bashlex, which is GPL and unreleased since 2023) and lists every command that may run:

- each command of the line, wherever it sits (lists, pipelines, subshells, ``if``/``for`` bodies,
  function bodies, ``$(...)``, backticks, ``<(...)``), its words unquoted, its name reduced to
  the base name (``/usr/bin/rm`` → ``rm``);
- for a wrapper (``sudo``, ``env``, ``command``, ``xargs``, ``timeout``…), every tail of its words,
  so the wrapped command is found whatever options the wrapper takes (a wrong guess only denies
  more);
- the scripts of ``sh -c``, ``bash -lc``, ``eval``, ``trap``, ``env -S``, ``alias``, and
  ``find -exec``; ``find -delete`` counts as ``rm``.

What it cannot know is listed as *unknown*: a command name computed when it runs (``$x``,
``$(echo rm)``, ``rm${IFS}-rf``), a name the shell expands as a pattern (``/bin/r?``,
``{rm,-rf,d}``), a shell reading its script from standard input (``… | sh``, ``bash <<<``), or a
line the grammar cannot read. While a deny rule is set for ``bash``, such a command is refused:
the rule cannot be checked. Scripts in files (``bash x.sh``, ``source x.sh``, ``make``) and other
interpreters (``python -c``) are not looked into: the README says so, and ``--sandbox`` is the
boundary for those.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language, Node

_MAX_DEPTH = 8
"""Scripts nested deeper than this (``sh -c "sh -c '…'"``) are unknown rather than followed."""

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "busybox-sh"})
_WRAPPERS = frozenset({
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "ionice", "timeout",
    "stdbuf", "xargs", "setsid", "chronic", "unbuffer", "watch", "caffeinate", "busybox", "chrt",
    "taskset", "flock", "su", "script", "strace", "ltrace", "nsenter", "unshare", "firejail",
    "parallel",
})
"""Commands that run a command given in their arguments."""
_SCRIPT_ARGUMENT = frozenset({"eval", "trap", "alias", "watch", "su", "script", "flock", "parallel"})
"""Commands one of whose arguments is itself a command line."""
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Runs:
    """The commands a line may run, as texts a deny rule is matched against."""

    commands: tuple[str, ...]
    """Each command that may run, words unquoted and joined by spaces (``rm -rf d``)."""
    unknown: tuple[str, ...]
    """Why some command that runs cannot be told from the text (``the command name `$x` …``)."""


@lru_cache(maxsize=512)
def what_runs(source: str) -> Runs:
    """Every command ``source`` may run, and what in it cannot be known before it runs.

    Args:
        source: A bash command line (the ``command`` argument of a ``bash`` call).

    Returns:
        The command texts (deny-rule candidates) and the reasons some part is unknowable.
    """
    walker = _Walker()
    walker.script(source, depth=0)
    return Runs(tuple(dict.fromkeys(walker.commands)), tuple(dict.fromkeys(walker.unknown)))


@lru_cache(maxsize=1)
def _language() -> Language:
    import tree_sitter_bash
    from tree_sitter import Language

    return Language(tree_sitter_bash.language())


class _Walker:
    def __init__(self) -> None:
        self.commands: list[str] = []
        self.unknown: list[str] = []

    def script(self, source: str, *, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.unknown.append("scripts nested too deep to follow")
            return
        from tree_sitter import Parser

        # A parser per script: tree-sitter parsers are not to be shared between threads.
        tree = Parser(_language()).parse(source.encode("utf-8", "surrogatepass"))
        if tree.root_node.has_error:
            self.unknown.append(f"bash syntax the parser cannot read in `{_short(source)}`")
        self._visit(tree.root_node, depth)

    def _visit(self, node: Node, depth: int) -> None:
        if node.type == "command":
            self._command(node, depth)
        elif node.type == "redirected_statement":
            self._redirected(node)
        for child in node.children:
            self._visit(child, depth)

    def _redirected(self, node: Node) -> None:
        """``sh <<EOF`` and ``bash <<< '…'``: a shell whose script is its input."""
        body = node.child_by_field_name("body")
        if body is not None and body.type == "command":
            name = body.child_by_field_name("name")
            value = _static(name) if name is not None else None
            if value is not None and os.path.basename(value) in _SHELLS:
                self.unknown.append(f"`{_short(_text(node))}` runs a script given on its input")

    def _command(self, node: Node, depth: int) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        words: list[str | None] = [_static(name)]
        raw: list[str] = [_text(name)]
        for child in node.children_by_field_name("argument"):
            words.append(_static(child))
            raw.append(_text(child))
        herestring = any(child.type == "herestring_redirect" for child in node.children)
        self._words(words, raw, depth, herestring=herestring)

    def _words(
        self, words: list[str | None], raw: list[str], depth: int, *, herestring: bool = False, tails: bool = True
    ) -> None:
        """One command (or the tail of a wrapper's words), with what it runs in turn.

        ``tails`` is False for a tail itself: the outermost wrapper already tries every tail, and
        trying them again from each inner wrapper would multiply the work for nothing.
        """
        if not words:
            return
        first = words[0]
        if first is None:
            self.unknown.append(f"the command name `{_short(raw[0])}` is only known when it runs")
            return
        if _GLOB_CHARS & set(first) or ("{" in first and "," in first):
            self.unknown.append(f"the command name `{_short(raw[0])}` is a pattern the shell expands")
            return
        name = os.path.basename(first) or first
        shown = [name, *(word if word is not None else text for word, text in zip(words[1:], raw[1:], strict=True))]
        self.commands.append(" ".join(shown))
        args = words[1:]
        if name in _SHELLS:
            self._shell(args, raw[1:], depth, herestring=herestring)
        elif name == "find":
            self._find(args, raw[1:], depth)
        if name in _SCRIPT_ARGUMENT or name in _WRAPPERS:
            if name == "eval":
                if any(word is None for word in args):
                    self.unknown.append(f"`eval` of text computed when it runs (`{_short(' '.join(raw))}`)")
                else:
                    self.script(" ".join(word for word in args if word is not None), depth=depth + 1)
            for word in args:
                if word is not None and (" " in word or "\n" in word or "=" in word and name == "alias"):
                    self.script(word.partition("=")[2] if name == "alias" else word, depth=depth + 1)
        if name in _WRAPPERS and tails:
            for start in range(1, len(words)):
                if words[start] is None:
                    continue  # `sudo -u "$user" rm`: the tail from `rm` is tried too
                self._tail(words[start:], raw[start:], depth)
            if name == "env":
                self._env_split(args, depth)

    def _tail(self, words: list[str | None], raw: list[str], depth: int) -> None:
        head = words[0]
        if head is None or head.startswith("-") or "=" in head and not head.startswith("/"):
            return  # an option or an assignment, not a command; later tails cover the rest
        self._words(words, raw, depth + 1, tails=False)

    def _env_split(self, args: list[str | None], depth: int) -> None:
        for index, word in enumerate(args):
            if word in {"-S", "--split-string"} and index + 1 < len(args):
                value = args[index + 1]
                if value is None:
                    self.unknown.append("`env -S` with a command line computed when it runs")
                else:
                    self.script(value, depth=depth + 1)
            elif word is not None and word.startswith(("-S", "--split-string=")) and len(word) > 2:
                self.script(word.split("=", 1)[1] if word.startswith("--") else word[2:], depth=depth + 1)

    def _shell(self, args: list[str | None], raw: list[str], depth: int, *, herestring: bool) -> None:
        """``sh -c SCRIPT``: the script is parsed; ``sh`` with no script file reads its input."""
        runs_string = False
        operands: list[str | None] = []
        index = 0
        while index < len(args):
            word = args[index]
            if operands or word is None or word == "-" or not word.startswith(("-", "+")):
                operands.append(word)
            elif word == "--":
                operands.extend(args[index + 1 :])
                break
            elif word in {"-o", "+o", "-O", "+O"}:
                index += 1  # an option name follows
            elif not word.startswith("--") and "c" in word[1:]:
                runs_string = True
            elif word.startswith("-") and not word.startswith("--") and "s" in word[1:]:
                operands = []
                break
            index += 1
        if runs_string:
            if not operands:
                self.unknown.append("`-c` without a script")
            elif operands[0] is None:
                self.unknown.append(f"a shell runs a script computed when it runs (`{_short(raw[-1])}`)")
            else:
                self.script(operands[0], depth=depth + 1)
        elif not operands or herestring:
            self.unknown.append("a shell runs a script given on its input")

    def _find(self, args: list[str | None], raw: list[str], depth: int) -> None:
        starts = []
        for word in args:
            if word is None or word.startswith(("-", "(", "!")):
                break
            starts.append(word)
        index = 0
        while index < len(args):
            word = args[index]
            if word == "-delete":
                # Deleting is what a `rm` rule is about, whichever command does it.
                self.commands.append(" ".join(["rm", *starts] if starts else ["rm", "."]))
            elif word in _FIND_EXEC:
                end = index + 1
                while end < len(args) and args[end] not in {";", "+"}:
                    end += 1
                self._words(list(args[index + 1 : end]), raw[index + 1 : end], depth + 1)
                index = end
            index += 1


def _text(node: Node) -> str:
    data = node.text or b""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        # The grammar may cut a lone surrogate's bytes (the model's JSON can hold one) in two.
        return data.decode("utf-8", "replace")


def _static(node: Node) -> str | None:
    """The word a node stands for after quote removal, or None when only running tells."""
    kind = node.type
    if kind == "command_name":
        return _static(node.children[0]) if node.child_count == 1 else None
    if kind in {"word", "number"}:
        return _unescape(_text(node))
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "ansi_c_string":
        body = _text(node)[2:-1]
        try:
            return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
        except (UnicodeDecodeError, ValueError):
            return None
    if kind == "string":
        parts = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type != "string_content":
                return None  # an expansion or substitution inside the quotes
            parts.append(_unescape(_text(child), '$`"\\\n'))
        return "".join(parts)
    if kind == "concatenation":
        pieces = [_static(child) for child in node.children]
        if any(piece is None for piece in pieces):
            return None
        return "".join(piece for piece in pieces if piece is not None)
    return None


def _unescape(text: str, escapable: str | None = None) -> str:
    """Drop the backslashes bash drops: before any character unquoted, only before ``$ ` " \\``
    and a newline inside double quotes (``escapable``); a backslash-newline joins lines."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and (escapable is None or text[index + 1] in escapable):
            if text[index + 1] != "\n":
                out.append(text[index + 1])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
