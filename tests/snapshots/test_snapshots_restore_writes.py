"""A restore writing many files writes them from several threads (`restorewrites.py`).

What it leaves must be what one thread leaves: every path the target's bytes and mode, the
layout exact, the recorded tree a full capture's. A write that fails ends the restore only
once every other write under way has finished, never with a thread still writing, a
temporary file left behind, or a file half-written.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from snaphelpers import git_add_all_tree, tree_state, write

from agentcli.snapshots import SnapshotStore, restorewrites
from agentcli.snapshots.layout import scan_layout
from agentcli.snapshots.models import PlannedChange, Snapshot
from agentcli.snapshots.restore import umask

pytestmark = [
    pytest.mark.may_skip(reason="the watcher uses inotify, which only Linux has"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only"),
]

FILES = 3 * restorewrites.PARALLEL_WRITES_MIN


@pytest.fixture
def watching(repo: Path, data_dir: Path) -> Iterator[SnapshotStore]:
    store = SnapshotStore(repo, data_dir, watch=True)
    yield store
    store.close()


def _make_start(repo: Path) -> None:
    """Files of every kind a restore writes, spread over folders."""
    for i in range(FILES):
        write(repo / f"pkg{i % 4}" / f"sub{i % 3}" / f"mod{i}.py", f"VALUE = {i}\n" * (i + 1))
    write(repo / "tools" / "run.sh", "#!/bin/sh\necho run\n", mode=0o755)
    write(repo / "secret.txt", "private\n", mode=0o600)
    write(repo / "folder" / "inside.txt", "a folder here\n")
    write(repo / "plain", "a file here\n")
    os.symlink("pkg0/sub0/mod0.py", repo / "link")
    (repo / "empty").mkdir()


def _change_everything(repo: Path) -> None:
    for i in range(FILES):
        path = repo / f"pkg{i % 4}" / f"sub{i % 3}" / f"mod{i}.py"
        if i % 5 == 0:
            path.unlink()
        else:
            write(path, f"CHANGED = {i}\n")
    write(repo / "pkg9" / "new" / "deep.py", "new\n")
    (repo / "tools" / "run.sh").write_text("#!/bin/sh\necho changed\n")
    os.chmod(repo / "tools" / "run.sh", 0o644)
    (repo / "secret.txt").unlink()
    (repo / "folder" / "inside.txt").unlink()
    (repo / "folder").rmdir()
    write(repo / "folder", "now a file\n")
    (repo / "plain").unlink()
    write(repo / "plain" / "inside.txt", "now a folder\n")
    os.unlink(repo / "link")
    os.symlink("README.md", repo / "link")
    (repo / "empty").rmdir()


def _start_then_change(repo: Path, store: SnapshotStore) -> tuple[Snapshot, dict[str, tuple[str, bytes, int]]]:
    """The start snapshot (its layout recorded) and the tree as it was; then everything changed,
    and captured as a `bash` step's would be."""
    _make_start(repo)
    start = store.capture(session_id="s", reason="start", record_layout=True).snapshot
    assert start is not None
    expected = tree_state(repo)
    _change_everything(repo)
    store.capture(session_id="s", reason="after bash", watched=True)
    return start, expected


def _writer_names(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The names of the threads `_write` runs on, filled as the restore writes."""
    names: set[str] = set()
    real_write = restorewrites._write

    def spying(*args: object) -> os.stat_result | None:
        names.add(threading.current_thread().name)
        return real_write(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(restorewrites, "_write", spying)
    return names


def test_files_written_from_threads_are_the_target_exactly(
    repo: Path, watching: SnapshotStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    start, expected = _start_then_change(repo, watching)
    threads = _writer_names(monkeypatch)

    result = watching.restore(start, session_id="s")

    assert len([t for t in threads if t.startswith("restore-write")]) > 1  # it did run on threads
    assert result.matches_target and result.after is not None
    assert tree_state(repo) == expected  # bytes, modes, links, folders: nothing else, no temporary name
    assert watching.layout_record(result.after.id) == scan_layout(repo, umask())
    assert result.tree == git_add_all_tree(repo, tmp_path / "crosscheck")
    walked = watching.capture(session_id="s", reason="walk")  # the index entries hold: nothing new
    assert walked.snapshot is None and walked.tree == result.tree


def test_where_no_writer_thread_can_start_the_files_are_written_here(
    repo: Path, watching: SnapshotStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A `pids.max` reached after the first writer thread started: the restore does not fail
    halfway (its deletions done, nothing written), it writes every file in its own thread."""
    start, expected = _start_then_change(repo, watching)
    real_start = threading.Thread.start
    writer_threads: list[str] = []

    def limited(thread: threading.Thread) -> None:
        if thread.name.startswith("restore-write"):
            writer_threads.append(thread.name)
            if len(writer_threads) > 1:
                raise RuntimeError("can't start new thread")
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", limited)
    writers = _writer_names(monkeypatch)

    result = watching.restore(start, session_id="s")

    assert len(writer_threads) == 2  # one started, the second refused
    assert writers == {threading.current_thread().name}
    assert result.matches_target and tree_state(repo) == expected
    assert result.tree == git_add_all_tree(repo, tmp_path / "crosscheck")


def test_a_write_that_fails_ends_the_restore_after_the_others_and_leaves_no_half_file(
    repo: Path, watching: SnapshotStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _make_start(repo)
    start = watching.capture(session_id="s", reason="start", record_layout=True).snapshot
    assert start is not None
    expected = tree_state(repo)
    _change_everything(repo)
    changed = tree_state(repo)
    watching.capture(session_id="s", reason="after bash", watched=True)
    failing = "pkg1/sub1/mod13.py"
    real_write = restorewrites._write
    started = threading.Event()

    def failing_once(*args: object) -> os.stat_result | None:
        change = args[1]
        if getattr(change, "path", None) == failing:
            started.wait(5)  # let other threads be mid-way through theirs
            raise OSError(errno.ENOSPC, "No space left on device", failing)
        started.set()
        return real_write(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(restorewrites, "_write", failing_once)

    with pytest.raises(OSError, match="No space left"):
        watching.restore(start, session_id="s")

    assert not [t for t in threading.enumerate() if t.name.startswith("restore-write")]
    now = tree_state(repo)
    assert not [p for p in now if ".agentcli-" in p]  # no temporary file left behind
    for path, held in now.items():
        assert held in (expected.get(path), changed.get(path)), path  # old or new, never half
    assert now[failing] == changed[failing]
    # The undo point was recorded before any write; restoring again finishes the job.
    monkeypatch.setattr(restorewrites, "_write", real_write)
    again = watching.restore(start, session_id="s")
    assert again.matches_target
    assert tree_state(repo) == expected


def test_paths_one_file_on_a_folding_filesystem_are_written_in_the_plans_order() -> None:
    # On macOS or Windows `Readme` and `README`, or a name in two Unicode forms, are one file:
    # written from two threads, which write lands last would be chance.
    def writes(*paths: str) -> list[PlannedChange]:
        return [PlannedChange(path=p, action="write", kind="file", new_id="0" * 40) for p in paths]

    assert restorewrites.distinct_everywhere(writes("a/Readme", "a/b", "c"))
    assert not restorewrites.distinct_everywhere(writes("a/Readme", "a/README"))
    assert not restorewrites.distinct_everywhere(writes("caf\u00e9", "cafe\u0301"))
