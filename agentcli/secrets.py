"""Keeping secret values (API keys, tokens) out of logs, screens and tool output.

Two nets, applied by one callable :class:`Redactor`:

1. **Known values.** A value is secret when its environment variable's name says so (a
   ``KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``... part, as in ``OPENAI_API_KEY`` or
   ``GITHUB_TOKEN``). Each such value is replaced by ``[redacted:NAME]`` wherever it appears,
   also in its JSON-escaped form.
2. **Known shapes.** Tokens with a recognisable shape are replaced even when they are not in the
   environment — a key in a ``.env`` file the model read, or printed by a command: OpenAI and
   Anthropic ``sk-...`` keys, GitHub ``ghp_...``/``github_pat_...``, GitLab ``glpat-...``, AWS
   access key ids ``AKIA...``, Slack ``xox?-...``, Google ``AIza...``, Hugging Face ``hf_...``,
   Stripe live keys, PEM private key blocks, and the password in ``scheme://user:password@host``.

It runs on every tool output, so each regular expression runs only after a substring test
(a value, or a shape's literal marker such as ``ghp_``) finds something: an output with nothing
to redact costs a few ``in`` scans. This module imports nothing of agentcli's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

_SECRET_PARTS = frozenset({
    "KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS",
    "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "AUTH", "PRIVATE", "PAT", "COOKIE",
})
"""Words of a variable name (split at ``_``) that make it secret: ``OPENAI_API_KEY``, ``DB_PASS``."""
_SECRET_SUFFIXES = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY")
"""Run-together names: ``GHTOKEN``, ``MYSQLPASSWORD``."""
_NOT_SECRET_SUFFIXES = ("_FILE", "_PATH", "_DIR", "_SOCK", "_SOCKET", "_URL_TEMPLATE")
"""Where a secret lives is not the secret (``SSH_AUTH_SOCK``, ``GIT_SSH_KEY_FILE``)."""
_MIN_LENGTH = 8
"""Shorter values ("1", "true") would redact ordinary text everywhere."""

_START = r"(?:(?<![\w-])|(?<=\\[nrt]))"
"""A token starts at a word boundary, or right after a JSON escape (``\\n``) in a log line."""

_TOKEN_SHAPES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # (label, literal markers one of which every match contains, pattern)
    ("private-key", ("PRIVATE KEY",),
     # Up to the END line; a block cut short (truncated output) ends at the first character a
     # PEM body cannot hold, so a JSON log line keeps its closing quote and stays valid.
     (r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\s:,.-]|\\[nrt])*?"
      r"(?:-----END [A-Z0-9 ]*-----|(?![A-Za-z0-9+/=\s:,.-]|\\[nrt])|\Z)")),
    # OpenAI (sk-, sk-proj-...) and Anthropic (sk-ant-...) keys: long, and with a digit, so that
    # an identifier such as `sk-spinner-double-bounce` is left alone.
    ("api-key", ("sk-",), _START + r"sk-(?=[\w-]*\d)[\w-]{32,}"),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     _START + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,})"),
    ("gitlab-token", ("glpat-",), _START + r"glpat-[\w-]{20,}"),
    ("aws-access-key-id", ("AKIA", "ASIA"), r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ("slack-token", ("xox",), _START + r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("google-api-key", ("AIza",), _START + r"AIza[\w-]{35}"),
    ("huggingface-token", ("hf_",), _START + r"hf_[A-Za-z0-9]{30,}"),
    ("stripe-key", ("_live_",), _START + r"(?:sk|rk)_live_[A-Za-z0-9]{20,}"),
    # Only the password of scheme://user:password@host; user and host stay readable.
    ("url-password", ("://",), r"(?P<user>://[^\s/:@'\"]+:)[^\s/@'\"]+(?=@)"),
)
"""Each pattern runs only when one of its markers is in the text (a fast substring test), so
the usual output, which holds none, costs a handful of ``in`` checks."""


@dataclasses.dataclass(frozen=True)
class _Shape:
    label: str
    markers: tuple[str, ...]
    pattern: re.Pattern[str]

    def replace(self, match: re.Match[str]) -> str:
        prefix = match.group("user") if "user" in self.pattern.groupindex else ""
        return f"{prefix}[redacted:{self.label}]"


_SHAPES = tuple(_Shape(label, markers, re.compile(pattern)) for label, markers, pattern in _TOKEN_SHAPES)

T = TypeVar("T")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says its value is a secret."""
    upper = name.upper()
    if upper.endswith(_NOT_SECRET_SUFFIXES):
        return False
    parts = [part for part in re.split(r"[^A-Z0-9]+", upper) if part]
    return any(part in _SECRET_PARTS or part.endswith(_SECRET_SUFFIXES) for part in parts)


class Redactor:
    """Replaces every known secret value, and every token of a known shape, in a text.

    Args:
        environ: Where secret values come from (``os.environ`` by default).
        shapes: Also redact tokens by their shape (see the module docstring).
    """

    def __init__(self, environ: Mapping[str, str] | None = None, *, shapes: bool = True) -> None:
        environ = os.environ if environ is None else environ
        pairs: dict[str, str] = {}
        for name, value in environ.items():
            if is_secret_name(name) and len(value) >= _MIN_LENGTH and value.strip():
                pairs.setdefault(value, name)
                # The same value as it appears inside a JSON string (escapes applied).
                pairs.setdefault(json.dumps(value)[1:-1], name)
        # Longest first, so a secret containing another is replaced whole.
        ordered = sorted(pairs.items(), key=lambda item: -len(item[0]))
        self._names = dict(ordered)
        self._values = tuple(self._names)
        self._pattern = re.compile("|".join(re.escape(value) for value in self._values)) if ordered else None
        self._shapes = _SHAPES if shapes else ()

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by ``[redacted:WHAT]``."""
        if not text:
            return text
        # Substring tests first: one pass of C code per value, and the regex only when one hits.
        if self._pattern is not None and any(value in text for value in self._values):
            text = self._pattern.sub(lambda match: f"[redacted:{self._names[match.group(0)]}]", text)
        for shape in self._shapes:
            if any(marker in text for marker in shape.markers):
                text = shape.pattern.sub(shape.replace, text)
        return text

    def unsafe_tail(self, text: str) -> int:
        """How many characters at the end of ``text`` may be the start of a secret not yet whole.

        For streamed text: what is shown now must not hold the first half of a key whose second
        half comes in the next chunk. Held back: the longest end that begins a known value; the
        last word (a token has no spaces) when it holds or ends with the start of a token
        marker; and an unfinished private key block.
        """
        hold = 0
        for value in self._values:
            for length in range(min(len(value) - 1, len(text)), hold, -1):
                if text.endswith(value[:length]):
                    hold = length
                    break
        word = _LAST_WORD.search(text)
        if word is not None and len(word.group(0)) > hold and _may_be_token(word.group(0)):
            hold = len(word.group(0))
        begin = text.rfind("-----BEGIN")
        if begin != -1 and not _KEY_END.search(text, begin) and len(text) - begin <= _MAX_HELD_KEY:
            hold = max(hold, len(text) - begin)
        return hold

    def safe_cut(self, text: str) -> int:
        """Where ``text`` may be cut for redacting its first part alone: before the unsafe end,
        and never inside a whole secret value (one with spaces may end in a held-back word)."""
        cut = len(text) - self.unsafe_tail(text)
        for value in self._values:
            start = text.find(value, max(0, cut - len(value) + 1))
            while start != -1 and start < cut:
                cut = start
                start = text.find(value, max(0, cut - len(value) + 1))
        for shape in self._shapes:
            if any(marker in text for marker in shape.markers):
                for match in shape.pattern.finditer(text):
                    if match.start() < cut < match.end():
                        cut = match.start()
        return cut

    def stream(self, deliver: Callable[[str], None]) -> StreamRedactor:
        """A redactor for text that arrives in pieces (see :class:`StreamRedactor`)."""
        return StreamRedactor(self, deliver)

    def result(self, result: T) -> T:
        """A copy of a tool result (any dataclass) with its text fields redacted.

        ``output`` and ``error`` are redacted, and every string inside ``data``; other fields
        (``files_changed``, ``ok``...) are kept. A result with nothing to redact is returned as is.
        """
        if not dataclasses.is_dataclass(result) or isinstance(result, type):
            raise TypeError(f"expected a dataclass instance, got {type(result).__name__}")
        changes: dict[str, Any] = {}
        for name in ("output", "error"):
            value = getattr(result, name, None)
            if isinstance(value, str):
                redacted = self(value)
                if redacted != value:
                    changes[name] = redacted
        data = getattr(result, "data", None)
        if isinstance(data, dict) and data:
            redacted_data = self._redact_value(data)
            if redacted_data != data:
                changes["data"] = redacted_data
        return dataclasses.replace(result, **changes) if changes else result

    def _redact_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {key: self._redact_value(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._redact_value(item) for item in value)
        return value


_LAST_WORD = re.compile(r"\S{1,256}\Z")
_KEY_END = re.compile(r"-----END [A-Z0-9 ]*-----")
_MAX_HELD_KEY = 16 * 1024
"""An unfinished ``-----BEGIN … PRIVATE KEY-----`` block is held back up to this many characters."""
_MARKERS = tuple(dict.fromkeys([*(marker for _label, markers, _pattern in _TOKEN_SHAPES for marker in markers
                                  if " " not in marker), "-----BEGIN"]))


def _may_be_token(word: str) -> bool:
    """Whether a word may be, or may become, a token of a known shape."""
    if any(marker in word for marker in _MARKERS):
        return True
    return any(word.endswith(marker[:length]) for marker in _MARKERS for length in range(1, len(marker)))


class StreamRedactor:
    """Redacts text that arrives in pieces, holding back an end that may be half a secret.

    Redacting each piece alone shows the first half of a key cut across two pieces. Each piece
    is joined to what was held back, everything up to the unsafe end is redacted and delivered,
    and the rest waits for the next piece or :meth:`flush` (at the end of the text).

    Args:
        redactor: What to redact.
        deliver: Receives the redacted text, in order.
    """

    def __init__(self, redactor: Redactor, deliver: Callable[[str], None]) -> None:
        self._redactor = redactor
        self._deliver = deliver
        self._held = ""

    def add(self, text: str) -> None:
        pending = self._held + text
        cut = self._redactor.safe_cut(pending)
        self._held = pending[cut:]
        if cut:
            self._deliver(self._redactor(pending[:cut]))

    def flush(self) -> None:
        """Deliver what was held back (the text has ended)."""
        held, self._held = self._held, ""
        if held:
            self._deliver(self._redactor(held))
