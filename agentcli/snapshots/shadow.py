"""The shadow repository: agentcli's own git directory for one workspace.

Layout, under `<data_dir>/snapshots/<name>-<hash>/` (a git directory):

    HEAD config objects/ refs/   as in any bare repository
    index                        our own index: a stat cache of the workspace, never the user's
    index.z                      the same, zlib-compressed, while no process uses the store
    info/attributes              disables every content filter, so files round-trip byte for byte
    info/exclude                 the workspace's exclude lines (see sync_excludes), before each capture
    objects/info/alternates      the user's .git/objects, so their blobs are not stored twice
    refs/agentcli/<session>/<n>  one ref per snapshot, so `git gc` keeps every tree
    agentcli/                    timeline metadata, the lock file, workspace.json

The repository is created bare and then given `core.worktree`: `init_repository(path,
workdir_path=...)` would write a `.git` file into the user's tree.

Over 400 lines because everything that touches the shadow git directory's layout (the index and
its packed form, excludes, attributes, alternates, refs) is here, so no other module needs to
know it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pygit2

from agentcli.snapshots.errors import SnapshotError
from agentcli.snapshots.odb_guard import ShadowObjects, install_backend
from agentcli.snapshots.seed import seed_from_user_index

STORE_FORMAT = 1

# `-text`: no end-of-line conversion even if the user sets core.autocrlf or `text` attributes;
# `-filter`: no clean/smudge (git-lfs pointers are stored as the pointer files on disk);
# `-ident`, `-working-tree-encoding`: no other content rewriting. Without this line a CRLF
# file comes back from a restore with LF endings.
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"

_PACKED_INDEX_MAGIC = b"agentcli-index-z1\n"
"""Starts `index.z`; then the index file's mtime (8 bytes, ns) and the zlib stream."""

PACKED_INDEX_LEVEL = 1
"""zlib level of `index.z`: 44% of the index at 7 ms per 10k entries; level 6 gives 40% at 18 ms."""


@dataclass(frozen=True)
class UserRepo:
    """Where the user's git repository keeps the files the store reads (never writes)."""

    gitdir: Path
    """`.git`, or the directory a `.git` file points to (worktrees, submodules)."""
    objects: Path
    index: Path
    config: Path


def find_user_repo(workspace: Path) -> UserRepo | None:
    """Locates the git repository whose work tree is `workspace`, if any.

    Only a repository rooted at the workspace counts: for a subdirectory of a repository the
    paths of the user's index would not line up with ours.

    Args:
        workspace: The resolved workspace directory.

    Returns:
        The repository's paths, or None when the workspace is not the root of a git work tree.
    """
    dotgit = workspace / ".git"
    if dotgit.is_dir():
        gitdir = dotgit
    elif dotgit.is_file():
        match = re.match(r"gitdir:\s*(.+?)\s*$", dotgit.read_text(errors="replace"))
        if not match:
            return None
        gitdir = (workspace / match.group(1)).resolve()
    else:
        return None
    common = gitdir
    commondir_file = gitdir / "commondir"
    if commondir_file.is_file():  # a linked worktree shares objects with the main repository
        common = (gitdir / commondir_file.read_text().strip()).resolve()
    objects = common / "objects"
    if not objects.is_dir():
        return None
    return UserRepo(
        gitdir=gitdir,
        objects=objects,
        index=gitdir / "index",
        config=common / "config",
    )


def store_key(workspace: Path) -> str:
    """Derives the store directory name from the resolved workspace path.

    Args:
        workspace: The resolved workspace directory.

    Returns:
        `<basename>-<16 hex of sha256(path)>`: readable in a directory listing, unique per path.
    """
    digest = hashlib.sha256(os.fsencode(workspace)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", workspace.name)[:40] or "root"
    return f"{name}-{digest}"


class ShadowRepo:
    """Creates, opens and configures the shadow repository of one workspace.

    Args:
        path: The shadow git directory.
        workspace: The resolved workspace directory.
        extra_excludes: Workspace-relative directories never to snapshot (our own data dir,
            when it lives inside the workspace).
    """

    def __init__(self, path: Path, workspace: Path, extra_excludes: list[str]) -> None:
        self.path = path
        self.workspace = workspace
        self.meta_dir = path / "agentcli"
        self.objects_dir = path / "objects"
        self.index_path = path / "index"
        self.packed_index_path = path / "index.z"
        self._extra_excludes = extra_excludes
        self.user = find_user_repo(workspace)
        self._repo: pygit2.Repository | None = None
        self._objects: ShadowObjects | None = None
        self._user_repo: pygit2.Repository | None = None
        self.own_odb: pygit2.Odb | None = None
        self.seeded: str | None = None
        """How this process seeded the index, if it did: "thread" or "here" (seed.py), "head"."""
        self.on_index_copied: Callable[[int], object] | None = None
        """Told the entry count once a seed's copy is written, before libgit2 loads it (seed.py)."""

    # -- opening -----------------------------------------------------------------------------

    @property
    def repo(self) -> pygit2.Repository:
        """The open shadow repository (created on first use)."""
        if self._repo is None:
            self._open()
        assert self._repo is not None
        return self._repo

    @property
    def objects(self) -> ShadowObjects:
        """Our object backend: guards the user's objects, batches writes (see odb_guard.py)."""
        self.repo  # noqa: B018 - opening installs the backend
        assert self._objects is not None
        return self._objects

    def reopen(self) -> None:
        """Drops the open handle so the next use re-reads packs and config (after gc)."""
        self._repo = None
        self._objects = None

    def _open(self) -> None:
        if not (self.path / "HEAD").is_file():
            self._create()
        self._write_alternates()
        repo = pygit2.Repository(str(self.path))
        workdir = repo.workdir
        if workdir is None or Path(workdir).resolve() != self.workspace:
            raise SnapshotError(
                f"the snapshot store {self.path} belongs to {workdir!r}, not {self.workspace}; "
                "move it aside and agentcli will create a new one"
            )
        self._objects = install_backend(repo, self.user.objects if self.user else None, self.objects_dir)
        # Our objects alone (no alternates): answers "do we hold this ourselves?".
        own = pygit2.Odb()
        own.add_backend(pygit2.OdbBackendPack(str(self.objects_dir)), 1)
        own.add_backend(pygit2.OdbBackendLoose(str(self.objects_dir), 1, False), 2)
        self.own_odb = own
        self._repo = repo

    def _create(self) -> None:
        """Lays out the repository in a temporary directory and renames it into place.

        Written by hand rather than with `init_repository` + eight `config[...] = ...` calls:
        that creates hooks and samples we do not want and rewrites the config file each time
        (30-40 ms on the disks measured here, against a few ms). A crash half-way leaves a
        stray temporary directory, never a half-configured store.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", dir=self.path.parent))
        try:
            # One mkdir each, parents first: `mkdir(parents=True)` tries the child, fails, then
            # makes the parent. No refs/heads or refs/tags: nothing here uses them, and libgit2
            # and git make a ref's folders when they write it. Each of these costs a journal
            # write on the disk (0.1-0.4 ms each when other jobs share it).
            for sub in ("objects", "objects/info", "objects/pack", "refs", "info", "agentcli"):
                os.mkdir(tmp / sub)
            if self.user is not None:  # here rather than by `_write_alternates`' atomic write after
                (tmp / "objects" / "info" / "alternates").write_text(self._alternates_text())
            (tmp / "HEAD").write_text("ref: refs/heads/main\n")
            (tmp / "config").write_text(_config_text(self.workspace, self._ignore_case()))
            (tmp / "info" / "attributes").write_text(ATTRIBUTES)
            (tmp / "agentcli" / "workspace.json").write_text(
                json.dumps(
                    {
                        "workspace": os.fsdecode(self.workspace),
                        "format": STORE_FORMAT,
                        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                    },
                    indent=2,
                )
                + "\n"
            )
            try:
                tmp.rename(self.path)
            except OSError:
                if (self.path / "HEAD").is_file():  # another process won the race: use theirs
                    shutil.rmtree(tmp, ignore_errors=True)
                    return
                raise
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _ignore_case(self) -> bool:
        """core.ignorecase as the user's repository has it, else the platform's usual value.

        libgit2 would probe the filesystem of the store, which need not be the workspace's.
        """
        if self.user is not None and self.user.config.is_file():
            try:
                return bool(pygit2.Config(str(self.user.config)).get_bool("core.ignorecase"))
            except (KeyError, pygit2.GitError):
                pass
        return sys.platform in ("darwin", "win32")

    def _alternates_text(self) -> str:
        return f"{os.fsdecode(self.user.objects)}\n" if self.user is not None else ""

    def _write_alternates(self) -> None:
        """Points the store at the user's objects (or at nothing when there are none)."""
        alternates = self.objects_dir / "info" / "alternates"
        wanted = self._alternates_text()
        current = alternates.read_text() if alternates.is_file() else ""
        if current != wanted:
            alternates.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(alternates, wanted.encode())

    # -- ignore rules --------------------------------------------------------------------------

    def own_excludes(self) -> str:
        """agentcli's own exclude lines, relative to the workspace: its data directory, when inside."""
        return "".join(f"/{_escape_ignore(rel)}/\n" for rel in self._extra_excludes)

    def sync_excludes(self, inherited: str) -> None:
        """Writes the store's `info/exclude` (and copies a repo-local `core.excludesFile`).

        libgit2 reads `info/exclude` from the repository it opened — ours — so without a copy
        a locally excluded `.env` would be snapshotted. Global excludes (`core.excludesFile` in
        the user's global config) are read by libgit2 itself.

        Args:
            inherited: The workspace's own exclude lines (`IgnoreSources.workspace_excludes`:
                the user's `.git/info/exclude`, or agentcli's stand-in outside a repository);
                agentcli's own lines follow them.
        """
        self.repo  # noqa: B018 - creates the repository on first use
        parts = ["# Managed by agentcli: the workspace's info/exclude, then agentcli's own.\n"]
        if inherited:
            parts.append(inherited if inherited.endswith("\n") else inherited + "\n")
        parts.append(self.own_excludes())
        wanted = "".join(parts).encode("utf-8", "surrogateescape")
        target = self.path / "info" / "exclude"
        current = target.read_bytes() if target.is_file() else None
        if current != wanted:
            target.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(target, wanted)
        self._sync_local_excludes_file()

    def _sync_local_excludes_file(self) -> None:
        wanted: str | None = None
        if self.user is not None and self.user.config.is_file():
            try:
                user_config = pygit2.Config(str(self.user.config))
                value = user_config["core.excludesFile"]
                if value is not None:  # None: a valueless `excludesFile` flag, which names no file
                    wanted = os.path.expanduser(value)
                    if not os.path.isabs(wanted):
                        # git resolves a relative excludesFile against the work tree.
                        wanted = os.fsdecode(self.workspace / wanted)
            except (KeyError, pygit2.GitError):
                wanted = None
        # Only our own config file: the repository's merged view would include the user's
        # global core.excludesFile, which libgit2 applies anyway.
        config = pygit2.Config(str(self.path / "config"))
        try:
            current = config["core.excludesFile"]
        except KeyError:
            current = None
        if current == wanted:
            return
        if wanted is None:
            try:
                del config["core.excludesFile"]
            except (KeyError, pygit2.GitError):
                pass
        else:
            config["core.excludesFile"] = wanted

    # -- the index --------------------------------------------------------------------------

    def index(self) -> pygit2.Index:
        """Returns the store's index, seeding it from the user's repository on first use."""
        repo = self.repo
        if not self.index_path.exists():
            if self.packed_index_path.exists() and self._unpack_index():
                index: pygit2.Index = repo.index
                index.read(True)  # the file is the truth: forget what this process had in memory
                return index
            self._seed_index(repo)
            repo = self.repo  # seeding may have reopened the repository
        index = repo.index
        index.read(False)  # picks up a write by another process; no-op when unchanged
        return index

    def pack_index(self) -> bool:
        """Compresses the index into `index.z` for the time no process uses the store.

        The index is the store's largest file (a stat cache as big as the user's `.git/index`;
        libgit2 needs it uncompressed on disk while it works, and pygit2 cannot ask for index
        v4). Packed, it takes ~44% of the space; the next `index()` unpacks it (~3 ms at 10k
        entries). The caller holds the store lock.

        Returns:
            Whether there was an index to pack.
        """
        try:
            mtime_ns = os.stat(self.index_path).st_mtime_ns
            data = self.index_path.read_bytes()
        except FileNotFoundError:
            return False
        packed = _PACKED_INDEX_MAGIC + struct.pack(">q", mtime_ns) + zlib.compress(data, PACKED_INDEX_LEVEL)
        tmp = self.packed_index_path.with_name("index.z.tmp")
        tmp.write_bytes(packed)
        os.replace(tmp, self.packed_index_path)
        # A crash before this unlink leaves both files; `index` wins, and is identical anyway.
        self.index_path.unlink()
        return True

    def _unpack_index(self) -> bool:
        """Restores `index` from `index.z`, with its mtime: libgit2 judges racily-clean entries by it.

        Returns:
            False when `index.z` was unreadable; it is then deleted and the caller seeds afresh
            (the index is a cache: losing it costs hashing, never data).
        """
        packed = self.packed_index_path.read_bytes()
        head = len(_PACKED_INDEX_MAGIC)
        try:
            if not packed.startswith(_PACKED_INDEX_MAGIC):
                raise ValueError("not a packed index")
            (mtime_ns,) = struct.unpack(">q", packed[head : head + 8])
            data = zlib.decompress(packed[head + 8 :])
        except (ValueError, struct.error, zlib.error):
            self.packed_index_path.unlink()
            return False
        tmp = self.index_path.with_name("index.unpack.tmp")
        tmp.write_bytes(data)
        os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, self.index_path)
        self.packed_index_path.unlink()
        return True

    def _seed_index(self, repo: pygit2.Repository) -> None:
        """Starts our index from the user's, so the first capture hashes only what differs.

        See seed.py. Formats libgit2 cannot read (split index, sparse index) and a copy that
        fails its checksum fall back to the HEAD tree, which costs one hash per file on first use.
        """
        if self.user is None:
            return
        if self.user.index.is_file():
            try:
                self.seeded = seed_from_user_index(
                    repo,
                    self.user.index,
                    self.user.objects.parent,
                    self.index_path,
                    self._open_user_repo,
                    copied=self.on_index_copied,
                )
                return
            except (OSError, pygit2.GitError, ValueError):
                self.index_path.unlink(missing_ok=True)
                self.reopen()
                repo = self.repo
        self.seeded = "head"
        tree_id = self.user_head_tree()
        if tree_id is not None:
            index = repo.index
            index.read_tree(repo[tree_id])
            index.write()

    def reseed_from_head(self) -> None:
        """Rebuilds the index from the user's HEAD tree (used when a copied seed proves bad)."""
        self.index_path.unlink(missing_ok=True)
        self.packed_index_path.unlink(missing_ok=True)
        self.reopen()
        tree_id = self.user_head_tree()
        repo = self.repo
        if tree_id is not None:
            index = repo.index
            index.read_tree(repo[tree_id])
            index.write()

    # -- the user's repository (read only) ---------------------------------------------------

    def user_head_tree(self) -> pygit2.Oid | None:
        """Returns the tree of the user's HEAD commit, or None (no repo, unborn, unreadable)."""
        user_repo = self._open_user_repo()
        if user_repo is None:
            return None
        try:
            if user_repo.head_is_unborn:
                return None
            return user_repo.head.peel(pygit2.Tree).id
        except (pygit2.GitError, KeyError, ValueError):
            return None

    def _open_user_repo(self) -> pygit2.Repository | None:
        if self.user is None:
            return None
        if self._user_repo is None:
            try:
                self._user_repo = pygit2.Repository(str(self.user.gitdir))
            except (pygit2.GitError, KeyError, ValueError):
                return None
        return self._user_repo


def _escape_ignore(rel: str) -> str:
    return re.sub(r"([\\*?\[\]!# ])", r"\\\1", rel)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _config_text(workspace: Path, ignore_case: bool) -> str:
    """The shadow repository's config file."""
    worktree = os.fsdecode(workspace).replace("\\", "\\\\").replace('"', '\\"')
    lines = [
        "[core]",
        "\trepositoryformatversion = 0",
        # Not bare after all: it has a work tree, just not one that contains it.
        "\tbare = false",
        f'\tworktree = "{worktree}"',
        "\tautocrlf = false",
        "\tlogAllRefUpdates = false",
        f"\tignorecase = {'true' if ignore_case else 'false'}",
    ]
    if os.name == "posix":
        lines += ["\tfilemode = true", "\tsymlinks = true"]
    # The git CLI must never gc or prune the store behind our back (tests and curious users
    # run it); our own gc knows which objects the timeline needs.
    lines += ["[gc]", "\tauto = 0", "\tautoDetach = false", ""]
    return "\n".join(lines)
