"""Adding rules to ``.agentcli.toml`` (``[permissions] allow = [...]``) without disturbing the rest.

The standard library reads TOML but does not write it, and rewriting the file from parsed data
would drop the user's comments, order and formatting. So the file is edited as text: a small
scanner finds the ``allow`` (or ``deny``) array and inserts the new strings before its closing
bracket, or adds the key under an existing ``[permissions]`` table, or appends the table. The
result is parsed back with ``tomllib`` and compared with what was intended before it replaces
the file (atomically), so a file the scanner misreads is never corrupted: the call fails with a
message saying which rule to add by hand.
"""

from __future__ import annotations

import copy
import os
import tempfile
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Key = Literal["allow", "deny"]


class ConfigWriteError(Exception):
    """The rules could not be added to the config file. The message names the file and the rules."""


def add_rules_to_config(path: Path, rules: Iterable[str], *, key: Key = "allow") -> list[str]:
    """Append rules to ``[permissions] <key>`` of a TOML file, creating file, table or key as needed.

    Args:
        path: The config file, usually ``<workspace>/.agentcli.toml``.
        rules: Rule strings; those already in the list are skipped.
        key: ``allow`` or ``deny``.

    Returns:
        The rules actually added (possibly none).

    Raises:
        ConfigWriteError: the file is not valid TOML, ``permissions.<key>`` is not a list, the
            file could not be edited safely, or it could not be written.
    """
    wanted = list(dict.fromkeys(rules))
    real = Path(os.path.realpath(path))  # edit a symlinked config where it lives
    if not real.exists():
        if not wanted:
            return []
        _write_atomic(real, f"[permissions]\n{key} = [{', '.join(_toml_string(r) for r in wanted)}]\n", path)
        return wanted
    try:
        raw = real.read_bytes()
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigWriteError(f"cannot add {_listing(wanted)} to {path}: {error}") from None
    permissions = data.get("permissions")
    if permissions is not None and not isinstance(permissions, dict):
        raise ConfigWriteError(f"cannot add {_listing(wanted)} to {path}: `permissions` is not a table")
    existing = (permissions or {}).get(key, [])
    if not isinstance(existing, list):
        raise ConfigWriteError(f"cannot add {_listing(wanted)} to {path}: `permissions.{key}` is not a list")
    added = [rule for rule in wanted if rule not in existing]
    if not added:
        return []
    expected = copy.deepcopy(data)
    expected.setdefault("permissions", {})[key] = [*existing, *added]
    try:
        updated = _edit(text, permissions, key, added)
    except _CannotEdit as reason:
        raise ConfigWriteError(
            f"cannot add {_listing(added)} to {path} automatically ({reason}); add them to "
            f"`[permissions] {key}` by hand"
        ) from None
    try:
        ok = tomllib.loads(updated) == expected
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        raise ConfigWriteError(
            f"cannot add {_listing(added)} to {path} automatically (the file's layout was not "
            f"understood; it was left unchanged); add them to `[permissions] {key}` by hand"
        )
    _write_atomic(real, updated, path)
    return added


def _listing(rules: list[str]) -> str:
    return ", ".join(f"`{rule}`" for rule in rules) or "no rules"


def _write_atomic(real: Path, text: str, shown: Path) -> None:
    try:
        mode = real.stat().st_mode & 0o7777 if real.exists() else None
        real.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
                out.write(text)
            if mode is not None:
                os.chmod(temp, mode)
            os.replace(temp, real)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise ConfigWriteError(f"cannot write {shown}: {error.strerror or error}") from None


def _toml_string(value: str) -> str:
    """A TOML basic string (``"..."``) holding exactly ``value``."""
    named = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
    out = []
    for char in value:
        if char in named:
            out.append(named[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


# -- editing --------------------------------------------------------------------------------------


class _CannotEdit(Exception):
    pass


@dataclass
class _Statement:
    kind: Literal["table", "array_table", "keyval"]
    table: tuple[str, ...]
    """The table the statement is in (for headers: the table they open)."""
    key: tuple[str, ...]
    """Dotted key parts of a key/value (empty for headers)."""
    value_start: int
    value_end: int
    line_end: int
    """Index just past the statement's line (its newline included, if any)."""


def _edit(text: str, permissions: dict[str, Any] | None, key: Key, rules: list[str]) -> str:
    newline = "\r\n" if "\r\n" in text else "\n"
    statements = _statements(text)
    items = [_toml_string(rule) for rule in rules]
    if permissions is not None and key in permissions:
        for statement in statements:
            if statement.kind == "keyval" and (*statement.table, *statement.key) == ("permissions", key):
                return _append_to_array(text, statement, items, newline)
        raise _CannotEdit(f"`permissions.{key}` is not written as `{key} = [...]`")
    line = f"{key} = [{', '.join(items)}]"
    if permissions is not None:
        for statement in statements:
            if statement.kind == "table" and statement.table == ("permissions",):
                return _insert_line(text, statement.line_end, line, newline)
        for statement in statements:
            dotted = len(statement.key) > 1 and statement.key[0] == "permissions"
            if statement.kind == "keyval" and not statement.table and dotted:
                return _insert_line(text, statement.line_end, f"permissions.{line}", newline)
        raise _CannotEdit("`permissions` is an inline table")
    prefix = text if not text or text.endswith(("\n", "\r")) else text + newline
    separator = newline if prefix.strip() else ""
    return f"{prefix}{separator}[permissions]{newline}{line}{newline}"


def _insert_line(text: str, at: int, line: str, newline: str) -> str:
    before = text[:at]
    if before and not before.endswith(("\n", "\r")):
        before += newline
    return f"{before}{line}{newline}{text[at:]}"


def _append_to_array(text: str, statement: _Statement, items: list[str], newline: str) -> str:
    start = statement.value_start
    if text[start : start + 1] != "[":
        raise _CannotEdit("the list is not an array literal")
    close, last_kind, last_end = _array_tail(text, start)
    multiline = "\n" in text[start:close]
    if not multiline or last_kind == "open":
        joined = ", ".join(items)
        insert = {"open": joined, "comma": f" {joined},", "value": f", {joined}"}[last_kind]
        return text[:last_end] + insert + text[last_end:]
    # One item per line, indented like the last one, after any comment on its line.
    line_start = text.rfind("\n", 0, last_end) + 1
    line_text = text[line_start:]
    indent = line_text[: len(line_text) - len(line_text.lstrip(" \t"))]
    line_end = text.find("\n", last_end)
    rest_of_line = text[last_end:line_end] if line_end != -1 else text[last_end:]
    at = line_end if line_end != -1 and (not rest_of_line.strip() or rest_of_line.strip().startswith("#")) else last_end
    if at == line_end and text[line_end - 1 : line_end] == "\r":
        at -= 1
    added = "".join(f"{newline}{indent}{item}," for item in items)
    if last_kind == "value":
        return text[:last_end] + "," + text[last_end:at] + added + text[at:]
    return text[:at] + added + text[at:]


# -- a TOML statement scanner (enough to find keys and the extent of values) ------------------------

_BARE_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _statements(text: str) -> list[_Statement]:
    statements: list[_Statement] = []
    table: tuple[str, ...] = ()
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in " \t\r\n":
            i += 1
            continue
        if char == "#":
            i = _line_end(text, i)
            continue
        if char == "[":
            is_array = text.startswith("[[", i)
            parts, i = _key(text, i + (2 if is_array else 1))
            i = _expect(text, i, "]]" if is_array else "]")
            table = parts
            statements.append(
                _Statement("array_table" if is_array else "table", table, (), i, i, _line_end(text, i))
            )
            i = _line_end(text, i)
            continue
        parts, i = _key(text, i)
        i = _expect(text, i, "=")
        i = _skip_blanks(text, i)
        value_end = _value_end(text, i)
        statements.append(_Statement("keyval", table, parts, i, value_end, _line_end(text, value_end)))
        i = _line_end(text, value_end)
    return statements


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end == -1 else end + 1


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _expect(text: str, i: int, token: str) -> int:
    i = _skip_blanks(text, i)
    if not text.startswith(token, i):
        raise _CannotEdit(f"expected {token!r} at offset {i}")
    return i + len(token)


def _key(text: str, i: int) -> tuple[tuple[str, ...], int]:
    parts: list[str] = []
    while True:
        i = _skip_blanks(text, i)
        if i < len(text) and text[i] in "\"'":
            end = _string_end(text, i)
            parts.append(tomllib.loads(f"k = {text[i:end]}")["k"])
            i = end
        else:
            start = i
            while i < len(text) and text[i] in _BARE_KEY_CHARS:
                i += 1
            if start == i:
                raise _CannotEdit(f"expected a key at offset {start}")
            parts.append(text[start:i])
        i = _skip_blanks(text, i)
        if i < len(text) and text[i] == ".":
            i += 1
            continue
        return tuple(parts), i


def _string_end(text: str, i: int) -> int:
    """Index just past the string starting at ``i`` (any of the four TOML string kinds)."""
    for quote in ('"""', "'''"):
        if text.startswith(quote, i):
            j = i + 3
            while True:
                found = text.find(quote, j)
                if found == -1:
                    raise _CannotEdit("unterminated multi-line string")
                if quote == '"""' and _escaped(text, found):
                    j = found + 1
                    continue
                end = found + 3
                while end < len(text) and text[end] == quote[0] and end - found < 5:
                    end += 1  # up to two quotes may end the content: """a"""""
                return end
    quote = text[i]
    j = i + 1
    while j < len(text):
        if quote == '"' and text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        if text[j] == "\n":
            break
        j += 1
    raise _CannotEdit("unterminated string")


def _escaped(text: str, at: int) -> bool:
    backslashes = 0
    j = at - 1
    while j >= 0 and text[j] == "\\":
        backslashes += 1
        j -= 1
    return backslashes % 2 == 1


def _value_end(text: str, i: int) -> int:
    if i >= len(text):
        raise _CannotEdit("missing value")
    char = text[i]
    if char in "\"'":
        return _string_end(text, i)
    if char == "[":
        return _array_tail(text, i)[0] + 1
    if char == "{":
        return _inline_table_end(text, i)
    j = i
    while j < len(text) and text[j] not in "#\n,]}":
        j += 1
    while j > i and text[j - 1] in " \t\r":
        j -= 1
    return j


def _inline_table_end(text: str, i: int) -> int:
    j = i + 1
    while j < len(text):
        char = text[j]
        if char == "}":
            return j + 1
        if char in "\"'":
            j = _string_end(text, j)
        elif char in "[{":
            j = _value_end(text, j)
        else:
            j += 1
    raise _CannotEdit("unterminated inline table")


def _array_tail(text: str, i: int) -> tuple[int, Literal["open", "comma", "value"], int]:
    """For the array opening at ``i``: the index of its ``]``, and the kind and end of the last
    significant token before it (``[``, a comma, or a value), comments and blanks skipped."""
    last_kind: Literal["open", "comma", "value"] = "open"
    last_end = i + 1
    j = i + 1
    while j < len(text):
        char = text[j]
        if char in " \t\r\n":
            j += 1
        elif char == "#":
            j = _line_end(text, j)
        elif char == "]":
            return j, last_kind, last_end
        elif char == ",":
            j += 1
            last_kind, last_end = "comma", j
        else:
            j = _value_end(text, j)
            last_kind, last_end = "value", j
    raise _CannotEdit("unterminated array")
