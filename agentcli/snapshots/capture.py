"""Brings the shadow index up to date with the working tree and writes its tree.

The result equals `git add -A && git write-tree` on the same files (the tests check it with
the git CLI). It is *not* built on `Index.add_all()`: that fails the whole capture on any
nested git repository (a clone or `git init` the agent ran) and never refreshes the stat of
touched-but-unchanged files, so every later capture would hash them again. Instead one
`diff_to_workdir(UPDATE_INDEX | INCLUDE_UNTRACKED | RECURSE_UNTRACKED_DIRS | INCLUDE_TYPECHANGE)`
finds what changed — refreshing stat data of unchanged files as it goes — and each delta is
applied on its own.

Choices, so the next reader need not rediscover them:
- Nested repositories and submodules are recorded as gitlinks (mode 160000, the commit their
  HEAD points at), as `git add -A` does. Their contents are theirs to version; a nested
  repository without a commit has nothing to record and is reported as skipped (git errors out).
- Untracked files over `max_file_bytes` and untracked directories with more than
  `max_untracked_dir_files` files are left out and reported. Files already tracked (by the
  user's repository or by an earlier snapshot) are always captured.
- A path hint refreshes exactly those paths (`DISABLE_PATHSPEC_MATCH`): no tree walk.

Over 400 lines because each kind of delta and the corrections of libgit2's ignore verdicts
are applied where the diff is read; split apart they would pass the same state around.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, FileMode

from agentcli.ignore import IgnoreRules, IgnoreSources, discover
from agentcli.snapshots._libgit2 import diff_index_to_workdir
from agentcli.snapshots.guards import safe_relative_path
from agentcli.snapshots.hashworker import HashWorker
from agentcli.snapshots.hints import index_has_prefix, widen_hints
from agentcli.snapshots.indexwrites import IndexWrites
from agentcli.snapshots.models import SkippedPath, SkipReason
from agentcli.snapshots.rawadd import add_files
from agentcli.snapshots.restat import WORKER_MIN_ENTRIES, mostly_stale, refresh_touched
from agentcli.snapshots.shadow import ShadowRepo
from agentcli.snapshots.splitwalk import SplitWalk

REFRESH_FLAGS = (
    DiffOption.UPDATE_INDEX
    | DiffOption.INCLUDE_UNTRACKED
    | DiffOption.RECURSE_UNTRACKED_DIRS
    | DiffOption.INCLUDE_TYPECHANGE
    # Ignored entries are listed (not recursed) so the few libgit2 gets wrong can be
    # corrected; see `_suspect`.
    | DiffOption.INCLUDE_IGNORED
    | DiffOption.INCLUDE_UNREADABLE
)


@dataclass(frozen=True)
class Limits:
    """Guards on untracked content."""

    max_file_bytes: int
    max_untracked_dir_files: int


@dataclass
class Refreshed:
    """The index after a refresh."""

    tree: pygit2.Oid
    skipped: list[SkippedPath] = field(default_factory=list)
    before: pygit2.Oid | None = None
    """The index's tree before the refresh."""
    changed: list[str] = field(default_factory=list)
    """Paths whose entries the refresh added, replaced or removed: the only places `before` and
    `tree` can differ."""


class IndexRefresher:
    """Refreshes one shadow repository's index from its working tree.

    Args:
        shadow: The shadow repository.
        limits: Size and file-count guards for untracked content.
        hashing_process: Start a second process for bulk refreshes (hashworker.py) after the
            first walk of a big enough tree: for a session's store, which lives long enough to
            use it; a one-shot command never pays its start.
    """

    def __init__(self, shadow: ShadowRepo, limits: Limits, *, hashing_process: bool = False) -> None:
        self._shadow = shadow
        self._limits = limits
        self._rules: IgnoreRules | None = None
        self._saved = IndexWrites(shadow)
        self._rules_key: tuple[str, tuple[int, int] | None, bool] | None = None
        self._split = SplitWalk(shadow.path, shadow.workspace)
        shadow.on_index_copied = self._split.prefetch  # a first capture: the handles load beside the seed
        self._split_repo: pygit2.Repository | None = None
        self._hashing_process = hashing_process
        self.hash_worker = HashWorker()

    def refresh(
        self,
        paths_hint: list[str] | None = None,
        *,
        walk_if_rules_changed: bool = False,
        before_walk: Callable[[], object] | None = None,
    ) -> Refreshed:
        """Updates the index from the working tree and writes the tree.

        Args:
            paths_hint: When given, only these workspace-relative paths (files or
                directories) are looked at; everything else is assumed unchanged.
            walk_if_rules_changed: Ignore the hint and walk the tree when the exclude files
                outside the tree (`info/exclude`, the global excludes) changed since the last
                refresh: what they ignore may have changed anywhere.
            before_walk: Called once the index is loaded and any bulk refresh done, just before
                the working tree is diffed (the store waits there for its watcher's arming).

        Returns:
            The tree id and the paths left out.
        """
        shadow = self._shadow
        # Another process wrote the index: the paths this one changed only in memory must be
        # looked at again, or a hinted refresh would take the other index's older entries.
        lost = self._saved.lost_paths()
        sources = discover(shadow.workspace)
        inherited = sources.workspace_excludes()
        shadow.sync_excludes(inherited)
        rules_key = (inherited, stat_key(sources.excludes_file), sources.ignore_case)
        rules_changed = rules_key != self._rules_key
        self._rules_key = rules_key
        # A fresh engine per capture: it sees ignore files as they are now (compiled files are
        # cached process-wide while unchanged).
        self._rules = sources.rules(shadow.own_excludes())
        index = shadow.index()  # first: seeding may reopen the repository
        if lost:
            self._saved.forget_pending()  # the index just loaded is the other process's
        repo = shadow.repo
        flags = REFRESH_FLAGS
        paths: list[str] | None = None
        if paths_hint is not None and not (walk_if_rules_changed and rules_changed):
            hinted = {p for p in map(self._hint_path, paths_hint) if p is not None} | lost
            paths = sorted(widen_hints(shadow.workspace, index, hinted))
            flags |= DiffOption.DISABLE_PATHSPEC_MATCH
        skipped: list[SkippedPath] = []
        changed: list[str] = []
        if (
            paths is None
            and mostly_stale(index, shadow.workspace)
            and refresh_touched(index, shadow.workspace, self.hash_worker)
        ):
            # Written now: its timestamp must be newer than the refreshed mtimes (see restat.py).
            self._saved.write(force=True)
        if before_walk is not None:
            before_walk()
        try:
            # New blobs and trees stay in memory until the end, then go to disk as one pack.
            with shadow.objects.batch():
                before = index.write_tree()  # from the index's tree cache: no object is written
                if paths is None:
                    paths = self._split_walk(index, before)
                    if paths is not None:
                        flags |= DiffOption.DISABLE_PATHSPEC_MATCH
                if paths != []:
                    diff = diff_index_to_workdir(repo, index, flags, paths)
                    skipped, changed = self._apply_diff(repo, index, diff)
                tree = index.write_tree()
                tree_exists = repo.odb.exists(tree)
        except BaseException:
            # The in-memory index may name objects that never reached the disk: forget it.
            index.read(True)
            self._saved.forget_pending()
            raise
        if not tree_exists:
            # Only a seed copied from the user's index can get here: its cached tree names an
            # object git never wrote. Start over from HEAD and hash what differs.
            shadow.reseed_from_head()
            return self.refresh(None)
        self._saved.changed(changed)
        if paths_hint is None:
            self._split.prefetch(len(index))  # if the index file was written: the next walk's handles
        if self._hashing_process and paths_hint is None and len(index) >= WORKER_MIN_ENTRIES:
            self.hash_worker.start()  # in the background, after the walk: it never slows this one
        return Refreshed(tree=tree, skipped=skipped, before=before, changed=changed)

    def _split_walk(self, index: pygit2.Index, tree_id: pygit2.Oid) -> list[str] | None:
        """The paths a walk would change, found on several threads; None to walk on this one."""
        repo = self._shadow.repo
        if self._split_repo is not repo:
            if self._split_repo is not None:  # reopened (after gc): fresh handles too
                self._split.reset()
            self._split_repo = repo

        def tree() -> pygit2.Tree | None:
            try:
                return repo[tree_id].peel(pygit2.Tree)
            except (KeyError, ValueError, pygit2.GitError):
                return None  # a seed's cached tree that git never wrote: the single walk and reseed handle it

        found = self._split.find(
            repo, index, tree, REFRESH_FLAGS, self._saved.pending, lambda d: self.rules.is_ignored(d, True)
        )
        if found is None:
            return None
        return sorted(widen_hints(self._shadow.workspace, index, set(found.paths)))

    def index_written_elsewhere(self) -> bool:
        """Tells whether another process wrote the index since this one last left it."""
        return self._saved.written_elsewhere()

    def outside_rules_changed(self, sources: IgnoreSources | None = None) -> bool:
        """Tells whether the exclude files outside the tree changed since the last refresh
        (what a watched refresh checks before trusting its hints; the watcher cannot see them)."""
        sources = sources or discover(self._shadow.workspace)
        return (sources.workspace_excludes(), stat_key(sources.excludes_file), sources.ignore_case) != self._rules_key

    def index_changed(self, paths: list[str]) -> None:
        """Records entries changed outside `refresh` (a restore that set them from what it wrote),
        for the index's write policy and the journal other processes read."""
        self._saved.changed(paths)

    def forget_index_changes(self) -> None:
        """Drops the index held in memory for the one on disk (after a failed update)."""
        self._shadow.index().read(True)
        self._saved.forget_pending()

    def close(self) -> None:
        """Ends the hashing process (the store's session is over; a later refresh starts it again)
        and lets go of the split walk's handles, once any still loading the index is done."""
        self.hash_worker.close()
        self.hash_worker = HashWorker()
        self._split.reset()

    def flush_index(self) -> None:
        """Writes the index held in memory (before it is packed, or the repository reopened)."""
        self._saved.write()

    def _hint_path(self, path: str) -> str | None:
        if os.path.isabs(path):
            try:
                path = os.path.relpath(path, self._shadow.workspace)
            except ValueError:  # another drive on Windows
                return None
        return safe_relative_path(path)

    def _apply_diff(
        self, repo: pygit2.Repository, index: pygit2.Index, diff: pygit2.Diff
    ) -> tuple[list[SkippedPath], list[str]]:
        """Applies each delta to the index; returns the skipped paths and the paths changed."""
        skipped: list[SkippedPath] = []
        removed: list[str] = []
        to_add: list[str] = []
        untracked: list[tuple[str, int]] = []
        ignored: list[str] = []
        nested: list[str] = []
        for delta in diff.deltas:
            status = delta.status
            if status == DeltaStatus.DELETED:
                removed.append(os.fsdecode(delta.old_file.raw_path))
                index.remove(removed[-1])
                continue
            path = os.fsdecode(delta.new_file.raw_path)
            if status in (DeltaStatus.MODIFIED, DeltaStatus.TYPECHANGE):
                to_add.append(path)
            elif status == DeltaStatus.UNTRACKED:
                if path.endswith("/"):  # libgit2 does not descend into nested repositories
                    nested.append(path.rstrip("/"))
                elif not self._git_ignores(path, delta.new_file.mode):
                    untracked.append((path, delta.new_file.size))
            elif status == DeltaStatus.IGNORED:
                ignored.append(path)
            elif status == DeltaStatus.UNREADABLE:
                skipped.append(SkippedPath(path=path, reason=SkipReason.UNREADABLE))

        untracked.extend(self._wrongly_ignored(repo, index, ignored))
        untracked.sort()
        nested = [n for n in nested if not (self._suspect_dir(n) and self.rules.is_ignored(n, True))]

        accepted, dir_skips = self._guard_untracked_dirs(index, untracked)
        skipped.extend(dir_skips)
        for path, size in accepted:
            if size > self._limits.max_file_bytes and self._is_regular(path):
                skipped.append(SkippedPath(path=path, reason=SkipReason.TOO_LARGE, size=size))
            else:
                to_add.append(path)

        for path in nested:
            try:
                index.add(path)  # libgit2 records the nested repository's HEAD as a gitlink
            except (OSError, pygit2.GitError):
                skipped.append(SkippedPath(path=path, reason=SkipReason.NESTED_REPO_WITHOUT_COMMITS))

        workspace = self._shadow.workspace
        # Regular files are read and entered here; libgit2 adds what remains (see rawadd.py).
        for path in add_files(repo, index, workspace, to_add):
            try:
                index.add(path)
            except PermissionError:
                skipped.append(SkippedPath(path=path, reason=SkipReason.UNREADABLE))
                _remove_quietly(index, path)
            except (OSError, pygit2.GitError):
                # Gone between the diff and now (a command still running): record it as absent;
                # the next capture sees whatever is there then.
                if not os.path.lexists(workspace / path):
                    _remove_quietly(index, path)
                else:
                    raise
        return skipped, [*removed, *to_add, *nested]

    @property
    def rules(self) -> IgnoreRules:
        """The shared ignore engine (`agentcli.ignore`) as of the current capture."""
        if self._rules is None:
            raise RuntimeError("IndexRefresher.rules is set by refresh(); nothing asked before it")
        return self._rules

    def _suspect(self, path: str, mode: int) -> bool:
        """Tells whether libgit2's ignore verdict on `path` may differ from git's.

        libgit2 is the fast first judge; the shared engine corrects it where it is known to
        be wrong: symlinks to directories (libgit2 follows them, so `build/` ignores a link
        `build -> out/`; git uses lstat), negations (libgit2 drops a `!pattern` that negates
        another file's pattern, libgit2 issue #7284, and lets `!d/sub/*` re-include files below
        an ignored `d/`, #7283), and a workspace below its repository's root (the shadow
        repository, rooted at the workspace, never reads the `.gitignore` files above it).
        """
        if mode == FileMode.LINK and os.path.isdir(self._shadow.workspace / path):
            return True
        return self._suspect_dir(path)

    def _suspect_dir(self, path: str) -> bool:
        return not self.rules.workspace_is_root or self.rules.negations_apply(path)

    def _git_ignores(self, path: str, mode: int) -> bool:
        """For a path libgit2 reports untracked: does git ignore it after all?"""
        return self._suspect(path, mode) and self.rules.is_ignored(path, is_dir=False)

    def _wrongly_ignored(
        self, repo: pygit2.Repository, index: pygit2.Index, ignored: list[str]
    ) -> list[tuple[str, int]]:
        """Paths libgit2 reports ignored that `git add -A` would record."""
        rules = self.rules
        workspace = self._shadow.workspace
        out: list[tuple[str, int]] = []
        for path in ignored:
            if path.endswith("/"):
                directory = path.rstrip("/")
                if not self._suspect_dir(directory) or rules.is_ignored(directory, True):
                    continue
                # git re-includes this directory: look at every file libgit2 skipped inside it.
                inner = diff_index_to_workdir(
                    repo,
                    index,
                    REFRESH_FLAGS | DiffOption.RECURSE_IGNORED_DIRS | DiffOption.DISABLE_PATHSPEC_MATCH,
                    [directory],
                )
                for delta in inner.deltas:
                    if delta.status in (DeltaStatus.IGNORED, DeltaStatus.UNTRACKED):
                        inner_path = os.fsdecode(delta.new_file.raw_path)
                        if not inner_path.endswith("/") and not rules.is_ignored(inner_path, is_dir=False):
                            out.append((inner_path, delta.new_file.size))
                continue
            try:
                st = os.lstat(workspace / path)
            except OSError:
                continue
            mode = FileMode.LINK if stat.S_ISLNK(st.st_mode) else FileMode.BLOB
            if self._suspect(path, mode) and not rules.is_ignored(path, is_dir=False):
                out.append((path, st.st_size))
        return out

    def _is_regular(self, path: str) -> bool:
        try:
            return stat.S_ISREG(os.lstat(self._shadow.workspace / path).st_mode)
        except OSError:
            return False

    def _guard_untracked_dirs(
        self, index: pygit2.Index, untracked: list[tuple[str, int]]
    ) -> tuple[list[tuple[str, int]], list[SkippedPath]]:
        """Drops untracked directories that hold more files than the limit.

        An "untracked directory" is the outermost directory on a path that holds no tracked
        entry: what `npm install` or an unpacked archive creates in one go.
        """
        limit = self._limits.max_untracked_dir_files
        if len(untracked) <= limit:  # no directory can be over the limit: skip the lookups
            return untracked, []
        tracked_cache: dict[str, bool] = {}

        def top_untracked_dir(path: str) -> str | None:
            parts = path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                prefix = "/".join(parts[:i])
                known = tracked_cache.get(prefix)
                if known is None:
                    known = tracked_cache[prefix] = index_has_prefix(index, prefix + "/")
                if not known:
                    return prefix
            return None

        groups: dict[str | None, list[tuple[str, int]]] = {}
        for item in untracked:
            groups.setdefault(top_untracked_dir(item[0]), []).append(item)
        accepted: list[tuple[str, int]] = []
        skipped: list[SkippedPath] = []
        for top, items in groups.items():
            if top is not None and len(items) > limit:
                skipped.append(SkippedPath(path=top, reason=SkipReason.TOO_MANY_FILES, files=len(items)))
            else:
                accepted.extend(items)
        accepted.sort()
        return accepted, skipped


def stat_key(path: Path | None) -> tuple[int, int] | None:
    """What tells a file changed without reading it (mtime and size), or None when it is not there."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _remove_quietly(index: pygit2.Index, path: str) -> None:
    try:
        index.remove(path)
    except (OSError, pygit2.GitError):
        pass
