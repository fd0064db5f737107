"""Parsed stylesheets kept between runs, so the TUI's first frame does not tokenize them again.

Textual parses every stylesheet the first screen uses on each start (the app's ``app.tcss`` and
the ``DEFAULT_CSS`` of each widget class, some of them once per depth in the class tree): ~15 ms
of CPU before agentcli's first frame, against ~4 ms for a hello-world app. Loading the same rule
sets from a pickle takes a tenth of that (bench/tui_startup.py). ``CachedStylesheet`` is the app's
stylesheet with a cache under Textual's own per-run one: a rule set is reused only for exactly
the same source text, location, scope, tie-breaker and CSS variables (the theme's colours are
substituted while parsing), within one installed Textual and Python version (in the file's name). Sources
with errors are never kept, so Textual reports them as before. A file that cannot be read is
ignored and rewritten; one that cannot be written is left: the cache only ever saves time.

The file is written after the first frame, off the event loop (``ParseCache.save``), holding
what this run parsed; a theme switched at run time is parsed by Textual as usual (``reparse``
uses a plain ``Stylesheet``). The files live in ``$XDG_CACHE_HOME/agentcli/css``.
"""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from pathlib import Path
from typing import Any

import textual
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.css.types import CSSLocation

_Key = tuple[str, CSSLocation, bool, int, str]
"""What Textual's ``_parse_rules`` parses: source, location, default or not, tie-breaker, scope."""


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agentcli/css`` (``~/.cache/agentcli/css`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentcli" / "css"


def _textual_build() -> int:
    """Which Textual is installed, cheaply: where it is and when and how big its CSS parser is.

    Not ``textual.__version__``: Textual reads it through ``importlib.metadata``, 11 ms of CPU
    before the first frame. An upgrade or reinstall rewrites the parser, so a new file is used.
    """
    parser = Path(textual.__file__).parent / "css" / "parse.py"
    stat = parser.stat()
    return zlib.crc32(f"{parser}:{stat.st_mtime_ns}:{stat.st_size}".encode())


class ParseCache:
    """Parsed rule sets for one set of CSS variables, read from and written to one file."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder
        self._variables: tuple[tuple[str, str], ...] | None = None
        self._seen: dict[str, str] = {}
        """The variables last asked with, as given: most calls pass the same, unchanged."""
        self._rules: dict[_Key, list[RuleSet]] = {}
        self._used: set[_Key] = set()
        self._added = False
        self.hits = 0
        """Sources reused from the file in this run (for tests and benchmarks)."""

    def _path(self, variables: tuple[tuple[str, str], ...]) -> Path:
        # One file per theme (its variables), Textual and Python version; the variables are
        # compared in full on load, the checksum only picks the file.
        digest = zlib.crc32(repr(variables).encode())
        version = f"textual{_textual_build():08x}-py{sys.version_info[0]}{sys.version_info[1]}"
        return (self._folder or cache_dir()) / f"{version}-{digest:08x}.pickle"

    def _use(self, variables: dict[str, str]) -> None:
        """Load the file for these variables, unless it is the one already in use."""
        if self._variables is not None and variables == self._seen:
            return  # a dict comparison: sorting ~200 variables on every source cost 0.5 ms each
        self._seen = dict(variables)
        wanted = tuple(sorted(variables.items()))
        if wanted == self._variables:
            return
        self._variables, self._rules, self._used, self._added = wanted, {}, set(), False
        try:
            with self._path(wanted).open("rb") as handle:
                stored = pickle.load(handle)
            if stored["variables"] == wanted:
                self._rules = stored["rules"]
        except Exception:  # noqa: BLE001 - missing, truncated or from another version: parse afresh
            self._rules = {}

    def get(self, key: _Key, variables: dict[str, str]) -> list[RuleSet] | None:
        self._use(variables)
        rules = self._rules.get(key)
        if rules is not None:
            self.hits += 1
            self._used.add(key)
        return rules

    def put(self, key: _Key, variables: dict[str, str], rules: list[RuleSet]) -> None:
        self._use(variables)
        self._rules[key] = rules
        self._used.add(key)
        self._added = True

    def save(self) -> Path | None:
        """Write what this run used, if it parsed anything new (atomically): sources no longer
        used (an older ``app.tcss``) are dropped then. Returns the file written.

        Raises:
            OSError: the folder or the file could not be written.
        """
        if not self._added or self._variables is None:
            return None
        path = self._path(self._variables)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        used = {key: rules for key, rules in self._rules.items() if key in self._used}
        payload: dict[str, Any] = {"variables": self._variables, "rules": used}
        try:
            temporary.write_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
            temporary.replace(path)
        finally:
            temporary.unlink(missing_ok=True)
        self._added = False
        return path


class CachedStylesheet(Stylesheet):
    """Textual's stylesheet, parsing each source at most once across runs (see the module)."""

    def __init__(self, cache: ParseCache, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        self.parse_cache = cache

    def _parse_rules(self, css: str, read_from: CSSLocation, is_default_rules: bool = False,
                     tie_breaker: int = 0, scope: str = "") -> list[RuleSet]:
        key: _Key = (css, read_from, is_default_rules, tie_breaker, scope)
        if key in self._parse_cache:
            return self._parse_cache[key]
        rules = self.parse_cache.get(key, self._variables)
        if rules is None:
            rules = super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
            if not any(rule.errors for rule in rules):
                self.parse_cache.put(key, self._variables, rules)
        self._parse_cache[key] = rules
        return rules

    def reparse(self) -> None:
        """Parse every source again with the current variables (a theme set or switched).

        Textual's own ``reparse`` (8.2.8), but into a fresh stylesheet that shares the cache:
        Textual's makes a plain ``Stylesheet``, which would tokenize everything again (the
        start-up theme is applied this way, before the first frame).
        """
        stylesheet = CachedStylesheet(self.parse_cache, variables=self._variables)
        for read_from, (css, is_defaults, tie_breaker, scope) in self.source.items():
            stylesheet.add_source(css, read_from=read_from, is_default_css=is_defaults, tie_breaker=tie_breaker,
                                  scope=scope)
        try:
            stylesheet.parse()
        except Exception:
            self._invalid_css.update(stylesheet._invalid_css)  # as Textual: not parsed again before exit
            raise
        self._rules = stylesheet.rules
        self._rules_map = None
        self.source = stylesheet.source
        self._require_parse = False
