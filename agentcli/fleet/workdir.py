"""An attempt's or a task's directory: written from a snapshot (or cloned), and its result collected.

Both ends go through the directory's own snapshot store (``SnapshotStore(workdir, data_dir)``):
the tree it starts from is captured as the ``fleet-base`` snapshot, the tree it ends with as
``fleet-result``; the change between them is the attempt's result, its size the score's second
half, and what ``race apply`` writes. The agent's session in the directory records its own
timeline in the same store, as any session does.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from agentcli.fleet.materialize import materialize
from agentcli.fleet.models import ChangeSize

BASE_SESSION = "fleet-base"
RESULT_SESSION = "fleet-result"


class WorkdirError(Exception):
    """The directory could not be prepared (a clone failed, a ref is missing, the store refused)."""


@dataclass(frozen=True)
class Prepared:
    """A directory ready for a session: where, from which tree, and what writing it cost."""

    workdir: Path
    base_tree: str
    write_s: float
    """Writing the files (or cloning)."""
    capture_s: float
    """Capturing them as the base: a full hash of a fresh directory, which the session's own first
    capture then no longer pays (it finds the store's index up to date)."""


@dataclass(frozen=True)
class Collected:
    """The tree a directory ended with and how far it is from where it started."""

    final_tree: str
    change: ChangeSize
    patch: str
    """Unified diff of every changed file (``Binary files … differ`` for binary ones)."""
    seconds: float


def capture_workspace(workspace: Path, data_dir: Path, session_id: str, reason: str) -> tuple[str, str]:
    """Snapshots the user's workspace as it is now (uncommitted work included).

    Returns:
        The tree and the id of the snapshot that holds it (the session's last, if unchanged).
    """
    from agentcli.snapshots import SnapshotStore

    store = SnapshotStore(workspace, data_dir)
    result = store.capture(session_id=session_id, reason=reason)
    snapshot = result.snapshot or store.timeline(session_id)[-1]
    return result.tree, snapshot.id


def store_path(workspace: Path, data_dir: Path) -> Path:
    """The git directory of ``workspace``'s snapshot store."""
    from agentcli.snapshots import SnapshotStore

    return SnapshotStore(workspace, data_dir).path


def from_snapshot(workspace: Path, tree: str, workdir: Path, data_dir: Path) -> Prepared:
    """Writes ``tree`` of ``workspace``'s store into ``workdir`` and records it as the base.

    Raises:
        MaterializeError: ``workdir`` is not empty, or the store lacks the tree.
    """
    started = time.perf_counter()
    materialize(store_path(workspace, data_dir), tree, workdir)
    written = time.perf_counter()
    base = _capture(workdir, data_dir, BASE_SESSION, "the tree the attempt starts from")
    return Prepared(workdir=workdir, base_tree=base, write_s=written - started,
                    capture_s=time.perf_counter() - written)


def from_git(source: str, ref: str | None, workdir: Path, data_dir: Path) -> Prepared:
    """Clones ``source`` (a URL or a local repository) into ``workdir`` at ``ref``.

    A clone is a repository of its own: the source's ``.git`` is only read.

    Raises:
        WorkdirError: git failed; its message says why.
    """
    started = time.perf_counter()
    if workdir.exists() and any(workdir.iterdir()):
        raise WorkdirError(f"{workdir} is not empty")
    workdir.parent.mkdir(parents=True, exist_ok=True)
    _git(["git", "clone", "--quiet", "--no-checkout", source, str(workdir)], f"cloning {source}")
    commit = _resolve(workdir, ref, source) if ref else "HEAD"
    _git(["git", "-C", str(workdir), "checkout", "--quiet", "--detach", commit],
         f"checking out {ref or 'HEAD'} of {source}")
    written = time.perf_counter()
    base = _capture(workdir, data_dir, BASE_SESSION, "the tree the task starts from")
    return Prepared(workdir=workdir, base_tree=base, write_s=written - started,
                    capture_s=time.perf_counter() - written)


def _git(argv: list[str], doing: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WorkdirError(f"{doing} failed: {error}") from None
    if done.returncode != 0:
        raise WorkdirError(f"{doing} failed: {done.stderr.strip() or done.stdout.strip()}")


def _resolve(clone: Path, ref: str, source: str) -> str:
    """The commit ``ref`` names in a fresh clone: a commit id, a tag, or a branch of the source.

    A fresh clone has a local branch only for the source's default one; its other branches are
    ``origin/NAME`` (``git checkout --detach NAME`` alone fails on them, with a message about
    paths that says nothing of the ref).
    """
    for candidate in (ref, f"origin/{ref}"):
        found = subprocess.run(["git", "-C", str(clone), "rev-parse", "--verify", "--quiet", "--end-of-options",
                                f"{candidate}^{{commit}}"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if found.returncode == 0 and found.stdout.strip():
            return found.stdout.strip()
    raise WorkdirError(f"{source} has no commit, tag or branch {ref!r}")


def _capture(workdir: Path, data_dir: Path, session_id: str, reason: str) -> str:
    from agentcli.snapshots import SnapshotStore

    return SnapshotStore(workdir, data_dir).capture(session_id=session_id, reason=reason).tree


def collect(workdir: Path, data_dir: Path) -> Collected:
    """Captures the tree ``workdir`` ended with and diffs it against its base."""
    from agentcli.snapshots import SnapshotStore

    started = time.perf_counter()
    store = SnapshotStore(workdir, data_dir)
    result = store.capture(session_id=RESULT_SESSION, reason="the tree the attempt ended with")
    final = result.snapshot or store.timeline(RESULT_SESSION)[-1]
    base = store.timeline(BASE_SESSION)[0]
    diff = store.diff(base, final)
    patch = "".join(file.patch for file in diff.files)
    change = ChangeSize(files=diff.totals.files, added=diff.totals.added, removed=diff.totals.removed)
    return Collected(final_tree=result.tree, change=change, patch=patch, seconds=time.perf_counter() - started)


def discard(workdir: Path, data_dir: Path) -> None:
    """Deletes a directory and its snapshot store (a finished batch task nobody asked to keep)."""
    import shutil

    if not workdir.is_dir():
        return
    store = store_path(workdir, data_dir)
    shutil.rmtree(store, ignore_errors=True)
    store.with_name(store.name + ".lock").unlink(missing_ok=True)
    shutil.rmtree(workdir, ignore_errors=True)


def result_patch(workdir: Path, data_dir: Path) -> str:
    """The unified diff of a directory's change as it is now (collected again: a resumed session
    may have gone on after the race).

    Raises:
        WorkdirError: The directory is gone (``race rm``), or its store cannot be read.
    """
    from agentcli.snapshots import SnapshotError

    if not workdir.is_dir():
        raise WorkdirError(f"{workdir} no longer exists")
    try:
        return collect(workdir, data_dir).patch
    except SnapshotError as error:
        raise WorkdirError(str(error)) from None
