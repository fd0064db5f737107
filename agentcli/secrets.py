"""Keeping secret values (API keys, tokens) out of logs, screens and tool output.

A value is secret when its environment variable's name says so (KEY, TOKEN, SECRET, PASSWORD…).
This module imports nothing of agentcli's.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|PRIVATE)", re.IGNORECASE)
_MIN_LENGTH = 8
"""Shorter values ("1", "true") would redact ordinary text everywhere."""


class Redactor:
    """Replaces every known secret value in a text with ``[redacted:NAME]``."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        environ = os.environ if environ is None else environ
        pairs: dict[str, str] = {}
        for name, value in environ.items():
            if _SECRET_NAME.search(name) and len(value) >= _MIN_LENGTH and value.strip():
                pairs[value] = name
                # The same value as it appears inside a JSON string (escapes applied).
                pairs.setdefault(json.dumps(value)[1:-1], name)
        # Longest first, so a secret containing another is replaced whole.
        self._pairs = sorted(pairs.items(), key=lambda item: -len(item[0]))
        self._pattern = re.compile("|".join(re.escape(value) for value, _ in self._pairs)) if self._pairs else None
        self._names = dict(self._pairs)

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda match: f"[redacted:{self._names[match.group(0)]}]", text)
