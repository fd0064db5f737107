"""Capture: the tree recorded equals `git add -A && git write-tree`, in every kind of workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.snapshots import SkipReason, SnapshotStore
from snaphelpers import blob_bytes, change_behind_flags, commit_all, git, git_add_all_tree, ls_tree, shadow_git, write


def test_first_capture_records_uncommitted_work_exactly_like_git(store: SnapshotStore, repo: Path, tmp_path: Path) -> None:
    write(repo / "src" / "app.py", "def main():\n    return 2\n")  # modified, unstaged
    write(repo / "src" / "staged.py", "S = 1\n")
    git(repo, "add", "src/staged.py")  # staged, not committed
    write(repo / "notes.txt", "todo\n")  # untracked
    (repo / "src" / "util.py").unlink()  # deleted
    write(repo / "debug.log", "ignored\n")

    result = store.capture(session_id="s1", reason="session start")

    assert result.snapshot is not None
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    entries = ls_tree(store, result.tree)
    assert "debug.log" not in entries and "src/util.py" not in entries
    assert entries["bin/run.sh"][0] == "100755"
    # The first snapshot's stats compare with the user's HEAD: exactly the uncommitted work.
    assert result.snapshot.base_tree == git(repo, "rev-parse", "HEAD^{tree}").strip()
    stats = {f.path: (f.status, f.added, f.removed) for f in result.snapshot.files}
    assert stats == {
        "notes.txt": ("added", 1, 0),
        "src/app.py": ("modified", 1, 1),
        "src/staged.py": ("added", 1, 0),
        "src/util.py": ("deleted", 0, 1),
    }


def test_store_is_bare_with_worktree_and_leaves_no_git_file_in_workspace(tmp_path: Path, data_dir: Path) -> None:
    ws = tmp_path / "plain"
    write(ws / "a.txt", "a\n")
    store = SnapshotStore(ws, data_dir)
    store.capture(session_id="s", reason="start")

    assert not (ws / ".git").exists()
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]
    assert store.path.parent == data_dir.resolve() / "snapshots"
    assert shadow_git(store, "config", "core.worktree").strip() == str(ws.resolve())
    assert shadow_git(store, "config", "core.bare").strip() == "false"
    assert (store.path / "info" / "attributes").read_text() == "* -text -filter -ident -working-tree-encoding\n"


def test_capture_in_directory_that_is_not_a_git_repository(tmp_path: Path, data_dir: Path) -> None:
    ws = tmp_path / "plain"
    write(ws / "a.txt", "a\n")
    write(ws / "sub" / "b.bin", bytes(range(256)))
    write(ws / "sub" / ".gitignore", "*.tmp\n")
    write(ws / "sub" / "c.tmp", "scratch\n")
    store = SnapshotStore(ws, data_dir)

    result = store.capture(session_id="s", reason="start")

    assert result.tree == git_add_all_tree(ws, tmp_path / "x")
    assert set(ls_tree(store, result.tree)) == {"a.txt", "sub/b.bin", "sub/.gitignore"}
    alternates = store.path / "objects" / "info" / "alternates"
    assert not alternates.exists() or not alternates.read_text().strip()
    assert result.snapshot is not None and result.snapshot.base_tree is None and result.snapshot.files == []


def test_capture_in_repository_without_commits(tmp_path: Path, data_dir: Path) -> None:
    ws = tmp_path / "fresh"
    ws.mkdir()
    git(ws, "init", "-q")
    write(ws / "staged.txt", "s\n")
    git(ws, "add", "staged.txt")
    write(ws / "loose.txt", "l\n")
    store = SnapshotStore(ws, data_dir)

    result = store.capture(session_id="s", reason="start")

    assert result.tree == git_add_all_tree(ws, tmp_path / "x")
    assert set(ls_tree(store, result.tree)) == {"staged.txt", "loose.txt"}


def test_unchanged_tree_adds_no_entry_and_sequence_numbers_grow(store: SnapshotStore, repo: Path) -> None:
    first = store.capture(session_id="s", reason="start")
    again = store.capture(session_id="s", reason="after bash", tool_call_id="c1", tool_name="bash")
    write(repo / "README.md", "# changed\n")
    changed = store.capture(session_id="s", reason="after edit_file", tool_call_id="c2", tool_name="edit_file")

    assert first.snapshot is not None and first.snapshot.seq == 1
    assert again.snapshot is None and again.tree == first.tree
    assert changed.snapshot is not None and changed.snapshot.seq == 2
    assert changed.snapshot.tool_call_id == "c2" and changed.snapshot.tool_name == "edit_file"
    assert [(f.path, f.added, f.removed) for f in changed.snapshot.files] == [("README.md", 1, 1)]
    assert [s.seq for s in store.timeline("s")] == [1, 2]
    # Another session's first capture always records an entry, compared with the last snapshot.
    other = store.capture(session_id="t", reason="start")
    assert other.snapshot is not None and other.snapshot.seq == 1 and other.snapshot.files == []


def test_nested_ignores_info_exclude_and_global_excludes_are_honored(
    store: SnapshotStore, repo: Path, tmp_path: Path, isolated_git: Path
) -> None:
    write(repo / "pkg" / ".gitignore", "generated/\n!keep.log\n")
    write(repo / "pkg" / "generated" / "out.py", "x\n")
    write(repo / "pkg" / "keep.log", "kept by negation\n")
    write(repo / "pkg" / "drop.log", "ignored by root *.log\n")
    write(repo / ".env", "SECRET=1\n")
    write(repo / ".git" / "info" / "exclude", ".env\n")
    write(isolated_git / ".config" / "git" / "ignore", "*.secret\n")  # default global excludes file
    write(repo / "key.secret", "k\n")
    write(repo / "deep" / "a" / "b" / ".gitignore", "*.dat\n")
    write(repo / "deep" / "a" / "b" / "x.dat", "x\n")
    write(repo / "deep" / "a" / "y.dat", "y\n")

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert "pkg/keep.log" in entries and "deep/a/y.dat" in entries
    for hidden in (".env", "key.secret", "pkg/generated/out.py", "pkg/drop.log", "deep/a/b/x.dat"):
        assert hidden not in entries
    # A later change to info/exclude is picked up by the next capture.
    write(repo / ".git" / "info" / "exclude", "")
    assert ".env" in ls_tree(store, store.capture(session_id="s", reason="again").tree)


def test_symlinks_to_files_and_directories_match_git_including_dir_only_patterns(
    store: SnapshotStore, repo: Path, tmp_path: Path
) -> None:
    write(repo / "real" / "f.txt", "f\n")
    os.symlink("real/f.txt", repo / "file-link")
    os.symlink("real", repo / "dir-link")
    os.symlink("does/not/exist", repo / "dangling")
    # libgit2 alone would ignore `build` (it follows the symlink and sees a directory); git
    # records it. And it would record `keep` (`!keep/` re-includes a directory), git ignores it.
    os.symlink("real", repo / "build")
    os.symlink("real", repo / "keep")
    write(repo / ".gitignore", "*.log\n__pycache__/\nbuild/\nkeep*\n!keep/\n")

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert entries["file-link"][0] == entries["dir-link"][0] == entries["build"][0] == "120000"
    assert entries["dangling"][0] == "120000"
    assert "keep" not in entries
    assert shadow_git(store, "cat-file", "-p", entries["build"][1]) == "real"


def test_executable_bit_alone_makes_a_new_snapshot(store: SnapshotStore, repo: Path) -> None:
    store.capture(session_id="s", reason="start")
    (repo / "src" / "app.py").chmod(0o755)
    result = store.capture(session_id="s", reason="chmod")

    assert result.snapshot is not None
    assert ls_tree(store, result.tree)["src/app.py"][0] == "100755"
    assert [(f.path, f.added, f.removed) for f in result.snapshot.files] == [("src/app.py", 0, 0)]


def test_binary_files_are_detected_in_stats(store: SnapshotStore, repo: Path, tmp_path: Path) -> None:
    store.capture(session_id="s", reason="start")
    write(repo / "img.png", b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)) * 4)
    write(repo / "README.md", "# demo\nmore\n")
    result = store.capture(session_id="s", reason="write")

    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    stats = {f.path: f for f in result.snapshot.files}  # type: ignore[union-attr]
    assert stats["img.png"].binary and stats["img.png"].added == 0
    assert not stats["README.md"].binary and stats["README.md"].added == 1


def test_nested_repository_and_submodule_are_recorded_as_gitlinks(
    store: SnapshotStore, repo: Path, tmp_path: Path
) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    write(upstream / "lib.py", "L = 1\n")
    commit_all(upstream)
    git(repo, "submodule", "add", "-q", str(upstream), "vendor/lib")
    commit_all(repo, "add submodule")
    nested = repo / "tools" / "clone"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    write(nested / "x.txt", "x\n")
    nested_head = commit_all(nested)

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert entries["tools/clone"] == ("160000", nested_head)
    assert entries["vendor/lib"][0] == "160000"
    assert not any(p.startswith("tools/clone/") for p in entries)

    # Moving the nested repository's HEAD moves the gitlink, as `git add -A` would.
    write(nested / "y.txt", "y\n")
    moved = commit_all(nested)
    result = store.capture(session_id="s", reason="nested commit")
    assert ls_tree(store, result.tree)["tools/clone"] == ("160000", moved)
    assert result.tree == git_add_all_tree(repo, tmp_path / "x2")


def test_nested_repository_without_commits_is_skipped_and_reported(store: SnapshotStore, repo: Path) -> None:
    empty = repo / "scratch"
    empty.mkdir()
    git(empty, "init", "-q")
    write(empty / "draft.txt", "d\n")
    write(repo / "ok.txt", "ok\n")

    result = store.capture(session_id="s", reason="start")

    assert "ok.txt" in ls_tree(store, result.tree)
    assert not any(p.startswith("scratch") for p in ls_tree(store, result.tree))
    assert [(s.path, s.reason) for s in result.skipped] == [("scratch", SkipReason.NESTED_REPO_WITHOUT_COMMITS)]


def test_created_and_deleted_files_and_directories(store: SnapshotStore, repo: Path, tmp_path: Path) -> None:
    store.capture(session_id="s", reason="start")
    write(repo / "new" / "deep" / "file.txt", "n\n")
    (repo / "src" / "util.py").unlink()
    (repo / "bin" / "run.sh").unlink()
    (repo / "bin").rmdir()
    result = store.capture(session_id="s", reason="changes")

    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert {f.path: f.status for f in result.snapshot.files} == {  # type: ignore[union-attr]
        "new/deep/file.txt": "added",
        "src/util.py": "deleted",
        "bin/run.sh": "deleted",
    }


def test_file_replaced_by_directory_and_back(store: SnapshotStore, repo: Path, tmp_path: Path) -> None:
    store.capture(session_id="s", reason="start")
    (repo / "README.md").unlink()
    write(repo / "README.md" / "index.md", "now a directory\n")
    result = store.capture(session_id="s", reason="file to dir")
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert "README.md/index.md" in ls_tree(store, result.tree)


def test_path_hint_refreshes_only_the_hinted_paths(store: SnapshotStore, repo: Path) -> None:
    store.capture(session_id="s", reason="start")
    write(repo / "src" / "app.py", "hinted\n")
    write(repo / "README.md", "not hinted\n")
    write(repo / "brand" / "new.txt", "hinted new\n")

    hinted = store.capture(session_id="s", reason="write_file", paths_hint=["src/app.py", str(repo / "brand/new.txt")])

    entries = ls_tree(store, hinted.tree)
    assert "brand/new.txt" in entries
    assert shadow_git(store, "cat-file", "-p", entries["src/app.py"][1]) == "hinted\n"
    assert shadow_git(store, "cat-file", "-p", entries["README.md"][1]) == "# demo\n"  # not looked at
    full = store.capture(session_id="s", reason="bash")
    assert shadow_git(store, "cat-file", "-p", ls_tree(store, full.tree)["README.md"][1]) == "not hinted\n"


def test_path_hint_for_a_deleted_file_and_ignored_file(store: SnapshotStore, repo: Path) -> None:
    store.capture(session_id="s", reason="start")
    (repo / "src" / "util.py").unlink()
    write(repo / "trace.log", "ignored even when hinted\n")
    result = store.capture(session_id="s", reason="hint", paths_hint=["src/util.py", "trace.log", "../outside", ".git/config"])
    entries = ls_tree(store, result.tree)
    assert "src/util.py" not in entries and "trace.log" not in entries


def test_untracked_file_over_size_limit_is_skipped_but_tracked_large_file_is_kept(
    repo: Path, data_dir: Path
) -> None:
    write(repo / "tracked.bin", b"t" * 4096)
    commit_all(repo)
    store = SnapshotStore(repo, data_dir, max_file_bytes=1024)
    write(repo / "huge.bin", b"h" * 2048)
    write(repo / "small.txt", "s\n")
    write(repo / "tracked.bin", b"u" * 8192)

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    assert "small.txt" in entries and "tracked.bin" in entries and "huge.bin" not in entries
    assert [(s.path, s.reason, s.size) for s in result.skipped] == [("huge.bin", SkipReason.TOO_LARGE, 2048)]
    assert "over the size limit" in result.skipped[0].describe()


def test_untracked_directory_with_too_many_files_is_skipped(repo: Path, data_dir: Path) -> None:
    store = SnapshotStore(repo, data_dir, max_untracked_dir_files=20)
    for i in range(30):
        write(repo / "node_modules" / f"pkg{i % 3}" / f"f{i}.js", f"{i}\n")
    for i in range(5):
        write(repo / "small_dir" / f"f{i}.txt", f"{i}\n")
    for i in range(25):  # new files in a tracked directory are not an "untracked directory"
        write(repo / "src" / f"gen{i}.py", f"{i}\n")

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    assert not any(p.startswith("node_modules/") for p in entries)
    assert sum(p.startswith("small_dir/") for p in entries) == 5
    assert sum(p.startswith("src/gen") for p in entries) == 25
    assert [(s.path, s.reason, s.files) for s in result.skipped] == [("node_modules", SkipReason.TOO_MANY_FILES, 30)]


def test_crlf_and_filters_round_trip_byte_for_byte(store: SnapshotStore, repo: Path) -> None:
    git(repo, "config", "core.autocrlf", "true")
    write(repo / ".gitattributes", "* text=auto\n*.txt eol=crlf\n")
    crlf = b"line one\r\nline two\r\n"
    mixed = b"lf\ncrlf\r\nlone cr\r"
    write(repo / "win.txt", crlf)
    write(repo / "mixed.md", mixed)

    first = store.capture(session_id="s", reason="start")
    entries = ls_tree(store, first.tree)
    assert blob_bytes(store, entries["win.txt"][1]) == crlf
    assert blob_bytes(store, entries["mixed.md"][1]) == mixed

    (repo / "win.txt").unlink()
    write(repo / "mixed.md", "changed\n")
    store.capture(session_id="s", reason="change")
    store.restore(first.snapshot, session_id="s")  # type: ignore[arg-type]
    assert (repo / "win.txt").read_bytes() == crlf
    assert (repo / "mixed.md").read_bytes() == mixed


def test_touched_but_unchanged_files_get_their_stat_refreshed(store: SnapshotStore, repo: Path) -> None:
    store.capture(session_id="s", reason="start")
    target = repo / "src" / "app.py"
    os.utime(target, (1_700_000_000, 1_700_000_000))

    result = store.capture(session_id="s", reason="touch")
    assert result.snapshot is None  # same content, same tree
    write(repo / "README.md", "an unrelated change, so the index is written\n")
    store.capture(session_id="s", reason="edit")

    debug = git(repo, "ls-files", "--debug", "src/app.py", env={"GIT_DIR": str(store.path), "GIT_WORK_TREE": str(repo)})
    # The shadow index carries the new mtime, so later captures (in any process) do not hash
    # the file again; Index.add_all() would have left the old one.
    assert "mtime: 1700000000:" in debug


def test_named_pipe_does_not_block_capture(store: SnapshotStore, repo: Path, tmp_path: Path) -> None:
    os.mkfifo(repo / "pipe")
    result = store.capture(session_id="s", reason="start")
    assert "pipe" not in ls_tree(store, result.tree)
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")


def test_data_dir_inside_workspace_is_never_captured(repo: Path) -> None:
    store = SnapshotStore(repo, repo / ".local" / "share" / "agentcli")
    first = store.capture(session_id="s", reason="start")
    write(repo / "a.txt", "a\n")
    second = store.capture(session_id="s", reason="again")
    assert not any(p.startswith(".local/") for p in ls_tree(store, first.tree))
    assert not any(p.startswith(".local/") for p in ls_tree(store, second.tree))


def test_snapshot_ids_are_stable_across_processes(store: SnapshotStore, repo: Path, data_dir: Path) -> None:
    store.capture(session_id="s", reason="start")
    write(repo / "README.md", "two\n")
    second = store.capture(session_id="s", reason="edit").snapshot
    assert second is not None

    script = (
        "import sys; from pathlib import Path; from agentcli.snapshots import SnapshotStore;"
        "s = SnapshotStore(Path(sys.argv[1]), Path(sys.argv[2]));"
        "print(s.resolve('2', session_id='s').model_dump_json())"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(repo), str(data_dir)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout
    assert out.strip() == second.model_dump_json()


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "x.lock", ".hidden", "a b"])
def test_invalid_session_ids_are_refused(store: SnapshotStore, bad: str) -> None:
    from agentcli.snapshots import InvalidSessionId

    with pytest.raises(InvalidSessionId, match="session id"):
        store.capture(session_id=bad, reason="start")


def test_seed_drops_assume_unchanged_and_skip_worktree_entries(repo: Path, data_dir: Path, tmp_path: Path) -> None:
    now = change_behind_flags(repo)
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    for path, content in now.items():
        assert blob_bytes(store, entries[path][1]) == content
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")


@pytest.mark.parametrize("index_args", [["--split-index"], ["--index-version", "4"]])
def test_seed_from_index_formats_libgit2_may_not_read(
    repo: Path, data_dir: Path, tmp_path: Path, index_args: list[str]
) -> None:
    git(repo, "update-index", *index_args)
    write(repo / "src" / "app.py", "uncommitted\n")
    write(repo / "untracked.txt", "u\n")
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert {f.path for f in result.snapshot.files} == {"src/app.py", "untracked.txt"}  # type: ignore[union-attr]


def test_unsafe_relative_paths_are_refused() -> None:
    from agentcli.snapshots.guards import safe_relative_path

    assert safe_relative_path("a/./b//c") == "a/b/c"
    for bad in ("", "/etc/passwd", "../x", "a/../../x", ".git/config", "sub/.GIT/HEAD", "a\0b"):
        assert safe_relative_path(bad) is None, bad


def test_store_lock_times_out_with_an_actionable_error(tmp_path: Path) -> None:
    import threading

    from agentcli.snapshots import StoreBusyError
    from agentcli.snapshots.locking import StoreLock

    holder = StoreLock(tmp_path / "store.lock")
    waiter = StoreLock(tmp_path / "store.lock", timeout_s=0.2)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with holder.held():
            held.set()
            release.wait(60)

    thread = threading.Thread(target=hold)
    thread.start()
    # The waiter must find the lock taken: go on only once the holder has it (on a loaded machine
    # the thread may take a while to start; a timed-out wait would let the waiter in).
    assert held.wait(60), "the holder thread never took the lock"
    try:
        with pytest.raises(StoreBusyError, match="held by another agentcli process"):
            with waiter.held():
                pass
    finally:
        release.set()
        thread.join()
    with waiter.held():  # free again
        pass


def test_close_packs_the_index_and_the_next_capture_unpacks_it(store: SnapshotStore, repo: Path, data_dir: Path, tmp_path: Path) -> None:
    store.capture(session_id="s", reason="start")
    index = store.path / "index"
    mtime_ns, size = index.stat().st_mtime_ns, index.stat().st_size
    store.close()
    assert not index.exists()
    assert 0 < (store.path / "index.z").stat().st_size < size

    # Another process opening the store later sees the packed index, stat data and mtime intact.
    write(repo / "src" / "new.py", "N = 1\n")
    other = SnapshotStore(repo, data_dir)
    result = other.capture(session_id="s", reason="after close")
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")
    assert not (store.path / "index.z").exists()
    # The same store object picks up the other's index too, and still finds changes.
    (repo / "src" / "util.py").unlink()
    again = store.capture(session_id="s", reason="delete")
    assert again.snapshot is not None and "src/util.py" not in ls_tree(store, again.tree)
    store.close()
    assert other.capture(session_id="s", reason="unchanged").snapshot is None
    assert index.stat().st_mtime_ns >= mtime_ns


def test_packed_index_restores_the_index_file_mtime(store: SnapshotStore, repo: Path) -> None:
    store.capture(session_id="s", reason="start")
    index = store.path / "index"
    os.utime(index, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = index.read_bytes()
    store.close()
    store._shadow.index()  # unpacks
    assert index.read_bytes() == before
    assert index.stat().st_mtime_ns == 1_600_000_000_000_000_000


def test_corrupt_packed_index_only_costs_a_reseed(store: SnapshotStore, repo: Path, tmp_path: Path) -> None:
    store.capture(session_id="s", reason="start")
    store.close()
    (store.path / "index.z").write_bytes(b"agentcli-index-z1\n" + b"\0" * 8 + b"not zlib")
    write(repo / "README.md", "changed while the store was closed\n")
    other = SnapshotStore(repo, store.data_dir)
    assert len(other._shadow.index()) == 5  # seeded again from the user's index, not started empty
    result = other.capture(session_id="s", reason="after")
    assert result.tree == git_add_all_tree(repo, tmp_path / "x")


def test_seed_drops_an_assume_unchanged_entry_of_a_version_2_index_after_a_long_path(
    repo: Path, data_dir: Path, tmp_path: Path
) -> None:
    # A version 2 index (no extended flags) is scanned from its bytes; a path longer than the
    # 12-bit length field must not throw the scan off the entries after it.
    write(tmp_path / "blob", "x\n")
    blob = git(repo, "hash-object", "-w", str(tmp_path / "blob")).strip()
    long_path = "/".join(["d" * 200] * 22) + "/long"  # staged only: too long for the filesystem
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{long_path}")
    git(repo, "update-index", "--index-version", "2", "--assume-unchanged", "src/app.py")
    assert (repo / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\2"
    write(repo / "src" / "app.py", "changed behind an assume-unchanged flag\n")
    store = SnapshotStore(repo, data_dir)

    result = store.capture(session_id="s", reason="start")

    entries = ls_tree(store, result.tree)
    assert shadow_git(store, "cat-file", "-p", entries["src/app.py"][1]) == "changed behind an assume-unchanged flag\n"
