"""Applying an attempt's result to the user's workspace: only the paths it changed, undoably.

The attempt's own store holds both ends of its change (``fleet-base`` and ``fleet-result``). The
workspace is snapshotted first (the undo point); then each changed path is compared three ways,
by git blob id and mode: the workspace still as the attempt found it → written; already equal to
the result → left; changed on both sides → a conflict, reported and left alone unless ``force``.
Nothing is written when there is a conflict and no ``force``: a half-applied result is worse
than none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.fleet.materialize import open_store, tree_entries

if TYPE_CHECKING:
    from agentcli.fleet.models import Race

_MODE_LINK = 0o120000
_MODE_EXEC = 0o100755


class ApplyError(Exception):
    """The result cannot be applied (a path outside the workspace, an unreadable object)."""


class ApplyConflict(Exception):
    """Paths changed both in the attempt and in the workspace since the race began."""

    def __init__(self, message: str, conflicts: list[Conflict], undo_snapshot: str) -> None:
        super().__init__(message)
        self.conflicts = conflicts
        self.undo_snapshot = undo_snapshot


@dataclass(frozen=True)
class Conflict:
    path: str
    reason: str
    applied_by: str | None = None
    """The attempt an earlier ``race apply`` (not undone) wrote this path from, if one did."""


@dataclass
class ApplyResult:
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    """Paths the workspace already had as the attempt left them."""
    overwritten: list[Conflict] = field(default_factory=list)
    """Conflicts written anyway (``force``)."""
    undo_snapshot: str = ""
    after_tree: str = ""

    @property
    def paths(self) -> list[str]:
        return sorted([*self.written, *self.deleted])


def changed_paths(attempt_store: Path, base_tree: str, final_tree: str) -> dict[str, tuple[tuple[str, int] | None,
                                                                                        tuple[str, int] | None]]:
    """Every path whose blob or mode differs between the attempt's base and result: (base, final)."""
    base = tree_entries(attempt_store, base_tree)
    final = tree_entries(attempt_store, final_tree)
    return {path: (base.get(path), final.get(path))
            for path in sorted(base.keys() | final.keys()) if base.get(path) != final.get(path)}


def apply_result(*, workspace: Path, data_dir: Path, attempt_store: Path, base_tree: str, final_tree: str,
                 session_id: str, label: str, force: bool = False) -> ApplyResult:
    """Writes the attempt's changes into ``workspace`` after snapshotting it.

    Args:
        workspace: The user's workspace.
        data_dir: agentcli's data directory (where both snapshot stores live).
        attempt_store: The attempt's snapshot store (its git directory).
        base_tree: The tree the attempt started from.
        final_tree: The tree it ended with.
        session_id: The timeline the undo point and the result are recorded in (the race's).
        label: Names the attempt in the snapshots' reasons.
        force: Overwrite paths changed on both sides.

    Raises:
        ApplyConflict: Some path changed on both sides and ``force`` is off; nothing was written.
        ApplyError: A path would land outside the workspace or inside ``.git``.
    """
    from agentcli.snapshots import SnapshotStore

    store = SnapshotStore(workspace, data_dir)
    before = store.capture(session_id=session_id, reason=f"before applying {label}")
    undo = (before.snapshot or store.timeline(session_id)[-1]).id
    current = tree_entries(store.path, before.tree)
    result = ApplyResult(undo_snapshot=undo)
    todo: list[tuple[str, tuple[str, int] | None]] = []
    conflicts: list[Conflict] = []
    blocked: list[Conflict] = []
    changes = changed_paths(attempt_store, base_tree, final_tree)
    deleting = {path for path, (_, final) in changes.items() if final is None}
    for path, (base, final) in changes.items():
        _check_path(workspace, path)
        now = current.get(path)
        in_the_way = _in_the_way(workspace, path, deleting) if final is not None else None
        if in_the_way is not None:
            blocked.append(Conflict(path, in_the_way))
        elif now is None and base is None and os.path.lexists(workspace / path) \
                and (final is None or not _real_dir(workspace / path)):
            # Not in the snapshot but on disk: an ignored file of the user's. (A folder there is
            # one the attempt empties, or _in_the_way would have said so.)
            reason = "exists in the workspace (an ignored file) and the attempt creates it"
            conflicts.append(Conflict(path, reason))
        elif now == final:
            result.unchanged.append(path)
            continue
        elif now != base:
            conflicts.append(Conflict(path, "changed in the workspace since the race began"))
        todo.append((path, final))
    if blocked and force:
        # --force takes the attempt's file over the user's, never a whole folder of theirs (or a
        # file a folder of the attempt's would replace): those the user moves away.
        listed = "; ".join(f"{c.path}: {c.reason}" for c in blocked[:5])
        raise ApplyError(f"nothing applied, not even with --force: {listed}; move that out of the way first")
    conflicts = blocked + conflicts
    if conflicts and not force:
        raise ApplyConflict(_conflict_message(conflicts), conflicts, undo)
    result.overwritten = conflicts
    repo = open_store(attempt_store)
    # Deletions first: an attempt that turned a folder into a file (or a file into a folder)
    # frees the path before the new one is written there.
    todo.sort(key=lambda item: item[1] is not None)
    try:
        for path, final in todo:
            target = workspace / path
            if final is None:
                _remove(target, workspace)
                result.deleted.append(path)
            else:
                _write(target, repo[final[0]].read_raw(), final[1])
                result.written.append(path)
    except (OSError, ApplyError) as error:
        # A half-applied result is worse than none: put back what was written so far.
        store.restore(undo, session_id=session_id)
        raise ApplyError(f"{path}: {error}; nothing applied (the workspace was put back as it was)") from None
    after = store.capture(session_id=session_id, reason=f"applied {label}", paths_hint=result.paths or None)
    result.after_tree = after.tree
    return result


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _in_the_way(workspace: Path, path: str, deleting: set[str]) -> str | None:
    """Why the attempt's file at ``path`` cannot be written as things are, or None.

    The user's file where the attempt has a folder on the way, or the user's folder where the
    attempt has a file; paths the attempt itself deletes are out of the way by then.
    """
    parts = path.split("/")
    for depth in range(1, len(parts)):
        above = "/".join(parts[:depth])
        where = workspace / above
        if above not in deleting and os.path.lexists(where) and not where.is_dir():
            return f"{above} is a file in the workspace, and the attempt makes it a folder"
    target = workspace / path
    if _real_dir(target):
        for root, _, files in os.walk(target):
            for name in files:
                inside = os.path.relpath(os.path.join(root, name), workspace).replace(os.sep, "/")
                if inside not in deleting:
                    return "a folder in the workspace, where the attempt has a file"
    return None


def _check_path(workspace: Path, path: str) -> None:
    parts = path.split("/")
    if path.startswith("/") or any(part in ("", ".", "..", ".git") for part in parts):
        raise ApplyError(f"the attempt's result holds the path {path!r}, which cannot be applied safely")
    # A folder on the way that is a symlink could lead outside the workspace.
    parent = (workspace / path).parent
    real = Path(os.path.realpath(parent)) if parent.exists() else None
    if real is not None and real != workspace.resolve() and workspace.resolve() not in real.parents:
        raise ApplyError(f"{path}: its folder leads outside the workspace (a symlink); not applied")


def _write(target: Path, data: bytes, mode: int) -> None:
    """Writes through a temporary file and a rename: a crash leaves the old file or the new one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_dir() and not target.is_symlink():
        raise ApplyError(f"{target} is a folder in the workspace and a file in the attempt; not applied")
    temp = target.with_name(f".{target.name}.agentcli-apply")
    temp.unlink(missing_ok=True)
    if mode == _MODE_LINK:
        os.symlink(data.decode("utf-8", "surrogateescape"), temp)
    else:
        temp.write_bytes(data)
        temp.chmod(0o755 if mode == _MODE_EXEC else 0o644)
    os.replace(temp, target)


def _remove(target: Path, workspace: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    folder = target.parent
    while folder != workspace and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()  # the attempt deleted a folder's last file: git would not keep the folder either
        folder = folder.parent


def undo_apply(workspace: Path, data_dir: Path, undo_snapshot: str, session_id: str) -> tuple[int, str]:
    """Restores the snapshot taken before an apply (itself undoable: the store snapshots first).

    Returns:
        How many paths changed, and the id of the snapshot taken before restoring.

    Raises:
        ApplyError: The store refused (a conflict it cannot resolve, a snapshot gone).
    """
    from agentcli.snapshots import SnapshotError, SnapshotStore

    try:
        result = SnapshotStore(workspace, data_dir).restore(undo_snapshot, session_id=session_id)
    except SnapshotError as error:
        raise ApplyError(str(error)) from None
    return len(result.plan.changes), result.undo.id


def apply_attempt(race: Race, attempt_id: str, data_dir: Path, *, force: bool = False) -> ApplyResult:
    """Applies one of ``race``'s attempts to its workspace and records it in ``race.json``.

    Raises:
        ApplyError: No such attempt, it has no result, or a path cannot be applied safely.
        ApplyConflict: See :func:`apply_result`.
    """
    from datetime import UTC, datetime

    from agentcli.fleet import records
    from agentcli.fleet.models import Applied
    from agentcli.fleet.workdir import collect, store_path
    from agentcli.snapshots import SnapshotError

    attempt = race.attempt(attempt_id)
    if attempt is None:
        ids = ", ".join(a.id for a in race.attempts)
        raise ApplyError(f"race {race.id} has no attempt {attempt_id!r} (it has {ids})")
    if not attempt.has_change:
        raise ApplyError(f"attempt {attempt.id} has no result to apply ({attempt.state})")
    assert attempt.base_tree is not None  # has_change says so
    workspace = Path(race.workspace)
    if not workspace.is_dir():
        raise ApplyError(f"the race's workspace {workspace} is no longer a folder (moved or deleted?); "
                         f"`agentcli race diff {attempt.id}` shows the change, to apply by hand")
    workdir = Path(attempt.workdir)
    try:
        if workdir.is_dir():
            # Collected again: the user may have resumed the attempt's session (or edited its files)
            # since the race ended, and what they apply is what the directory holds now.
            collected = collect(workdir, data_dir)
            attempt.final_tree, attempt.change = collected.final_tree, collected.change
        if attempt.final_tree is None:
            raise ApplyError(f"attempt {attempt.id} has no result to apply: its directory {workdir} is gone")
        result = apply_result(workspace=workspace, data_dir=data_dir,
                              attempt_store=store_path(workdir, data_dir), base_tree=attempt.base_tree,
                              final_tree=attempt.final_tree, session_id=race.id,
                              label=f"race {race.id} attempt {attempt.id}", force=force)
    except SnapshotError as error:  # a store locked by another capture, an object gone: say which
        raise ApplyError(str(error)) from None
    except ApplyConflict as conflict:
        raise _naming_earlier_applies(conflict, race) from None
    if result.paths:  # an apply that wrote nothing has nothing for `race undo` to take back
        race.applied.append(Applied(attempt=attempt.id, at=datetime.now(UTC), undo_snapshot=result.undo_snapshot,
                                    paths=result.paths))
    records.save(data_dir, race)
    return result


def _naming_earlier_applies(conflict: ApplyConflict, race: Race) -> ApplyConflict:
    """The conflict, its paths that an earlier apply of this race wrote saying so: switching from
    one attempt to another conflicts on every path both change, and "changed in the workspace"
    alone reads as if the user had edited them."""
    writers: dict[str, str] = {}
    for earlier in race.applied:
        if earlier.undone is None:
            writers.update(dict.fromkeys(earlier.paths, earlier.attempt))
    if not any(item.path in writers for item in conflict.conflicts):
        return conflict
    named = [Conflict(item.path, f"{item.reason} (race apply {writers[item.path]} wrote it; `agentcli race undo` "
                                 "takes that back)", applied_by=writers[item.path]) if item.path in writers else item
             for item in conflict.conflicts]
    return ApplyConflict(_conflict_message(named), named, conflict.undo_snapshot)


def _conflict_message(conflicts: list[Conflict]) -> str:
    listed = "; ".join(f"{c.path}: {c.reason}" for c in conflicts[:5])
    more = f" (and {len(conflicts) - 5} more)" if len(conflicts) > 5 else ""
    return f"{len(conflicts)} path(s) changed on both sides, nothing applied: {listed}{more}"
