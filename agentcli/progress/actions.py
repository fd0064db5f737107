"""Turn one tool call and its result into an `Action`: the facts the stuck rules compare.

Hashes stand in for arguments and outputs so the tracker keeps no large strings and
compares calls in constant time.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

TargetKind = Literal["path", "command", "query", "none"]
"""What an action's target names: a file path, a shell command, a search pattern or URL, or nothing."""

_COMMAND_KEYS = ("command", "cmd")
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file")
_QUERY_KEYS = ("pattern", "query", "url")

_EMPTY: Mapping[str, str] = MappingProxyType({})

# Parts of command output that change on every run without meaning anything: test timings,
# timestamps, object addresses. Left in, `pytest` failing identically three times would
# hash three ways ("in 0.52s", "in 0.49s", ...) and the identical-call and cycle rules
# would never see a repeat. Numbers that carry meaning ("3 failed", "40%") are kept, so a
# poll whose status really moves still hashes differently each time.
# Every alternative starts with a digit, written as the leading `[0-9]` so the regex engine
# can skip to digits in C; the lookbehind keeps digits inside names (`test_10s`) intact.
# A plain `\b...|\b...` alternation measured 5x slower on source-code-like text.
_VOLATILE = re.compile(
    r"[0-9](?<![\w.][0-9])(?:"
    r"[0-9]{3}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
    r"|[0-9]?:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?"
    r"|[0-9]*(?:\.[0-9]+)?\s?(?:[nuµm]?s|secs?|seconds?)\b"
    r"|x[0-9a-fA-F]{6,})"
)

# Only this much of the head and of the tail is normalised (about 15 ns a character); the
# middle is hashed as is. Timings and summaries sit at the ends of test and build output.
_NORMALISE_EDGE = 8 * 1024


def stable_hash(text: str) -> str:
    """Hash text to a short, stable hex digest.

    blake2b rather than sha256: it is faster in CPython and a 128-bit digest is ample for
    telling calls apart within one session.

    Args:
        text: Any string, including lone surrogates from badly decoded output.

    Returns:
        32 hex characters.
    """
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def normalise_volatile(text: str) -> str:
    """Mask the parts of command output or error text that change on every run.

    Args:
        text: Command output or an error message.

    Returns:
        The text with durations, timestamps and memory addresses replaced by `<~>`; past
        16 KiB only the first and last 8 KiB are masked.
    """
    if len(text) <= 2 * _NORMALISE_EDGE:
        return _VOLATILE.sub("<~>", text)
    edge = _NORMALISE_EDGE
    return _VOLATILE.sub("<~>", text[:edge]) + text[edge:-edge] + _VOLATILE.sub("<~>", text[-edge:])


def canonical_arguments(arguments: Mapping[str, object] | str) -> str:
    """Serialise tool arguments so that equal arguments give equal text.

    Args:
        arguments: The parsed arguments, or the raw string when the model sent malformed JSON
            (that still has to be comparable, since repeating a malformed call is a loop too).

    Returns:
        JSON with sorted keys and no whitespace; values JSON cannot express are written with
        `str`, and a structure JSON cannot walk at all (a cycle) falls back to `repr`.
    """
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(
            arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
    except (TypeError, ValueError):
        # Mixed-type keys or a self-referencing structure: still hash something stable
        # rather than crash the agent loop over a bookkeeping detail.
        return repr(arguments)


def derive_target(arguments: Mapping[str, object] | str) -> tuple[str | None, TargetKind]:
    """Find what a call acts on: the command it runs, else the file path, else the pattern.

    A command wins over a path because `bash` with a working directory acts through the
    command; a path wins over a pattern because `grep pattern path` fails or succeeds on
    the path.

    Args:
        arguments: The call's arguments, or the raw string when they were malformed.

    Returns:
        The target (paths normalised, commands stripped) and what kind of target it is.
    """
    if isinstance(arguments, str):
        return None, "none"
    for kind, keys in (("command", _COMMAND_KEYS), ("path", _PATH_KEYS), ("query", _QUERY_KEYS)):
        for key in keys:
            value = arguments.get(key)
            if isinstance(value, str) and value.strip():
                if kind == "path":
                    return posixpath.normpath(value.strip()), "path"
                return value.strip(), kind  # type: ignore[return-value]
    return None, "none"


@dataclass(frozen=True, slots=True)
class Action:
    """One tool call and its result, reduced to what stuck detection compares.

    Build it with `Action.from_call` from a real call; construct it directly in tests or
    when the hashes are already known.
    """

    tool: str
    """The tool's name, e.g. `edit_file`."""

    target: str | None
    """What the call acted on: a file path, a shell command, a search pattern, or None."""

    args_hash: str
    """Hash of the canonical JSON of the arguments."""

    output_hash: str
    """Hash of the output; for commands, with run-to-run noise (timings, timestamps) masked."""

    ok: bool
    """Whether the call succeeded."""

    error: str | None = None
    """The error text when the call failed, as the model saw it."""

    file_hashes: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Content hash of each file the call changed, after the call. List only files the call
    wrote: a file seen here for the first time counts as new content. A deleted file may be
    given any fixed marker, e.g. `"<deleted>"`."""

    checks: Mapping[str, bool] | None = None
    """Check results the call produced (check or test name -> passed), e.g. from `run_checks`
    or a parsed test run; None when the call ran no checks."""

    target_kind: TargetKind = "none"
    """What `target` names; `command` makes the call count as running a command."""

    file_hashes_before: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Optional: content hash of each changed file before the call. With it, undoing an edit
    is recognised as a return to earlier content the first time, not only from the second
    round on (without it the tracker cannot know a file's content before its first change)."""

    @classmethod
    def from_call(
        cls,
        tool: str,
        arguments: Mapping[str, object] | str,
        output: str | None,
        ok: bool,
        error: str | None = None,
        file_hashes: Mapping[str, str] | None = None,
        checks: Mapping[str, bool] | None = None,
        file_hashes_before: Mapping[str, str] | None = None,
    ) -> Action:
        """Describe a finished tool call.

        Args:
            tool: The tool's name.
            arguments: The parsed arguments, or the raw text if the model sent malformed JSON.
            output: What the tool returned to the model (None counts as empty).
            ok: Whether the call succeeded.
            error: The error text when it failed.
            file_hashes: Content hash of each file the call changed, after the call.
            checks: Check name -> passed, when the call ran checks.
            file_hashes_before: Content hash of each changed file before the call, if known.

        Returns:
            The action, with stable hashes and the target derived from the arguments:
            `command`/`cmd`, else `path`/`file_path`/..., else `pattern`/`query`/`url`.
            A command's output is hashed with timings and timestamps masked.
        """
        target, kind = derive_target(arguments)
        text = output or ""
        # Only commands print timings and timestamps that vary between identical runs; a
        # file read twice reads the same, so other output is hashed as is (and cheaply).
        if kind == "command":
            text = normalise_volatile(text)
        return cls(
            tool=tool,
            target=target,
            args_hash=stable_hash(canonical_arguments(arguments)),
            output_hash=stable_hash(text),
            ok=ok,
            error=error,
            file_hashes=MappingProxyType(dict(file_hashes)) if file_hashes else _EMPTY,
            file_hashes_before=(
                MappingProxyType(dict(file_hashes_before)) if file_hashes_before else _EMPTY
            ),
            checks=MappingProxyType(dict(checks)) if checks is not None else None,
            target_kind=kind,
        )

    def describe(self) -> str:
        """Name the call for a human: `edit_file main.py`, `bash \\`pytest -q\\``.

        Returns:
            The tool and its target, the target shortened to 80 characters.
        """
        if self.target is None:
            return self.tool
        target = self.target if len(self.target) <= 80 else self.target[:77] + "..."
        if self.target_kind == "command":
            return f"{self.tool} `{target}`"
        return f"{self.tool} {target}"
