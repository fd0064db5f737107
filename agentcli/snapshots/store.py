"""`SnapshotStore`: the one object the session layer talks to.

Every method is synchronous and may block on disk I/O (the caller runs it in a worker
thread). Methods that read or write the shadow index or objects hold the store lock, which
serializes threads and processes sharing the workspace.

Over 400 lines because it is the store's whole public surface (capture, timeline, diff, restore,
gc, close) behind one lock; the work itself lives in the modules each method calls.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pygit2
from pygit2.enums import DiffOption

from agentcli.ignore import IgnoreSources, discover
from agentcli.restore_reason import restore_reason
from agentcli.snapshots._libgit2 import diff_tree_to_index
from agentcli.snapshots.capture import IndexRefresher, Limits, Refreshed
from agentcli.snapshots.diff import diff_result, file_stats, tree_diff
from agentcli.snapshots.errors import CorruptStoreError, RestoreConflictError, SnapshotError
from agentcli.snapshots.gc import (
    BUDGET_TARGET,
    choose_drops,
    dir_size,
    merge_small_packs,
    repack,
    scan_own_objects,
    tree_type_ok,
)
from agentcli.snapshots.guards import check_session_id
from agentcli.snapshots.layout import Layout, LayoutRecords
from agentcli.snapshots.layoutapply import apply_layout
from agentcli.snapshots.layoutcache import LayoutCache
from agentcli.snapshots.locking import StoreLock
from agentcli.snapshots.models import (
    CaptureResult,
    DiffResult,
    DroppedSnapshot,
    FileStat,
    GcResult,
    RestoreConflict,
    RestorePlan,
    RestoreResult,
    Snapshot,
)
from agentcli.snapshots.restore import Applied, apply_changes, plan_changes, umask
from agentcli.snapshots.restored import not_looked_at, only_ours, unchecked_tree_writes, update_index
from agentcli.snapshots.restorestats import restore_file_stats
from agentcli.snapshots.shadow import ShadowRepo, store_key
from agentcli.snapshots.timeline import Timeline, ref_name, snapshot_id
from agentcli.snapshots.watcher import TreeWatcher

_ZERO = "0" * 40

NARROW_DIFF_MAX = 5000
"""Up to this many changed paths, a new timeline entry's file list comes from a diff limited to
them; beyond, a whole-tree diff costs no more."""

AUTO_MERGE_PACKS = 32
"""A capture that leaves more packs than this runs gc (which merges them) before returning."""


class SnapshotStore:
    """Snapshots of one workspace, kept in a shadow git repository under `data_dir`.

    Constructing a store is cheap: the shadow repository is created or opened on first use.

    Args:
        workspace: The directory to snapshot (the agent's working directory).
        data_dir: agentcli's user data directory (e.g. `$XDG_DATA_HOME/agentcli`); the store
            lives in `data_dir/snapshots/<name>-<hash of the workspace path>`.
        max_file_bytes: Untracked files bigger than this are skipped (and reported).
        max_untracked_dir_files: Untracked directories holding more files are skipped.
        budget_bytes: Size `gc()` brings the store under by dropping the oldest snapshots.
        watch: Watch the workspace (inotify, Linux) from the first full capture on, so that
            `capture(watched=True)` looks only at the paths touched since the last capture.

    Raises:
        SnapshotError: The workspace is not an existing directory.
    """

    def __init__(
        self,
        workspace: Path,
        data_dir: Path,
        *,
        max_file_bytes: int = 10 * 1024 * 1024,
        max_untracked_dir_files: int = 5000,
        budget_bytes: int = 2 * 1024**3,
        watch: bool = False,
    ) -> None:
        ws = Path(workspace).expanduser()
        if not ws.is_dir():
            raise SnapshotError(f"workspace {ws} is not a directory; pass the project directory to snapshot")
        self.workspace = ws.resolve()
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.path = self.data_dir / "snapshots" / store_key(self.workspace)
        """The shadow repository (a git directory)."""
        self.budget_bytes = budget_bytes
        self.limits = Limits(max_file_bytes=max_file_bytes, max_untracked_dir_files=max_untracked_dir_files)
        # When the data dir sits inside the workspace (agentcli run in $HOME after confirmation),
        # the store must not snapshot itself.
        excludes: list[str] = []
        if self.data_dir == self.workspace or self.workspace in self.data_dir.parents:
            excludes.append(self.data_dir.relative_to(self.workspace).as_posix())
        self._shadow = ShadowRepo(self.path, self.workspace, [e for e in excludes if e != "."])
        self._lock = StoreLock(self.path.with_name(self.path.name + ".lock"))
        self._timeline = Timeline(self.path / "agentcli" / "timeline")
        # A watching store is a session's: the one worth a hashing process (capture.py).
        self._refresher = IndexRefresher(self._shadow, self.limits, hashing_process=watch)
        self._layouts = LayoutRecords(self.path / "agentcli" / "layout")
        self._layout_now = LayoutCache(self.workspace)
        self._watcher = TreeWatcher(self.workspace) if watch else None
        self._watch_synced = False
        """The index reflects the workspace as of the watcher's last take: hints can be trusted."""
        self._restore_sources: IgnoreSources | None = None
        """The ignore sources as a restore found them at its start, for its layout looks."""
        self._restore_umask: int | None = None
        """The umask as a restore read it at its start: its writes, layout looks and layout step
        all judge modes against it (a read of `/proc/self/status`: ~60 µs under the profiler, five a restore)."""
        self._index_tree: str | None = None
        """The tree of the index as this process last refreshed or set it (None: unknown, ask
        the index). At 100k files asking costs 4 ms: libgit2 scans every entry for conflicts."""

    @property
    def watching(self) -> bool:
        """The watcher runs and the index is in step with it: `capture(watched=True)` walks nothing."""
        return self._watcher is not None and self._watcher.running and self._watch_synced

    # -- capture ----------------------------------------------------------------------------

    def capture(
        self,
        *,
        session_id: str,
        reason: str,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        paths_hint: list[str] | None = None,
        record_layout: bool = False,
        watched: bool = False,
    ) -> CaptureResult:
        """Records the workspace as a tree; adds a timeline entry if it changed.

        Args:
            session_id: The session the entry belongs to.
            reason: Why (`session start`, `after bash`, ...), shown in the timeline.
            tool_call_id: The tool call that caused the capture, if any.
            tool_name: Its tool's name.
            paths_hint: Paths a tool says it changed (`write_file`, `edit_file`): only those
                are looked at, with no tree walk. Leave None after `bash`, which can change
                anything.
            record_layout: Also record what the tree cannot hold (modes other than 644/755,
                empty folders: see `layout.py`), so restoring this snapshot is exact. One more
                walk of the workspace: for a turn's start and restores, not after every tool.
            watched: Look only at the paths the watcher saw touched since the last capture
                (after `bash`). Falls back to walking the tree when the store does not watch,
                the watcher lost events, or an ignore file changed.

        Returns:
            The new snapshot (None when the tree equals the session's previous one), the
            tree, the paths skipped by the guards, and the time taken.
        """
        check_session_id(session_id)
        started = time.perf_counter()
        with self._lock.held():
            self._index_tree = None  # a refresh that fails leaves the index reread from disk
            refreshed = self._refresh_for_capture(paths_hint, watched)
            self._index_tree = str(refreshed.tree)
            return self._record(
                refreshed,
                started,
                session_id=session_id,
                reason=reason,
                tool_call_id=tool_call_id,
                tool_name=tool_name,
                record_layout=record_layout,
            )

    def _record(
        self,
        refreshed: Refreshed,
        started: float,
        *,
        session_id: str,
        reason: str,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        record_layout: bool = False,
        known_stats: tuple[list[FileStat], int] | None = None,
    ) -> CaptureResult:
        """Adds the refreshed index's tree to the timeline (the second half of a capture).

        `known_stats` are the line counts of exactly the refresh's changes (a restore's, see
        `restorestats.py`), used when the entry's base is the tree the refresh started from.
        """
        tree = str(refreshed.tree)
        previous = self._timeline.last(session_id)
        if previous is not None and previous.tree == tree:
            if record_layout:
                # Same tree, but modes or empty folders may differ: the entry stands for now.
                self._layouts.save(previous.id, self._current_layout())
            return CaptureResult(
                snapshot=None, tree=tree, skipped=refreshed.skipped, duration_s=time.perf_counter() - started
            )
        base = previous.tree if previous is not None else self._base_for_new_session()
        repo = self._shadow.repo
        files: list[FileStat] = []
        omitted = 0
        if base != tree:
            if base is not None and str(refreshed.before) == base and len(refreshed.changed) <= NARROW_DIFF_MAX:
                # The usual case: the session's last snapshot is what the index held, so the
                # trees differ only at the paths this refresh changed.
                old_tree = repo[base].peel(pygit2.Tree)
                index = self._shadow.index()
                diff = diff_tree_to_index(repo, old_tree, index, DiffOption.INCLUDE_TYPECHANGE, refreshed.changed)
                if known_stats is not None:
                    files, omitted = known_stats
            else:
                diff = tree_diff(repo, base, tree, context=0)
                known_stats = None  # they describe the refresh, not this base
            if base is not None and known_stats is None:  # against nothing, "every file added" tells nothing
                files, omitted = file_stats(diff)
            self._adopt_borrowed_blobs(diff)
        seq = previous.seq + 1 if previous is not None else 1
        snapshot = Snapshot(
            id=snapshot_id(session_id, seq, tree),
            seq=seq,
            session_id=session_id,
            tree=tree,
            created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            reason=reason,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            files=files,
            files_omitted=omitted,
            base_tree=base,
        )
        self._timeline.append(repo, snapshot)
        if record_layout:
            self._layouts.save(snapshot.id, self._current_layout())
        self._merge_packs_if_many()
        return CaptureResult(
            snapshot=snapshot, tree=tree, skipped=refreshed.skipped, duration_s=time.perf_counter() - started
        )

    def _refresh_for_capture(self, paths_hint: list[str] | None, watched: bool) -> Refreshed:
        """Refreshes the index from the hints, the watcher's record, or a walk of the tree."""
        watcher = self._watcher
        if watcher is None:
            return self._refresher.refresh(paths_hint)
        layout = self._layout_now
        if paths_hint is None and not watched:
            watcher.skim_before_walk()  # a walk follows: the queued paths are moot
        taken = watcher.take()
        usable = (
            taken is not None
            and self._watch_synced
            and not taken.ignore_rules_changed
            and not self._refresher.index_written_elsewhere()
        )
        if usable and (watched or paths_hint is not None):
            assert taken is not None
            hints = sorted(taken.paths.union(paths_hint or ()))
            try:
                refreshed = self._refresher.refresh(hints, walk_if_rules_changed=True)
            except BaseException:
                self._watch_synced = False  # what was taken is gone: the next capture walks
                layout.invalidate()
                raise
            layout.note(hints)
            return refreshed
        if paths_hint is not None and not watched:
            # A tool's own hint, but the watcher cannot vouch for the rest: look at the hinted
            # paths now, and walk at the next capture that relies on the watcher.
            self._watch_synced = False
            layout.invalidate()
            return self._refresher.refresh(paths_hint)
        # A walk of the tree. The watcher starts (or restarts) before the walk, so a change
        # made while the walk runs is queued for the next capture rather than lost; its arming
        # overlaps loading the index and any bulk refresh (changes then are the walk's to see).
        self._watch_synced = False
        layout.invalidate()
        armed = watcher.start_in_background()
        try:
            refreshed = self._refresher.refresh(None, before_walk=armed)
        finally:
            running = armed()  # no thread left touching the watcher, whatever happened
        self._watch_synced = running
        return refreshed

    def _current_layout(self) -> Layout:
        """The workspace's layout: from the watcher's paths while it vouches, else a full scan."""
        return self._layout_now.current(self._umask(), trusted=self.watching, sources=self._restore_sources)

    def _umask(self) -> int:
        """The umask a restore read at its start, or now outside one."""
        return self._restore_umask if self._restore_umask is not None else umask()

    def _refresh_unrecorded(self) -> str:
        """Refreshes the index for a look at the files now, without a timeline entry.

        Blobs it wrote belong to no snapshot, so only the index keeps them from another
        process's gc: it is written now rather than later.
        """
        self._index_tree = None
        tree = str(self._refresher.refresh(None).tree)
        self._index_tree = tree
        self._refresher.flush_index()
        return tree

    def _base_for_new_session(self) -> str | None:
        """What a session's first snapshot is compared with: the workspace's last snapshot, else HEAD."""
        everything = self._timeline.all()
        if everything:
            return everything[-1].tree
        head = self._shadow.user_head_tree()
        return str(head) if head is not None else None

    def _adopt_borrowed_blobs(self, diff: pygit2.Diff) -> None:
        """Copies into our store the new blobs we only borrow from outside the user's HEAD.

        Blobs of uncommitted work (staged in the user's index, or equal to some old version)
        exist in the user's object database but nothing there keeps them: a `git gc` after a
        `git reset` prunes them. Blobs of the HEAD commit at the same path stay borrowed.
        """
        objects = self._shadow.objects
        own = self._shadow.own_odb
        if self._shadow.user is None or own is None:
            return
        head_tree: pygit2.Tree | None = None
        head_loaded = False
        with objects.batch():  # thousands of staged-only files become one pack, not loose files
            for delta in diff.deltas:
                new = delta.new_file
                if new.mode in (0, pygit2.enums.FileMode.COMMIT) or str(new.id) == _ZERO:
                    continue
                if not head_loaded:
                    head_id = self._shadow.user_head_tree()
                    head_tree = self._shadow.repo[head_id] if head_id is not None else None  # type: ignore[assignment]
                    head_loaded = True
                # HEAD's blob at the same path before our own objects: a path lookup costs
                # ~0.5 µs, "do we hold it?" ~30 µs when we do not (a stat of the loose path,
                # then every pack's index; 42 packs in the bench). A restore back to committed
                # content asks it of every file it wrote.
                if head_tree is not None:
                    try:
                        if head_tree[new.path].id == new.id:
                            continue
                    except KeyError:
                        pass
                if new.id in own:
                    continue
                if objects.user_has(new.id):
                    object_type, data = objects.user_read(new.id)
                    objects.own_write(new.id, object_type, data)

    # -- timeline -----------------------------------------------------------------------------

    def layout_record(self, snapshot_id: str) -> Layout | None:
        """What a snapshot recorded beside its tree (`capture(record_layout=True)`), if anything."""
        return self._layouts.load(snapshot_id)

    def timeline(self, session_id: str | None = None) -> list[Snapshot]:
        """Snapshots in order: one session's by sequence number, or all sessions' by time.

        Args:
            session_id: The session, or None for every session of this workspace.

        Returns:
            The snapshots, oldest first.
        """
        if session_id is not None:
            check_session_id(session_id)
            return self._timeline.session(session_id)
        return self._timeline.all()

    def resolve(self, ref: str, session_id: str | None = None) -> Snapshot:
        """Finds a snapshot from what a user typed.

        Args:
            ref: A sequence number (`3`), `SESSION:SEQ`, an id or id prefix (at least 4 hex
                digits), or a tree id prefix (at least 7).
            session_id: The session a bare sequence number refers to; optional when only one
                session has that number.

        Returns:
            The snapshot.

        Raises:
            SnapshotNotFound: Nothing matched.
            AmbiguousSnapshotRef: Several snapshots matched.
        """
        if session_id is not None:
            check_session_id(session_id)
        return self._timeline.resolve(ref, session_id)

    def _as_snapshot(self, ref: Snapshot | str) -> Snapshot:
        return ref if isinstance(ref, Snapshot) else self.resolve(ref)

    # -- diff ---------------------------------------------------------------------------------

    def diff(self, a: Snapshot | str, b: Snapshot | str | None = None, *, context: int = 3) -> DiffResult:
        """Per-file unified diffs and line counts between two snapshots, or a snapshot and now.

        Args:
            a: The old side.
            b: The new side; None for the working tree (as a capture would record it now,
                without adding a timeline entry).
            context: Context lines around each hunk.

        Returns:
            Files (renames detected), patches and totals.
        """
        old = self._as_snapshot(a)
        new = self._as_snapshot(b) if b is not None else None
        with self._lock.held():
            new_tree = new.tree if new is not None else self._refresh_unrecorded()
            repo = self._shadow.repo
            self._require_tree(old)
            raw = tree_diff(repo, old.tree, new_tree, context=context, find_renames=True)
            return diff_result(raw, old.tree, new_tree, working_tree=new is None)

    # -- restore ------------------------------------------------------------------------------

    def plan_restore(self, target: Snapshot | str) -> RestorePlan:
        """Previews a restore: exactly which paths it would write, delete or chmod.

        Nothing in the workspace changes (the store's own index is refreshed).

        Args:
            target: The snapshot to restore.

        Returns:
            The plan, including conflicts that would stop the restore.
        """
        snap = self._as_snapshot(target)
        with self._lock.held():
            return self._plan(snap, self._refresh_unrecorded())

    def _plan(self, snap: Snapshot, current: str) -> RestorePlan:
        self._require_tree(snap)
        repo = self._shadow.repo
        parts = plan_changes(repo, self.workspace, current, snap.tree, entries=len(self._shadow.index()))
        conflicts = list(parts.conflicts)
        odb = repo.odb
        for change in parts.changes:
            if change.new_id is not None and change.action == "write" and not odb.exists(change.new_id):
                conflicts.append(
                    RestoreConflict(path=change.path, reason=f"object {change.new_id} is missing from the store")
                )
        return RestorePlan(
            target=snap, current_tree=current, changes=parts.changes, conflicts=conflicts, skipped=parts.skipped
        )

    def restore(self, target: Snapshot | str, *, session_id: str) -> RestoreResult:
        """Makes the workspace match a snapshot, after capturing it as it is (the undo point).

        Only paths that differ are written; files the snapshot lacks are deleted (never
        ignored files, never nested repositories, never anything outside the workspace or
        inside `.git`); executable bits and symlinks are restored.

        Args:
            target: The snapshot to restore.
            session_id: The session recording the undo point and the result.

        Returns:
            The plan applied, the undo snapshot, and the tree afterwards.

        Raises:
            RestoreConflictError: Some path cannot be restored without losing data no snapshot
                holds; nothing was changed (the undo point was recorded).
        """
        check_session_id(session_id)
        snap = self._as_snapshot(target)
        started = time.perf_counter()
        with self._lock.held():
            self._restore_sources = discover(self.workspace)
            self._restore_umask = umask()
            try:
                return self._restore_locked(snap, session_id, started)
            finally:
                self._restore_sources = None
                self._restore_umask = None

    def _restore_locked(self, snap: Snapshot, session_id: str, started: float) -> RestoreResult:
        """`restore` under the store lock."""
        before = self._undo_point(session_id)
        undo = before.snapshot or self._timeline.last(session_id)
        assert undo is not None  # a capture always leaves the session with a snapshot
        plan = self._plan(snap, before.tree)
        if plan.conflicts:
            listed = "; ".join(f"{c.path}: {c.reason}" for c in plan.conflicts[:5])
            raise RestoreConflictError(
                f"restore of snapshot {snap.id} stopped before changing anything: {listed}", plan.conflicts
            )
        layout = self._layouts.load(snap.id)
        applied = apply_changes(
            self._shadow.repo,
            self.workspace,
            plan.changes,
            modes=layout.modes if layout else None,
            umask=self._restore_umask,
        )
        layout_dirs: list[str] = []
        looked_at: set[str] = set()  # paths the layout cache has seen as they are now
        if layout is not None:
            # The files written are learnt from their descriptors' stat data (a look again
            # would lstat each and every folder above it: most of a restore's lstats).
            unlearnt = self._layout_now.wrote(applied.files, applied.symlinks(), self._umask())
            self._layout_now.note([*applied.deleted, *applied.chmodded, *unlearnt])
            now = self._current_layout()
            layout_dirs = [*layout.empty_dirs, *now.empty_dirs]
            modes_set = apply_layout(self.workspace, layout, now, mask=self._restore_umask)
            looked_at = set(applied.touched()).difference(modes_set)
            applied.chmodded.extend(modes_set)
        reason = restore_reason(snap.session_id, snap.seq, snap.id)
        refreshed = self._index_from_restore(applied, layout_dirs, looked_at, before.tree)
        if refreshed is not None:
            after = self._record(
                refreshed,
                time.perf_counter(),
                session_id=session_id,
                reason=reason,
                record_layout=layout is not None,
                # The plan's counts, while the tree is the target's: a file another writer
                # changed after the restore wrote it is entered as it is, and counted by the diff.
                known_stats=restore_file_stats(self._shadow.repo, plan.changes, applied)
                if str(refreshed.tree) == snap.tree else None,
            )
        else:
            after = self.capture(
                session_id=session_id,
                reason=reason,
                paths_hint=applied.touched(),
                record_layout=layout is not None,
                # With a watcher, its record joins the hints; if it lost events, the capture
                # walks rather than record only the restore's own paths.
                watched=self._watcher is not None,
            )
        return RestoreResult(
            plan=plan,
            undo=undo,
            after=after.snapshot,
            tree=after.tree,
            matches_target=after.tree == snap.tree,
            duration_s=time.perf_counter() - started,
        )

    def _undo_point(self, session_id: str) -> CaptureResult:
        """Records the workspace before a restore changes it.

        When the watcher vouches that nothing changed since the last capture (not a path, not
        an exclude file outside the tree, not the index by another process), the index's tree
        is the workspace: it is recorded without looking at the files again.
        """
        started = time.perf_counter()
        watcher = self._watcher
        if (
            watcher is None
            or not self.watching
            or not watcher.quiet()
            or self._refresher.index_written_elsewhere()
            or self._refresher.outside_rules_changed(self._restore_sources)
        ):
            return self.capture(session_id=session_id, reason="before restore", record_layout=True, watched=True)
        if self._index_tree is not None:
            tree = pygit2.Oid(hex=self._index_tree)
        else:
            with self._shadow.objects.batch():
                tree = self._shadow.index().write_tree()  # from the tree cache the last capture left
        refreshed = Refreshed(tree=tree, before=tree)
        return self._record(refreshed, started, session_id=session_id, reason="before restore", record_layout=True)

    def _index_from_restore(
        self, applied: Applied, layout_dirs: list[str], looked_at: set[str], before_tree: str
    ) -> Refreshed | None:
        """The index set from what the restore changed (see `restored.py`); None: capture instead.

        Only while the watcher vouches and saw nothing but the restore's own paths; what it saw
        is handed back to the capture otherwise.
        """
        watcher = self._watcher
        if watcher is None or not self.watching or self._refresher.index_written_elsewhere():
            return None
        taken = watcher.take()
        if taken is None:
            return None  # events were lost: the capture walks
        if taken.ignore_rules_changed or not only_ours(self.workspace, taken.paths, applied, layout_dirs):
            watcher.give_back(taken)
            return None
        # The layout step's folders are noted whole: the watcher reports a folder's removal,
        # not always its making and unmaking within one restore.
        self._layout_now.note([*not_looked_at(taken.paths, looked_at, taken.attributes), *layout_dirs])
        index = self._shadow.index()
        before = pygit2.Oid(hex=before_tree)  # the undo point's: nothing touched the index since
        self._index_tree = None  # until the update is complete
        try:
            with self._shadow.objects.batch(), unchecked_tree_writes():
                changed = update_index(self._shadow.repo, index, self.workspace, applied)
                tree = index.write_tree()
        except (OSError, pygit2.GitError):
            # A written file changed under us (gone, unreadable): capture the paths instead.
            self._refresher.forget_index_changes()
            watcher.give_back(taken)
            return None
        self._refresher.index_changed(changed)
        self._index_tree = str(tree)
        return Refreshed(tree=tree, before=before, changed=changed)

    def _require_tree(self, snap: Snapshot) -> None:
        if not tree_type_ok(self._shadow.repo, snap.tree):
            raise CorruptStoreError(
                f"snapshot {snap.id} ({snap.session_id}:{snap.seq}) points at tree {snap.tree}, which the store "
                f"{self.path} no longer holds; pick another snapshot"
            )

    def close(self) -> None:
        """Compresses the store's index for the time no session uses it (call at session end),
        and brings the store under its budget if it has grown past it.

        The budget was kept only by a manual `gc`, so a busy workspace's store grew without
        bound; enforcing it here costs nothing while the store is under budget (one size walk).
        The store stays usable: the next operation unpacks the index again (~3 ms at 10k files).
        """
        if self.path.exists() and self.size_bytes() > self.budget_bytes:
            self._collect(enforce_budget=True)
        with self._lock.held():
            if self._watcher is not None:
                self._watcher.close()
                self._watch_synced = False
            self._refresher.flush_index()
            self._refresher.close()
            self._shadow.pack_index()

    # -- size and gc ----------------------------------------------------------------------------

    def size_bytes(self) -> int:
        """Disk space the store uses (objects, index, metadata), in bytes."""
        return dir_size(self.path) if self.path.exists() else 0

    def gc(self) -> GcResult:
        """Packs and prunes the store; over budget, drops the oldest snapshots first.

        Never needs twice the space: objects are repacked in bounded batches, each batch's
        loose files deleted as soon as its pack is written.

        Returns:
            Sizes before and after, and the snapshots dropped (empty unless over budget).
        """
        return self._collect(enforce_budget=True)

    def _collect(self, *, enforce_budget: bool) -> GcResult:
        started = time.perf_counter()
        with self._lock.held():
            shadow = self._shadow
            repo = shadow.repo
            size_before = self.size_bytes()
            snapshots = self._timeline.all()
            self._reconcile_refs(repo, snapshots)
            own = scan_own_objects(shadow.objects_dir)
            dropped: list[Snapshot] = []
            if enforce_budget and size_before > self.budget_bytes and snapshots:
                own_total = sum(own.loose_sizes.values()) + sum(sum(p.sizes.values()) for p in own.packs)
                fixed = max(0, size_before - own_total)
                target = max(0, int(self.budget_bytes * BUDGET_TARGET) - fixed)
                dropped = choose_drops(repo, own, snapshots, target).dropped
                self._timeline.remove(repo, dropped)
            # The index's own tree counts as a root: stat-clean entries point at blobs that no
            # snapshot may hold yet (after a diff against the working tree), and pruning them
            # would make the next capture write a tree with holes.
            kept = self._timeline.all()
            self._layouts.forget({s.id for s in kept})
            roots = [s.tree for s in kept]
            roots.append(str(shadow.index().write_tree()))
            outcome = repack(repo, shadow.objects_dir, own, roots, merge_packs=True)
            self._refresher.flush_index()  # reopening drops the index held in memory
            shadow.reopen()
            return GcResult(
                size_before=size_before,
                size_after=self.size_bytes(),
                budget_bytes=self.budget_bytes,
                dropped=[
                    DroppedSnapshot(session_id=s.session_id, seq=s.seq, id=s.id, created_at=s.created_at)
                    for s in dropped
                ],
                objects_packed=outcome.objects_packed,
                objects_pruned=outcome.objects_pruned,
                packs_rewritten=outcome.packs_rewritten,
                duration_s=time.perf_counter() - started,
            )

    def _merge_packs_if_many(self) -> None:
        """Merges packs once captures have written many: every object lookup searches each pack."""
        pack_dir = self._shadow.objects_dir / "pack"
        try:
            count = sum(1 for entry in os.scandir(pack_dir) if entry.name.endswith(".idx"))
        except OSError:
            return
        if count > AUTO_MERGE_PACKS:
            self._refresher.flush_index()  # reopening drops the index held in memory
            # Keeps every object and drops no snapshot: only gc() prunes or enforces the budget.
            merge_small_packs(self._shadow.repo, self._shadow.objects_dir)
            self._shadow.reopen()

    def _reconcile_refs(self, repo: pygit2.Repository, snapshots: list[Snapshot]) -> None:
        """Deletes refs no timeline entry owns (a crash between ref and line); re-creates lost ones."""
        refs = self._timeline.refs(repo)
        wanted = {ref_name(s.session_id, s.seq): s for s in snapshots}
        for name in refs:
            if name not in wanted:
                repo.references.delete(name)
        for name, snap in wanted.items():
            if name not in refs and tree_type_ok(repo, snap.tree):
                repo.references.create(name, pygit2.Oid(hex=snap.tree), force=True)
