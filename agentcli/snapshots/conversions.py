"""Which entries of a seed copied from the user's index vouch for bytes other than the file's.

The user's index pairs each file's stat data with the blob git stored, and git stores the
*cleaned* content: line endings normalized (`text`, `eol`, `core.autocrlf`), a clean filter
applied, `$Id$` collapsed, the working-tree encoding turned into UTF-8. Trusting that pair would
record the blob rather than the file (git/git's CRLF `*.bat` files come out LF), and restoring
the snapshot would rewrite them. Our shadow turns every conversion off, so for such a path the
file itself must be hashed.

Which paths convert is decided without asking libgit2 for every attribute of every path
(~21 µs a path: 2 s at 100k files):

- No attribute file anywhere and `core.autocrlf` off: nothing converts; the seed is kept whole.
- Otherwise an entry whose blob has a different size from the file it vouches for was converted
  (an end-of-line conversion, `ident` and a working-tree encoding all change the size), so it is
  hashed again; only a clean filter can keep the size, so where filter drivers are configured the
  `filter` attribute is asked per path as well.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pygit2
from pygit2 import C, ffi

_FILTER_DRIVER = re.compile(r"^filter\.(.+)\.(clean|smudge|process)$", re.IGNORECASE)
_GITLINK = 0o160000


def may_convert(
    user_repo: pygit2.Repository, common_dir: Path, raw_index: bytes, index: pygit2.Index | None = None
) -> bool | None:
    """Tells whether any seeded entry can vouch for converted content (else none is checked).

    Needs the loaded index only for an index of version 4, so the seed asks while libgit2
    loads its copy (see seed.py).

    Args:
        user_repo: The user's repository (read only).
        common_dir: Its common git directory (where `info/attributes` lives).
        raw_index: The bytes of the user's index file, as copied.
        index: The seed, loaded; None when it is not yet.

    Returns:
        False when nothing converts (no attribute file anywhere, `core.autocrlf` off); True when
        something may; None when it takes the loaded index to tell.
    """
    config = user_repo.config
    if _autocrlf(config):
        return True
    tracked = _tracks_gitattributes(raw_index, index)
    if tracked is None:
        return None
    return tracked or _other_attribute_sources(config, common_dir)


def converted_entries(
    user_repo: pygit2.Repository,
    common_dir: Path,
    raw_index: bytes,
    index: pygit2.Index,
    *,
    possible: bool | None = None,
) -> list[str]:
    """Lists the seeded entries whose stat data vouches for converted content.

    Args:
        user_repo: The user's repository (read only).
        common_dir: Its common git directory (where `info/attributes` lives).
        raw_index: The bytes of the user's index file, as copied.
        index: The seed: our copy of the user's index, loaded.
        possible: `may_convert`'s answer when the caller already has it (None: ask it here).

    Returns:
        Paths whose files must be hashed rather than trusted.
    """
    config = user_repo.config
    if possible is None:
        possible = may_convert(user_repo, common_dir, raw_index, index)
    if not possible:
        return []
    drivers = _filter_drivers(config)
    odb = user_repo.odb
    out: list[str] = []
    raw = index._index
    for i in range(C.git_index_entrycount(raw)):
        entry = C.git_index_get_byindex(raw, i)
        if entry.mode == _GITLINK:
            continue
        path = os.fsdecode(ffi.string(entry.path))
        oid = pygit2.Oid(raw=bytes(ffi.buffer(ffi.addressof(entry, "id"))[:20]))
        try:
            _type, size = odb.read_header(oid)
        except (KeyError, pygit2.GitError, ValueError):
            out.append(path)  # a blob we cannot read vouches for nothing
            continue
        # The index keeps the file size modulo 2**32 (git's own stat cache does the same).
        if size & 0xFFFFFFFF != entry.file_size:
            out.append(path)
        elif drivers and _filter_applies(user_repo, path, drivers):
            out.append(path)
    return out


def distrust(index: pygit2.Index, paths: list[str]) -> None:
    """Zeroes the stat data of `paths` so the next diff hashes their files.

    The entries stay (so they still count as tracked for the untracked-directory guard); an
    entry re-added without stat data matches no file, and libgit2 hashes the file, then records
    its stat data once the content is known.
    """
    for path in paths:
        entry = index[path]
        index.add(pygit2.IndexEntry(path, entry.id, entry.mode))


def _autocrlf(config: pygit2.Config) -> bool:
    try:
        value = config["core.autocrlf"]
    except KeyError:
        return False
    return value is not None and value.strip().lower() in ("true", "yes", "on", "1", "input")


def _filter_drivers(config: pygit2.Config) -> set[str]:
    names: set[str] = set()
    for item in config:
        match = _FILTER_DRIVER.match(item.name)
        if match and item.value:
            names.add(match.group(1))
    return names


def _filter_applies(repo: pygit2.Repository, path: str, drivers: set[str]) -> bool:
    value = repo.get_attr(path, "filter")
    return isinstance(value, str) and value in drivers


def _other_attribute_sources(config: pygit2.Config, common_dir: Path) -> bool:
    """Tells whether an attributes file outside the tree may apply: the repository's, or global."""
    if _non_empty(common_dir / "info" / "attributes"):
        return True
    system = pygit2.settings.search_path[pygit2.enums.ConfigLevel.SYSTEM]
    xdg = pygit2.settings.search_path[pygit2.enums.ConfigLevel.XDG]
    candidates = [Path(system) / "gitattributes", Path(xdg) / "attributes"]
    try:
        configured = config["core.attributesFile"]
    except KeyError:
        configured = None
    if configured:
        candidates.append(Path(os.path.expanduser(configured)))
    return any(_non_empty(p) for p in candidates)


def _tracks_gitattributes(raw_index: bytes, index: pygit2.Index | None) -> bool | None:
    """Tells whether the index tracks a `.gitattributes` file; None when that takes the loaded index."""
    # Index versions 2 and 3 store each path whole and NUL-terminated: one search of the file
    # answers. Version 4 compresses paths against the previous one, so walk the entries there.
    if raw_index[4:8] in (b"\x00\x00\x00\x02", b"\x00\x00\x00\x03"):
        return b".gitattributes\x00" in raw_index
    if index is None:
        return None
    return any(entry.path.rsplit("/", 1)[-1] == ".gitattributes" for entry in index)


def _non_empty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False
