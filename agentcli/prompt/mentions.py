"""@-mentions: completing workspace paths, and attaching the mentioned files to a message.

``@src/app.py`` attaches the file's content with line numbers (cut at ``MAX_LINES`` /
``MAX_BYTES``); ``@src/`` attaches a listing of the folder. Completion offers the files git
would track (``git ls-files``: ignored paths left out) minus secret files (``.env``, keys);
either is still attached when its path is typed in full. A mention that names nothing in the
workspace (an e-mail address, a decorator, an npm scope) stays plain text; one that looks like
a path the user meant (a file extension, a ``/`` under a folder of the workspace, the quoted
form, or a path completion offered: :meth:`Mention.looks_like_path`) is named in
``Attached.problems`` instead of being dropped without a word.

A name with spaces, ``"`` or ``@`` is written ``@"my file.txt"`` (``\\"`` and ``\\\\`` inside the quotes
stand for ``"`` and ``\\``); :func:`mention` writes any name that way when it must, and completion
offers only names it can write back exactly (a file name that is not valid UTF-8 is left out: its
shown form, with U+FFFD, names no file on disk).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

MAX_LINES = 2000
MAX_BYTES = 200_000
MAX_LISTING = 200
"""Entries of an attached folder listing."""
MAX_FILES = 20_000
"""Paths offered for completion; a bigger workspace is cut (typed paths still attach)."""
_MENTION = re.compile(r'(?<![\w@])@(?:"((?:[^"\\\n]|\\.)*)(?:"|$)|([^\s@"]+))', re.MULTILINE)
"""``@path`` or ``@"a path"``; a quote left open runs to the end of its line (then it names no
file and is reported, rather than the mention vanishing)."""
_TRAILING = ".,;:!?)]}'\""
_NEEDS_QUOTES = re.compile(r'[\s"@\\]')
_ESCAPE = re.compile(r"\\(.)")
_EXTENSION = re.compile(r"\.([A-Za-z0-9]{1,8})$")
FILE_EXTENSIONS = frozenset("""
    py pyi pyx ipynb js jsx mjs cjs ts tsx mts cts json jsonc json5 jsonl ndjson md markdown mdx rst
    txt adoc org tex toml yaml yml ini cfg conf env lock html htm css scss sass less xml xsd svg csv
    tsv sql sh bash zsh fish ps1 bat cmd c h cc cpp cxx hpp hh hxx cs fs java kt kts scala groovy
    gradle go mod sum rs rb erb php pl pm lua r swift mm dart ex exs erl hrl hs ml mli clj cljs edn
    el vim nix tf tfvars hcl proto graphql gql vue svelte astro zig jl nim sol tpl j2 jinja
    mk cmake diff log pdf png jpg jpeg gif webp ico bmp zip gz tgz tar bz2 xz whl jar so dll
    exe wasm db sqlite pem crt key pub lockb dockerfile gitignore editorconfig properties plist
""".split())
"""Extensions that make an unquoted ``@name.ext`` a file the user meant (``@notes.md``); any other
(``@app.route``, ``@mock.patch``, ``@mcp.tool``) counts only when a file of the workspace has it
(among the paths completion offered). A bare extension rule took every decorator for a path."""


@dataclass(frozen=True, slots=True)
class Mention:
    """One ``@…`` of a message."""

    path: str
    """The name as written, unquoted (trailing punctuation of a bare mention left on)."""
    quoted: bool
    """Written ``@"…"``: the user certainly meant a path."""

    @property
    def candidates(self) -> list[str]:
        """The names to look for, best first: a bare ``@notes.md,`` is ``notes.md`` unless a file
        is really called ``notes.md,``."""
        if self.quoted:
            return [self.path]
        stripped = self.path.rstrip(_TRAILING)
        return [self.path, stripped] if stripped and stripped != self.path else [self.path]

    def looks_like_path(self, offered: Collection[str], workspace: Path | None = None) -> bool:
        """Whether the user meant a file here (so not finding one is worth saying): quoted, offered
        by completion, a dotfile, an extension files have (``FILE_EXTENSIONS``, or one of an
        offered path), or a ``/`` that names a folder: ending in ``/``, starting ``./``, ``../``,
        ``~/`` or ``/``, or under a folder of the workspace. ``@types/node`` and
        ``@angular/core`` (npm scopes) and ``@app.route`` (a decorator) stay plain text."""
        name = self.candidates[-1]
        if self.quoted or name in offered or (name.startswith(".") and len(name) > 1 and name.strip(".")):
            return True
        extension = _EXTENSION.search(name)
        if extension is not None:
            ext = extension.group(1).lower()
            if ext in FILE_EXTENSIONS or any(path.lower().endswith("." + ext) for path in offered):
                return True
        if "/" not in name:
            return False
        if name.endswith("/") or name.startswith(("./", "../", "~/", "/")):
            return True
        first = name.split("/", 1)[0]
        return workspace is not None and bool(first) and (workspace / first).is_dir()


def mention(path: str) -> str:
    """How ``path`` is written after ``@`` so that it reads back as exactly ``path``."""
    if not _NEEDS_QUOTES.search(path) and path.rstrip(_TRAILING) == path:
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def mentions(text: str) -> list[Mention]:
    """The mentions in ``text``, in order, without repeats."""
    found: list[Mention] = []
    for match in _MENTION.finditer(text):
        quoted, bare = match.group(1), match.group(2)
        item = Mention(_ESCAPE.sub(r"\1", quoted), True) if quoted is not None else Mention(bare, False)
        if item.path and item not in found:
            found.append(item)
    return found


@dataclass(frozen=True, slots=True)
class Attachment:
    """One mentioned path and what goes to the model for it."""

    path: str
    """Relative to the workspace, ``/``-separated; folders end with ``/``."""
    text: str
    """The block appended to the message."""


@dataclass
class Attached:
    """A message's mentions, resolved."""

    attachments: list[Attachment] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Mentions that were not attached though they name a path: outside the workspace,
    unreadable, or no such file (a ``/``, an extension or quotes said it was meant as one)."""

    @property
    def text(self) -> str:
        return "\n\n".join(a.text for a in self.attachments)

    @property
    def paths(self) -> list[str]:
        return [a.path for a in self.attachments]


def mentioned(text: str) -> list[str]:
    """The paths mentioned in ``text`` (``@path``, ``@"a path"``), in order, without repeats
    (a bare mention's trailing punctuation left off)."""
    found: list[str] = []
    for item in mentions(text):
        name = item.candidates[-1]
        if name not in found:
            found.append(name)
    return found


def attach(workspace: Path, text: str, offered: Collection[str] = ()) -> Attached:
    """Resolve every mention in ``text`` to an attachment (blocking: run it in a thread).

    Args:
        workspace: The folder relative mentions are in.
        text: The message.
        offered: The paths completion offered: a mention of one that is gone is named too.
    """
    workspace = workspace.resolve()
    result = Attached()
    for item in mentions(text):
        found = next((c for c in (_resolve(workspace, name) for name in item.candidates) if c.exists()), None)
        raw = item.candidates[-1]
        if found is None:
            if item.looks_like_path(offered, workspace):
                result.problems.append(f"@{mention(raw)}: not attached (no such file)")
            continue  # not a path: an address, a handle, a decorator
        candidate = found
        if not candidate.is_relative_to(workspace):
            result.problems.append(f"@{mention(raw)} is outside the workspace; not attached")
            continue
        rel = candidate.relative_to(workspace).as_posix() or "."
        try:
            if candidate.is_dir():
                result.attachments.append(Attachment(rel.rstrip("/") + "/", _listing(candidate, rel)))
            else:
                result.attachments.append(Attachment(rel, _file_block(candidate, rel)))
        except OSError as error:
            result.problems.append(f"@{mention(raw)} cannot be read: {error.strerror or error}")
    return result


def _resolve(workspace: Path, name: str) -> Path:
    try:
        return (workspace / name).resolve() if not os.path.isabs(name) else Path(name).resolve()
    except (OSError, ValueError):  # a symlink loop, a NUL byte: no file by that name
        return workspace / "\0"


def _file_block(path: Path, rel: str) -> str:
    data = path.read_bytes()[: MAX_BYTES + 1]
    if b"\0" in data[:8192]:
        return f'<file path="{rel}">\n(binary file, {path.stat().st_size:,} bytes; not shown)\n</file>'
    text = data[:MAX_BYTES].decode("utf-8", errors="replace")
    lines = text.splitlines()
    cut = ""
    if len(lines) > MAX_LINES or len(data) > MAX_BYTES:
        lines = lines[:MAX_LINES]
        cut = f"\n[… cut after {len(lines)} lines; read_file with an offset shows the rest]"
    numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=1))
    return f'<file path="{rel}">\n{numbered}{cut}\n</file>'


def _listing(folder: Path, rel: str) -> str:
    entries = sorted(os.scandir(folder), key=lambda e: (not e.is_dir(), e.name))
    names = [e.name + ("/" if e.is_dir() else "") for e in entries if e.name != ".git"]
    shown = names[:MAX_LISTING]
    more = f"\n… {len(names) - MAX_LISTING} more" if len(names) > MAX_LISTING else ""
    return f'<folder path="{rel.rstrip("/")}/">\n' + "\n".join(shown) + more + "\n</folder>"


def workspace_paths(workspace: Path) -> list[str]:
    """Files and folders to offer after ``@`` (blocking: run it in a thread).

    In a git repository, what ``git ls-files`` lists (tracked and untracked, ignored ones left
    out); elsewhere a walk that skips hidden folders. Secret files are left out either way.
    """
    from agentcli.tools.paths import is_secret_path

    files = _git_files(workspace)
    if files is None:
        files = _walk(workspace)
    # A name with a line break could not be written back in one mention: not offered either.
    files = [f for f in files if not is_secret_path(f) and "\n" not in f and "\r" not in f][:MAX_FILES]
    folders = sorted({parent for f in files for parent in _parents(f)})
    return folders + files


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]


def _git_files(workspace: Path) -> list[str] | None:
    try:
        done = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=workspace,
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    found: list[str] = []
    for raw in done.stdout.split(b"\0"):
        try:
            found.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            continue  # shown with U+FFFD it would name no file: left out (see the module's doc)
    return sorted(p for p in found if p)


def _walk(workspace: Path) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
        base = Path(root).relative_to(workspace).as_posix()
        found += [f"{base}/{name}" if base != "." else name for name in sorted(files) if _utf8(f"{base}/{name}")]
        if len(found) > MAX_FILES:
            break
    return found


def _utf8(name: str) -> bool:
    # os.walk gives undecodable bytes as lone surrogates (PEP 383): no text can carry them.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def complete(paths: list[str], typed: str, limit: int = 12) -> list[str]:
    """The paths for the menu while ``@typed`` is being written, best first.

    Ranks: the file name starts with it, the path starts with it, the path contains it, the
    letters occur in order (fuzzy); shorter paths first within a rank.
    """
    if not typed:
        return [p for p in paths if "/" not in p.rstrip("/")][:limit]
    needle = typed.lower()
    ranked: list[tuple[int, int, str]] = []
    for path in paths:
        low = path.lower()
        if low == needle:
            continue  # the folder typed in full (just picked): what is inside it is wanted
        name = low.rstrip("/").rsplit("/", 1)[-1]
        if name.startswith(needle):
            rank = 0
        elif low.startswith(needle):
            rank = 1
        elif needle in low:
            rank = 2
        elif _subsequence(needle, low):
            rank = 3
        else:
            continue
        ranked.append((rank, len(path), path))
    ranked.sort()
    return [path for _, _, path in ranked[:limit]]


def _subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)
