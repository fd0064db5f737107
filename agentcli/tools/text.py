"""Reading text safely and shortening long output for the model."""

from __future__ import annotations

from agentcli.tools.base import ToolError

_SNIFF_BYTES = 8192


def counted(number: int, noun: str) -> str:
    """``1 line``, ``2 lines``: a count with its noun in the right number (nouns taking an -s)."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def looks_binary(data: bytes) -> bool:
    """Git's rule: a NUL byte in the first 8 KiB means binary."""
    return b"\x00" in data[:_SNIFF_BYTES]


def decode_text(data: bytes, display: str) -> str:
    """``data`` as text, or the error that tells the model why it is not (binary, not UTF-8)."""
    if looks_binary(data):
        raise ToolError(f"'{display}' is a binary file ({len(data):,} bytes); it cannot be shown as text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ToolError(
            f"'{display}' is not UTF-8 text (invalid byte at offset {error.start}); "
            "inspect it with bash, e.g. `file` or `iconv`"
        ) from None


def truncate_middle(text: str, limit: int, *, unseen_chars: int = 0, unseen_lines: int = 0) -> str:
    """Keep the head and the tail of ``text`` within ``limit`` characters, marking the cut.

    The tail matters as much as the head: compilers and test runners print the verdict last.
    ``unseen_chars`` and ``unseen_lines`` (newlines) count what was already dropped from the
    middle of ``text`` before it got here (:class:`agentcli.tools.capture.OutputCapture`), so the
    mark tells the whole cut.
    """
    if len(text) <= limit and not unseen_chars:
        return text
    keep = min(limit // 2, len(text) // 2)
    head, tail = text[:keep], text[len(text) - keep :]
    cut = text[keep : len(text) - keep]
    lines = cut.count(chr(10)) + unseen_lines + 1
    return f"{head}\n[... {counted(lines, 'line')}, {counted(len(cut) + unseen_chars, 'character')} cut ...]\n{tail}"


def valid_text(text: str) -> str:
    """``text`` as valid Unicode that can be sent on as UTF-8.

    File names and command output can hold bytes that are not UTF-8: Python keeps them as lone
    surrogates (``\\udcff``), which a model API would refuse to encode. They are shown as the
    escaped bytes they stand for (``\\xff``), other lone surrogates as ``\\udXXX``.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def valid_values(value: object) -> object:
    """A JSON value with every string (keys too) made :func:`valid_text`."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_text(str(key)): valid_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [valid_values(item) for item in value]
    return value


def first_invalid_text(value: object, where: str = "arguments") -> str | None:
    """Where a JSON value holds a string that is not valid Unicode (a lone surrogate), if anywhere.

    Returns:
        A description such as ``content, position 4`` or None when every string is valid.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            return f"{where}, position {error.start}"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = str(key) if where == "arguments" else f"{where}.{key}"
            found = first_invalid_text(str(key), where) or first_invalid_text(item, inner)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = first_invalid_text(item, f"{where}[{index}]")
            if found:
                return found
    return None
