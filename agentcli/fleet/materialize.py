"""Writing a snapshot tree into a directory of its own, and reading trees back: the attempt's start.

An attempt never runs in the user's workspace and never in a ``git worktree`` (which writes into
the user's ``.git``): it runs in a plain directory written here from a tree the snapshot store
already holds. The store is opened read-only through its public ``path`` (a bare git directory
whose alternates reach the user's objects); nothing is ever written through this handle, so
neither the store nor the user's object database changes (libgit2 touches objects only on write).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2

_MODE_LINK = 0o120000
_MODE_EXEC = 0o100755
_MODE_TREE = 0o040000
_MODE_COMMIT = 0o160000
_BAD_NAMES = frozenset({"", ".", "..", ".git"})
_WRITERS = 4
_BATCH = 256


class MaterializeError(Exception):
    """The tree cannot be written where asked (missing object, unsafe name, non-empty target)."""


@dataclass(frozen=True)
class MaterializeStats:
    """What writing a tree cost."""

    files: int
    bytes: int
    duration_s: float


def open_store(store_path: Path) -> pygit2.Repository:
    """The snapshot store's git directory, opened for reading objects only."""
    import pygit2

    try:
        return pygit2.Repository(str(store_path))
    except pygit2.GitError as error:
        raise MaterializeError(f"cannot open the snapshot store {store_path}: {error}") from None


def materialize(store_path: Path, tree: str, dest: Path) -> MaterializeStats:
    """Writes every file of ``tree`` under ``dest``, with executable bits and symlinks.

    Args:
        store_path: The snapshot store's git directory (``SnapshotStore.path``).
        tree: The tree id (a snapshot's ``tree``).
        dest: A directory that does not exist yet or is empty.

    Returns:
        How many files and bytes were written, and how long it took.

    Raises:
        MaterializeError: ``dest`` holds files, the tree or an object is missing, or an entry's
            name could escape the directory.
    """
    import pygit2

    started = time.perf_counter()
    if dest.exists() and any(dest.iterdir()):
        raise MaterializeError(f"{dest} is not empty; an attempt starts in a fresh directory")
    dest.mkdir(parents=True, exist_ok=True)
    repo = open_store(store_path)
    try:
        root = repo[pygit2.Oid(hex=tree)]
    except (KeyError, ValueError):
        raise MaterializeError(f"tree {tree} is not in the snapshot store {store_path}") from None
    if not isinstance(root, pygit2.Tree):
        raise MaterializeError(f"{tree} in {store_path} is not a tree")
    files = 0
    written = 0
    batch: list[tuple[str, bytes, int]] = []
    pending: list[Future[None]] = []
    stack: list[tuple[pygit2.Tree, str]] = [(root, str(dest))]
    # Creating a file is the cost (the filesystem's, ~70 µs each, with the GIL released), so files
    # are written by a few threads in batches while this one reads the next objects.
    with ThreadPoolExecutor(max_workers=_WRITERS, thread_name_prefix="agentcli-materialize") as pool:
        while stack:
            current, folder = stack.pop()
            for entry in current:
                name = entry.name or ""
                if name in _BAD_NAMES or "/" in name or "\0" in name:
                    raise MaterializeError(f"tree {tree} holds an entry named {name!r} under {folder}; refusing it")
                target = os.path.join(folder, name)
                mode = entry.filemode
                if mode == _MODE_TREE:
                    os.mkdir(target)
                    stack.append((repo[entry.id], target))  # type: ignore[arg-type]
                    continue
                if mode == _MODE_COMMIT:
                    os.mkdir(target)  # a submodule: git leaves an empty folder where it is not checked out
                    continue
                data = _blob(repo, entry.id, target)
                if mode == _MODE_LINK:
                    os.symlink(data.decode("utf-8", "surrogateescape"), target)
                else:
                    batch.append((target, data, mode))
                    if len(batch) >= _BATCH:
                        pending.append(pool.submit(_write_files, batch))
                        batch = []
                files += 1
                written += len(data)
        if batch:
            pending.append(pool.submit(_write_files, batch))
        for future in pending:
            future.result()  # the first failure (a full disk) is raised here
    return MaterializeStats(files=files, bytes=written, duration_s=time.perf_counter() - started)


def _write_files(batch: list[tuple[str, bytes, int]]) -> None:
    for target, data, mode in batch:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755 if mode == _MODE_EXEC else 0o644)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)


def _blob(repo: pygit2.Repository, oid: pygit2.Oid, target: str) -> bytes:
    try:
        return repo[oid].read_raw()
    except KeyError:
        raise MaterializeError(f"object {oid} for {target} is missing from the snapshot store") from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_blob(store_path: Path, tree: str, path: str) -> tuple[bytes, int] | None:
    """The content and git file mode of ``path`` in ``tree``; None when the tree lacks it."""
    import pygit2

    repo = open_store(store_path)
    root = repo[pygit2.Oid(hex=tree)]
    assert isinstance(root, pygit2.Tree)
    try:
        entry = root[path]
    except KeyError:
        return None
    if entry.filemode in (_MODE_TREE, _MODE_COMMIT):
        return None
    return repo[entry.id].read_raw(), entry.filemode


def tree_entries(store_path: Path, tree: str) -> dict[str, tuple[str, int]]:
    """Every file path in ``tree`` with its blob id and mode (submodules count as files)."""
    import pygit2

    repo = open_store(store_path)
    found: dict[str, tuple[str, int]] = {}
    stack: list[tuple[pygit2.Tree, str]] = [(repo[pygit2.Oid(hex=tree)], "")]  # type: ignore[list-item]
    while stack:
        current, prefix = stack.pop()
        for entry in current:
            path = f"{prefix}{entry.name}"
            if entry.filemode == _MODE_TREE:
                stack.append((repo[entry.id], path + "/"))  # type: ignore[arg-type]
            else:
                found[path] = (str(entry.id), entry.filemode)
    return found
