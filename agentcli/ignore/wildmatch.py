"""One line of an ignore file, parsed and translated into a regular expression as git reads it.

The translation follows git's `wildmatch.c` (with `WM_PATHNAME`: `*`, `?` and `[...]` never
match `/`; `**/` spans directories) and `dir.c` (which lines count, trailing spaces, `!`,
a leading or inner `/` anchors the pattern, a trailing `/` means "directories only", and a
literal prefix is compared before the wildcard part, so `a**/b` matches `ab`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}
"""git's own ASCII character classes (`sane_ctype`), whatever the locale."""

_ANY_DIRS = "(?:.*/)?"


@dataclass(frozen=True)
class IgnorePattern:
    """One line of an ignore file, compiled to the source of a regular expression."""

    text: str
    regex: str | None
    """For `re.fullmatch` against the basename (`basename_only`) or the path relative to the
    ignore file's directory; None when wildmatch would abort on the pattern (an unterminated
    `[`, an unknown `[:class:]`): git never matches such a pattern."""
    negated: bool
    dir_only: bool
    basename_only: bool
    """No `/` in the pattern: it matches the last path component at any depth."""


def _translate_class(pat: str, i: int) -> tuple[str | None, int]:
    """Translates the bracket expression at `pat[i] == '['`; returns (regex, index after it).

    A port of wildmatch's class loop rather than a mapping onto Python's: in git the first
    character of a range is matched on its own before the range, so a reversed range `[z-a]`
    still matches `z`; after a range or a `[:class:]` the next `-` is literal or starts a range
    from `]`. The regex is None when wildmatch aborts (no closing `]`, an unknown class).
    """
    n = len(pat)
    j = i + 1
    negated = j < n and pat[j] in "!^"
    if negated:
        j += 1
    items: list[str] = []
    prev: str | None = None  # wildmatch's prev_ch; None where it is reset to 0
    first = True
    while True:
        if j >= n:
            return None, n
        c = pat[j]
        if c == "]" and not first:
            break
        first = False
        if c == "\\":
            j += 1
            if j >= n:
                return None, n
            prev = pat[j]
            items.append(re.escape(prev))
        elif c == "-" and prev is not None and j + 1 < n and pat[j + 1] != "]":
            j += 1
            hi = pat[j]
            if hi == "\\":
                j += 1
                if j >= n:
                    return None, n
                hi = pat[j]
            if prev <= hi:
                items.append(f"{re.escape(prev)}-{re.escape(hi)}")
            prev = None
        elif c == "[" and pat.startswith(":", j + 1):
            end = pat.find("]", j + 2)
            if end == -1:
                return None, n
            if end - (j + 2) < 1 or pat[end - 1] != ":":
                items.append(re.escape("["))  # not a class after all: a literal `[`
                prev = "["
            else:
                members = _POSIX_CLASSES.get(pat[j + 2 : end - 1])
                if members is None:
                    return None, n
                items.append(members)
                prev = "]"
                j = end
        else:
            items.append(re.escape(c))
            prev = c
        j += 1
    body = "".join(items)
    if not body:
        return ("[^/]" if negated else "(?!)"), j + 1
    # WM_PATHNAME: a bracket expression never matches '/'.
    return (f"[^/{body}]" if negated else f"(?!/)[{body}]"), j + 1


def wildmatch_regex(pattern: str) -> str | None:
    """Translates a git wildmatch pattern (WM_PATHNAME) into a regular expression.

    Args:
        pattern: The pattern, without `!`, leading `/` or trailing `/`.

    Returns:
        A regex for `re.fullmatch`, or None when the pattern can never match.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            double = j - i >= 2
            at_start = i == 0 or pattern[i - 1] == "/"
            at_end = j == n or pattern[j] == "/"
            if double and at_start and at_end:
                if j == n:
                    out.append(".*")  # `dir/**`: everything inside
                    i = j
                else:
                    if not out or out[-1] != _ANY_DIRS:  # `**/**/` is `**/`, minus the backtracking
                        out.append(_ANY_DIRS)
                    i = j + 1
            else:
                out.append("[^/]*")
                i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _translate_class(pattern, i)
            if cls is None:
                return None
            out.append(cls)
        elif c == "\\":
            if i + 1 < n:
                out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _trim_trailing_spaces(line: str) -> str:
    # git keeps a trailing space escaped with a backslash.
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        if end >= 2 and line[end - 2] == "\\":
            break
        end -= 1
    return line[:end]


def parse_ignore_file(text: str) -> list[IgnorePattern]:
    """Parses the contents of a `.gitignore`-style file.

    Args:
        text: File contents (decoded with `surrogateescape`, so any bytes survive).

    Returns:
        The patterns in file order.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    patterns: list[IgnorePattern] = []
    for raw in text.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line or line.startswith("#"):
            continue
        line = _trim_trailing_spaces(line)
        if not line:
            continue
        negated = line.startswith("!")
        body = line[1:] if negated else line
        dir_only = body.endswith("/")
        if dir_only:
            body = body[:-1]  # one slash only, as git does: `a//` stays anchored and matches nothing
        if not body:
            continue
        basename_only = "/" not in body
        if body.startswith("/"):
            body = body[1:]
        if basename_only:
            regex = wildmatch_regex(body)
        else:
            # git (dir.c match_pathname) compares the literal prefix first and wildmatches only
            # the rest, so a `**` right after the prefix counts as leading: `a**/b` matches `ab`.
            literal = len(re.split(r"[*?\[\\]", body, maxsplit=1)[0])
            rest = wildmatch_regex(body[literal:])
            regex = None if rest is None else re.escape(body[:literal]) + rest
        patterns.append(
            IgnorePattern(text=line, regex=regex, negated=negated, dir_only=dir_only, basename_only=basename_only)
        )
    return patterns
