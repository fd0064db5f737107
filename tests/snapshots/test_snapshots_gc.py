"""Store size, gc and the size budget: nothing a snapshot needs is ever lost."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from agentcli.snapshots import SnapshotNotFound, SnapshotStore
from snaphelpers import git, git_add_all_tree, shadow_git, write


def _loose_objects(store: SnapshotStore) -> list[Path]:
    return [p for p in (store.path / "objects").glob("??/*") if p.is_file()]


def _packs(store: SnapshotStore) -> list[Path]:
    return list((store.path / "objects" / "pack").glob("*.pack"))


def _fsck(store: SnapshotStore) -> None:
    # Checks that every object reachable from the snapshot refs is present and sound.
    shadow_git(store, "fsck", "--no-dangling", "--connectivity-only")


def test_first_capture_of_a_committed_repository_stores_almost_nothing(repo: Path, data_dir: Path) -> None:
    for i in range(200):
        write(repo / "pkg" / f"mod{i}.py", f"VALUE = {i}\n" * 20)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "many files")
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    assert result.tree == git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert _loose_objects(store) == []  # every blob and tree is borrowed from the user's repo
    assert store.size_bytes() < 200 * 1024


def test_uncommitted_staged_blobs_are_copied_into_the_store(store: SnapshotStore, repo: Path) -> None:
    write(repo / "staged.py", "only staged, never committed\n")
    git(repo, "add", "staged.py")
    blob = git(repo, "rev-parse", ":staged.py").strip()

    store.capture(session_id="s", reason="start")

    # A `git reset && git gc --prune=now` by the user could delete it from their repository;
    # our copy keeps the snapshot restorable.
    assert (store.path / "objects" / blob[:2] / blob[2:]).is_file()
    head_blob = git(repo, "rev-parse", "HEAD:README.md").strip()
    assert not (store.path / "objects" / head_blob[:2] / head_blob[2:]).exists()


def test_gc_packs_loose_objects_and_keeps_every_snapshot_restorable(store: SnapshotStore, repo: Path) -> None:
    snaps = []
    for i in range(5):
        write(repo / "notes" / f"n{i}.txt", f"note {i}\n" * (i + 1))
        write(repo / "src" / "app.py", f"def main():\n    return {i}\n")
        snaps.append(store.capture(session_id="s", reason=f"step {i}").snapshot)
    assert len(_packs(store)) + len(_loose_objects(store)) >= 5  # one pack or loose set per capture

    result = store.gc()

    assert _loose_objects(store) == [] and len(_packs(store)) == 1
    assert result.objects_packed > 0 and result.dropped == []
    assert result.size_after <= result.size_before
    _fsck(store)
    for snap in snaps:
        store.restore(snap, session_id="s")  # type: ignore[arg-type]
        assert store.capture(session_id="s", reason="check").tree == snap.tree  # type: ignore[union-attr]


def test_git_gc_run_on_the_store_loses_nothing(store: SnapshotStore, repo: Path, tmp_path: Path) -> None:
    snaps = []
    for i in range(3):
        write(repo / f"file{i}.txt", f"{i}\n")
        snaps.append(store.capture(session_id="s", reason=str(i)).snapshot)

    shadow_git(store, "gc", "-q", "--prune=now")

    _fsck(store)
    store.restore(snaps[0], session_id="s")  # type: ignore[arg-type]
    assert git_add_all_tree(repo, tmp_path / "x") == snaps[0].tree  # type: ignore[union-attr]


def test_gc_keeps_blobs_the_index_still_points_at(store: SnapshotStore, repo: Path) -> None:
    store.capture(session_id="s", reason="start")
    write(repo / "draft.txt", "seen only by a working-tree diff\n")
    store.diff("1")  # refreshes the index: the blob is written, no snapshot holds it
    store.gc()

    snap = store.capture(session_id="s", reason="after gc").snapshot  # stat-clean: blob not re-hashed
    assert snap is not None
    _fsck(store)
    (repo / "draft.txt").unlink()
    store.capture(session_id="s", reason="deleted")
    store.restore(snap, session_id="s")
    assert (repo / "draft.txt").read_text() == "seen only by a working-tree diff\n"


def test_budget_drops_the_oldest_snapshots_only_when_over_budget(repo: Path, data_dir: Path) -> None:
    budget = 700 * 1024
    store = SnapshotStore(repo, data_dir, budget_bytes=budget)
    snaps = []
    for i in range(6):
        write(repo / "blob.bin", os.urandom(200 * 1024))  # incompressible: each snapshot costs ~200 KiB
        snaps.append(store.capture(session_id="s", reason=f"{i}").snapshot)
    assert store.size_bytes() > budget

    result = store.gc()

    assert result.size_after <= budget
    dropped = [(d.session_id, d.seq) for d in result.dropped]
    assert dropped and dropped == [("s", s.seq) for s in snaps[: len(dropped)]]  # oldest first
    assert [s.seq for s in store.timeline("s")] == [s.seq for s in snaps[len(dropped) :]]  # type: ignore[union-attr]
    with pytest.raises(SnapshotNotFound):
        store.resolve("1", session_id="s")
    _fsck(store)
    newest = snaps[-1]
    store.restore(snaps[len(dropped)], session_id="s")  # type: ignore[arg-type]
    store.restore(newest, session_id="s")  # type: ignore[arg-type]
    assert store.capture(session_id="s", reason="check").tree == newest.tree  # type: ignore[union-attr]

    # Under budget, gc drops nothing.
    again = store.gc()
    assert again.dropped == []


def test_size_bytes_grows_with_new_content(store: SnapshotStore, repo: Path) -> None:
    assert store.size_bytes() == 0  # nothing created before first use
    store.capture(session_id="s", reason="start")
    empty = store.size_bytes()
    write(repo / "big.bin", os.urandom(300 * 1024))
    store.capture(session_id="s", reason="big")
    assert store.size_bytes() - empty >= 300 * 1024


def test_a_capture_with_many_new_objects_writes_one_valid_pack(tmp_path: Path, data_dir: Path) -> None:
    ws = tmp_path / "plain"
    for i in range(300):
        write(ws / f"d{i % 7}" / f"f{i}.txt", f"file {i}\n" * (i % 5 + 1))
    store = SnapshotStore(ws, data_dir)

    result = store.capture(session_id="s", reason="start")

    packs = _packs(store)
    assert len(packs) == 1 and _loose_objects(store) == []
    shadow_git(store, "verify-pack", str(packs[0].with_suffix(".idx")))
    _fsck(store)
    assert result.tree == git_add_all_tree(ws, tmp_path / "x")
    for p in ws.glob("d0/*"):
        p.unlink()
    store.capture(session_id="s", reason="deleted")
    store.restore(result.snapshot, session_id="s")  # type: ignore[arg-type]
    assert (ws / "d0" / "f7.txt").read_text() == "file 7\n" * 3


def test_many_capture_packs_are_merged_automatically(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentcli.snapshots.store as store_module

    monkeypatch.setattr(store_module, "AUTO_MERGE_PACKS", 3)
    ws = tmp_path / "plain"
    write(ws / "seed.txt", "seed\n")
    store = SnapshotStore(ws, data_dir)
    snaps = []
    for round_ in range(6):
        for i in range(20):
            write(ws / f"r{round_}" / f"f{i}.txt", f"{round_}-{i}\n")
        snaps.append(store.capture(session_id="s", reason=str(round_)).snapshot)
        assert len(list((store.path / "objects" / "pack").glob("*.idx"))) <= 3
    assert [s.seq for s in store.timeline("s")] == [1, 2, 3, 4, 5, 6]  # nothing dropped
    _fsck(store)
    store.restore(snaps[0], session_id="s")  # type: ignore[arg-type]
    assert not (ws / "r1").exists() and (ws / "r0" / "f3.txt").read_text() == "0-3\n"


def test_staged_work_in_a_repository_without_commits_is_copied_as_one_pack(tmp_path: Path, data_dir: Path) -> None:
    from agentcli.snapshots.gc import scan_own_objects

    ws = tmp_path / "fresh"
    ws.mkdir()
    git(ws, "init", "-q")
    for i in range(40):
        write(ws / f"f{i}.txt", f"staged only {i}\n")
    git(ws, "add", "-A")
    staged = set(git(ws, "ls-files", "-s").split()[1::4])
    store = SnapshotStore(ws, data_dir)

    store.capture(session_id="s", reason="start")

    own = scan_own_objects(store.path / "objects")
    assert staged <= {oid for pack in own.packs for oid in pack.sizes}
    assert not staged & set(own.loose)  # one pack, not 40 loose files


def _own_objects(store: SnapshotStore) -> pygit2.Odb:
    """The store's own objects, without the user's (no alternates)."""
    odb = pygit2.Odb()
    odb.add_backend(pygit2.OdbBackendPack(str(store.path / "objects")), 1)
    odb.add_backend(pygit2.OdbBackendLoose(str(store.path / "objects"), 1, False), 2)
    return odb


@pytest.mark.parametrize("watch", [True, False], ids=["vouched", "captured"])
def test_a_restore_copies_the_blobs_it_wrote_unless_head_holds_them_at_the_same_path(
    repo: Path, data_dir: Path, watch: bool
) -> None:
    # The result of a restore keeps the blobs it wrote as any capture does: borrowed only
    # where the user's HEAD has that blob at that path, copied in otherwise (a blob of an
    # older commit, or HEAD's blob under another name, is pruned by a history rewrite + gc).
    write(repo / "old.txt", "version one\n")
    write(repo / "moved.txt", "kept under another name\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "v1")
    store = SnapshotStore(repo, data_dir, watch=watch)
    start = store.capture(session_id="s", reason="start", record_layout=True).snapshot
    assert start is not None
    old_blob = git(repo, "rev-parse", "HEAD:old.txt").strip()
    moved_blob = git(repo, "rev-parse", "HEAD:moved.txt").strip()
    readme_blob = git(repo, "rev-parse", "HEAD:README.md").strip()
    write(repo / "old.txt", "version two\n")
    git(repo, "mv", "moved.txt", "renamed.txt")
    git(repo, "rm", "-q", "README.md")
    git(repo, "commit", "-q", "-am", "v2")  # old.txt's and README.md's blobs are history now
    write(repo / "README.md", "# written by the agent\n")
    store.capture(session_id="s", reason="agent")

    result = store.restore(start, session_id="s")

    assert result.matches_target
    own = _own_objects(store)
    assert pygit2.Oid(hex=old_blob) in own  # of an older commit only
    assert pygit2.Oid(hex=moved_blob) in own  # HEAD holds it, under another path
    assert pygit2.Oid(hex=readme_blob) in own  # HEAD no longer has README.md at all
    unchanged = git(repo, "rev-parse", "HEAD:src/app.py").strip()
    assert pygit2.Oid(hex=unchanged) not in own  # never written, and at HEAD: borrowed
    again = store.restore(result.undo, session_id="s")  # back to HEAD's old.txt and renamed.txt
    assert again.matches_target
    head_old = git(repo, "rev-parse", "HEAD:old.txt").strip()
    assert pygit2.Oid(hex=head_old) not in own  # at HEAD, same path: stays borrowed
    store.close()  # its watcher's descriptor and thread end with the test
