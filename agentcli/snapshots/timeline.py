"""The timeline: snapshot metadata on disk, and the refs that keep snapshot trees alive.

Each session has `agentcli/timeline/<session>.jsonl` in the shadow repository, one `Snapshot`
per line, appended and flushed per capture. A torn last line (a crash mid-write) is skipped on
load. Each snapshot also gets `refs/agentcli/<session>/<seq>` pointing at its tree, written
*before* its line: a crash in between leaves a harmless ref gc removes, never a timeline entry
whose tree `git gc` could delete.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pydantic import ValidationError

from agentcli.snapshots.errors import AmbiguousSnapshotRef, SnapshotNotFound
from agentcli.snapshots.models import Snapshot

REF_PREFIX = "refs/agentcli/"
_HEX = re.compile(r"^[0-9a-f]{4,40}$")


def snapshot_id(session_id: str, seq: int, tree: str) -> str:
    """Derives a snapshot's short id; stable across processes because it hashes only its identity."""
    return hashlib.sha1(f"{session_id}\0{seq}\0{tree}".encode()).hexdigest()[:10]


def ref_name(session_id: str, seq: int) -> str:
    """Returns the ref that keeps a snapshot's tree reachable."""
    return f"{REF_PREFIX}{session_id}/{seq}"


@dataclass
class _Cached:
    signature: tuple[int, int]
    offset: int
    snapshots: list[Snapshot]


class Timeline:
    """Reads and appends the per-session metadata files of one shadow repository.

    Args:
        directory: `agentcli/timeline` inside the shadow repository.
    """

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._cache: dict[str, _Cached] = {}
        # Readers (timeline views) do not take the store lock; this guards the cache alone.
        self._cache_lock = threading.Lock()

    def _file(self, session_id: str) -> Path:
        return self._dir / f"{session_id}.jsonl"

    def sessions(self) -> list[str]:
        """Ids of every session with a timeline in this workspace."""
        if not self._dir.is_dir():
            return []
        return sorted(p.name[: -len(".jsonl")] for p in self._dir.glob("*.jsonl"))

    def session(self, session_id: str) -> list[Snapshot]:
        """A session's snapshots in sequence order.

        Re-reads only what was appended since the last call (another process may share the
        store), and the whole file when it was rewritten by gc.
        """
        with self._cache_lock:
            return list(self._session_locked(session_id))

    def _session_locked(self, session_id: str) -> list[Snapshot]:
        """The cached list itself (callers copy it, or read it under the lock)."""
        path = self._file(session_id)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._cache.pop(session_id, None)
            return []
        cached = self._cache.get(session_id)
        signature = (st.st_ino, st.st_size)
        if cached is not None and cached.signature == signature:
            return cached.snapshots
        if cached is None or cached.signature[0] != st.st_ino or st.st_size < cached.offset:
            # First read, or the file was replaced (gc rewrites it): parse from the start.
            cached = _Cached(signature=(0, 0), offset=0, snapshots=[])
        with open(path, "rb") as fh:
            fh.seek(cached.offset)
            data = fh.read()
        # Only complete lines are consumed, so a line being appended right now is read next time.
        end = data.rfind(b"\n") + 1
        known = len(cached.snapshots)
        for line in data[:end].splitlines():
            if not line.strip():
                continue
            try:
                cached.snapshots.append(Snapshot.model_validate_json(line))
            except (ValidationError, ValueError):
                continue  # a torn line from a crash: the snapshot's ref still exists, gc drops it
        cached.offset += end
        cached.signature = signature
        snaps = cached.snapshots
        # Lines are appended in sequence order; sorted only when the new ones break it (a
        # sort of the whole session per appended line cost O(n) a restore in long sessions).
        start = max(known - 1, 0)
        if any(snaps[i].seq > snaps[i + 1].seq for i in range(start, len(snaps) - 1)):
            snaps.sort(key=lambda s: s.seq)
        self._cache[session_id] = cached
        return snaps

    def all(self) -> list[Snapshot]:
        """Every session's snapshots, oldest first."""
        out = [s for sid in self.sessions() for s in self.session(sid)]
        out.sort(key=lambda s: (s.created_at, s.session_id, s.seq))
        return out

    def last(self, session_id: str) -> Snapshot | None:
        """The session's latest snapshot (without copying the session's list)."""
        with self._cache_lock:
            snaps = self._session_locked(session_id)
            return snaps[-1] if snaps else None

    def append(self, repo: pygit2.Repository, snapshot: Snapshot) -> None:
        """Records a snapshot: its ref first, then its metadata line."""
        repo.references.create(ref_name(snapshot.session_id, snapshot.seq), pygit2.Oid(hex=snapshot.tree), force=True)
        path = self._file(snapshot.session_id)
        line = snapshot.model_dump_json().encode() + b"\n"
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except FileNotFoundError:
            self._dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        # One descriptor, read and appended through (O_APPEND writes at the end whatever the
        # offset): a restore appends a line, and a second open per line cost more than the write.
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
            if end > 0 and os.pread(fd, 1, end - 1) != b"\n":
                line = b"\n" + line  # finish a torn line so ours stays parseable
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def remove(self, repo: pygit2.Repository, dropped: list[Snapshot]) -> None:
        """Deletes snapshots: their refs, then their lines (each session file rewritten atomically)."""
        by_session: dict[str, set[int]] = {}
        for snap in dropped:
            by_session.setdefault(snap.session_id, set()).add(snap.seq)
            try:
                repo.references.delete(ref_name(snap.session_id, snap.seq))
            except (KeyError, pygit2.GitError):
                pass
        for session_id, seqs in by_session.items():
            keep = [s for s in self.session(session_id) if s.seq not in seqs]
            path = self._file(session_id)
            if not keep:
                path.unlink(missing_ok=True)
            else:
                tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
                tmp.write_bytes(b"".join(s.model_dump_json().encode() + b"\n" for s in keep))
                os.replace(tmp, path)
            with self._cache_lock:
                self._cache.pop(session_id, None)

    def refs(self, repo: pygit2.Repository) -> dict[str, str]:
        """Every snapshot ref, mapped to its target tree id."""
        out: dict[str, str] = {}
        for name in repo.references:
            if name.startswith(REF_PREFIX):
                out[name] = str(repo.references[name].target)
        return out

    def resolve(self, ref: str, session_id: str | None = None) -> Snapshot:
        """Finds one snapshot by sequence number, id prefix, `session:seq` or tree hash.

        Args:
            ref: `3`, `S:3`, a prefix of at least 4 hex digits of a snapshot id, or a tree id
                prefix of at least 7 hex digits.
            session_id: Restricts the search to one session; required for a bare sequence
                number when the workspace has several sessions that have it.

        Returns:
            The snapshot.

        Raises:
            SnapshotNotFound: Nothing matched.
            AmbiguousSnapshotRef: Several snapshots matched.
        """
        text = ref.strip()
        if ":" in text:
            session_id, text = text.split(":", 1)
        pool = self.session(session_id) if session_id is not None else self.all()
        where = f"session {session_id}" if session_id is not None else "this workspace"
        if text.isdigit():
            by_seq = [s for s in pool if s.seq == int(text)]
            if len(by_seq) == 1:
                return by_seq[0]
            if len(by_seq) > 1:
                sessions = ", ".join(sorted({s.session_id for s in by_seq}))
                raise AmbiguousSnapshotRef(
                    f"snapshot {text} exists in several sessions ({sessions}); "
                    f"pass the session (--session ID) or use its id"
                )
        lowered = text.lower()
        if _HEX.match(lowered):
            by_id = [s for s in pool if s.id.startswith(lowered)]
            if len(by_id) == 1:
                return by_id[0]
            if len(by_id) > 1:
                ids = ", ".join(s.id for s in by_id[:5])
                raise AmbiguousSnapshotRef(
                    f"snapshot id prefix {text!r} matches {len(by_id)} snapshots ({ids}); type more of it"
                )
            if len(lowered) >= 7:
                by_tree = [s for s in pool if s.tree.startswith(lowered)]
                if len({s.tree for s in by_tree}) == 1:
                    return by_tree[-1]  # the same tree seen several times: the latest entry
                if by_tree:
                    raise AmbiguousSnapshotRef(f"tree prefix {text!r} matches several trees; type more of it")
        raise SnapshotNotFound(
            f"no snapshot {ref!r} in {where}; `agentcli snapshots` lists them "
            "(use a sequence number, an id, or SESSION:SEQ)"
        )
