"""Moving directories between machines as tar archives: the tree out, the changed files back.

Used by the Ray backend: the attempt's directory travels to the worker as one archive, and only
what the job changed (plus the list of deleted paths) travels back. Symlinks travel as symlinks;
extraction refuses members that would land outside the target (tarfile's ``tar`` filter).
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

StatIndex = dict[str, tuple[int, int, int]]
"""Relative path → (size, mtime in ns, mode): enough to tell which files a job touched."""


def pack(folder: Path, paths: list[str] | None = None) -> bytes:
    """A gzip'd tar of ``folder`` (or only ``paths`` under it), fast compression."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        if paths is None:
            for name in sorted(os.listdir(folder)):
                archive.add(folder / name, arcname=name)
        else:
            for path in paths:
                archive.add(folder / path, arcname=path, recursive=False)
    return buffer.getvalue()


def unpack(data: bytes, folder: Path) -> None:
    """Extracts an archive from :func:`pack` into ``folder`` (created if needed), over what is there."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            target = folder / member.name
            # Replacing a file by a symlink (or the reverse) needs the old one gone first.
            if (member.issym() or member.isfile()) and (target.is_symlink() or target.is_file()):
                target.unlink()
        archive.extractall(folder, filter="tar")


def stat_index(folder: Path) -> StatIndex:
    """Every file and symlink under ``folder`` with its size, mtime and mode."""
    found: StatIndex = {}
    for root, dirs, files in os.walk(folder):
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(root, d)))]:
            path = os.path.join(root, name)
            info = os.lstat(path)
            found[os.path.relpath(path, folder)] = (info.st_size, info.st_mtime_ns, info.st_mode)
    return found


def changes_since(folder: Path, before: StatIndex) -> tuple[list[str], list[str]]:
    """What changed under ``folder`` since ``before``: (new or modified paths, deleted paths)."""
    after = stat_index(folder)
    changed = sorted(path for path, stat in after.items() if before.get(path) != stat)
    deleted = sorted(path for path in before if path not in after)
    return changed, deleted


def remove(folder: Path, paths: list[str]) -> None:
    """Deletes ``paths`` under ``folder`` (never outside it), and folders they leave empty."""
    root = folder.resolve()
    for path in paths:
        target = folder / path
        if ".." in Path(path).parts or Path(path).is_absolute():
            continue
        if target.is_symlink() or target.is_file():
            target.unlink()
        parent = target.parent
        while parent.resolve() != root and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
