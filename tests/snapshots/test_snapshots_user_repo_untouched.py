"""The user's `.git` is never written: every byte and timestamp survives a full store cycle."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from agentcli.snapshots import SnapshotStore
from snaphelpers import commit_all, git, write
from tests.support.waiting import eventually_sync


def _fingerprint(gitdir: Path) -> dict[str, tuple[str, int, int, int]]:
    """Path -> (sha256, size, mtime_ns, ctime_ns) of every file and directory under gitdir."""
    out: dict[str, tuple[str, int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(gitdir):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            digest = "dir" if os.path.isdir(full) else hashlib.sha256(Path(full).read_bytes()).hexdigest()
            out[os.path.relpath(full, gitdir)] = (digest, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return out


def _wait_for_the_clock_to_pass(gitdir: Path, probe: Path) -> None:
    """Wait until a file written now is stamped later than everything under gitdir.

    File timestamps move in coarse ticks: a file the store rewrote within the tick of the
    fingerprint would keep its mtime and ctime, and with the same bytes the rewrite would go
    unseen. Waiting for a fresh write to be stamped later rules that out (instead of sleeping
    for a tick of a guessed length).
    """
    stamps = _fingerprint(gitdir).values()
    newest = max(max(mtime, ctime) for _, _, mtime, ctime in stamps)

    def stamped_later() -> bool:
        probe.write_bytes(b"tick")
        return probe.stat().st_mtime_ns > newest

    eventually_sync(stamped_later, what="the file clock to move past the repository's timestamps")


def test_capture_diff_restore_gc_cycle_never_writes_the_users_git(
    repo: Path, data_dir: Path, tmp_path: Path
) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    write(upstream / "lib.py", "L = 1\n")
    commit_all(upstream)
    git(repo, "submodule", "add", "-q", str(upstream), "vendor/lib")  # .git/modules/...
    commit_all(repo, "submodule")
    git(repo, "gc", "-q")  # packed objects, packed-refs
    write(repo / "src" / "later.py", "LATER = 1\n")
    commit_all(repo, "loose objects after the pack")
    write(repo / "src" / "staged.py", "STAGED = 1\n")
    git(repo, "add", "src/staged.py")  # an index that differs from HEAD
    write(repo / "src" / "app.py", "uncommitted\n")
    write(repo / ".git" / "info" / "exclude", "*.secret\n")
    _wait_for_the_clock_to_pass(repo / ".git", tmp_path / "clock-probe")
    before = _fingerprint(repo / ".git")

    store = SnapshotStore(repo, data_dir)
    first = store.capture(session_id="s", reason="session start").snapshot
    write(repo / "src" / "app.py", "def main():\n    return 1\n")  # back to HEAD's blob
    write(repo / "copy.py", (repo / "src" / "util.py").read_text())  # a blob the user already has
    write(repo / "new.txt", "brand new\n")
    store.capture(session_id="s", reason="edits", paths_hint=["src/app.py", "copy.py", "new.txt"])
    (repo / "src" / "util.py").unlink()
    store.capture(session_id="s", reason="bash")
    store.diff(first)  # type: ignore[arg-type]
    store.diff("1", "2")
    store.plan_restore(first)  # type: ignore[arg-type]
    result = store.restore(first, session_id="s")  # type: ignore[arg-type]
    assert result.matches_target
    store.restore(result.undo, session_id="s")
    store.gc()
    store.restore("1", session_id="s")
    store.capture(session_id="s", reason="after gc")

    after = _fingerprint(repo / ".git")
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert changed == []
    # Nothing was written into the workspace root either: no .git file, no stray store files.
    assert (repo / ".git").is_dir()
    assert not any(p.name.startswith(".agentcli") for p in repo.rglob("*"))
