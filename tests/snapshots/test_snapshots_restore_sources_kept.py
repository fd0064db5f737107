"""The ignore sources a restore (and a capture) finds are kept between calls (`ignore/discovered.py`)
only while every input is provably unchanged: a config rewritten in place, same size, same
mtime, must still be honoured by the next restore."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from snaphelpers import git, ls_tree, write

from agentcli.ignore import discovered, rules, sources
from agentcli.snapshots import SnapshotStore


@pytest.fixture(params=[False, True], ids=["walked", "watched"])
def store(request: pytest.FixtureRequest, repo: Path, data_dir: Path) -> Iterator[SnapshotStore]:
    if request.param and not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux-only")
    opened = SnapshotStore(repo, data_dir, watch=bool(request.param))
    yield opened
    opened.close()


@pytest.fixture
def finds(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every time the sources are found afresh (the real finding runs)."""
    calls: list[Path] = []
    real = sources._discover

    def counting(workspace: Path) -> tuple[sources.IgnoreSources, str | None]:
        calls.append(workspace)
        return real(workspace)

    monkeypatch.setattr(sources, "_discover", counting)
    discovered.forget()
    return calls


def _rewrite_same_size_same_mtime(path: Path, text: str) -> None:
    """Rewrites `path` in place (same inode, same size) and puts its mtime back: only the
    ctime tells, and only once the clock has ticked past the old one."""
    before = os.stat(path)
    assert len(text.encode()) == before.st_size
    while True:
        with open(path, "r+b") as handle:
            handle.write(text.encode())
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        now = os.stat(path)
        if now.st_ctime_ns != before.st_ctime_ns:
            break
    assert (now.st_ino, now.st_size, now.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def test_an_exclude_file_rewritten_between_two_restores_is_honoured(
    repo: Path, store: SnapshotStore, finds: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    write(exclude, "*.tmp\n")
    # Files as old as the racy rules ask: kept answers are what is under test.
    monkeypatch.setattr(discovered, "RACY_NS", 0)
    monkeypatch.setattr(rules, "_RACY_NS", 0)
    start = store.capture(session_id="s", reason="start", record_layout=True).snapshot
    assert start is not None
    write(repo / "notes.tmp", "ignored while info/exclude says so\n")
    write(repo / "src" / "app.py", "changed\n")
    store.capture(session_id="s", reason="after bash", watched=True)
    first = store.restore(start, session_id="s")
    assert first.matches_target and (repo / "notes.tmp").exists()  # ignored: never deleted
    found = len(finds)
    write(repo / "src" / "app.py", "changed again\n")
    store.capture(session_id="s", reason="after bash", watched=True)
    assert store.restore(start, session_id="s").matches_target
    assert len(finds) == found  # nothing the sources came from changed: the kept ones served

    _rewrite_same_size_same_mtime(exclude, "*.nop\n")
    result = store.restore(start, session_id="s")

    assert "notes.tmp" in ls_tree(store, result.undo.tree)  # no longer ignored: in the undo point
    assert not (repo / "notes.tmp").exists()  # and the target lacks it
    assert result.matches_target


def test_a_config_rewritten_in_place_is_honoured(
    repo: Path, finds: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same size, same mtime: only the ctime tells the kept answer from the file now."""
    git(repo, "config", "core.ignorecase", "1")
    monkeypatch.setattr(discovered, "RACY_NS", 0)
    assert sources.discover(repo).ignore_case
    assert len(finds) == 1  # kept
    config = repo / ".git" / "config"
    _rewrite_same_size_same_mtime(config, config.read_text().replace("ignorecase = 1", "ignorecase = 0"))
    assert not sources.discover(repo).ignore_case
    assert len(finds) == 2


def test_a_repository_made_above_a_plain_folder_is_found(tmp_path: Path, finds: list[Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discovered, "RACY_NS", 0)
    ws = tmp_path / "outer" / "ws"
    ws.mkdir(parents=True)
    assert not sources.discover(ws).in_repository
    assert not sources.discover(ws).in_repository
    assert len(finds) == 1
    git(tmp_path, "init", "-q", str(tmp_path / "outer"))
    found = sources.discover(ws)
    assert found.in_repository and found.workspace == "ws" and len(finds) == 2


def test_young_files_keep_nothing_and_each_answer_is_a_new_object(tmp_path: Path, finds: list[Path]) -> None:
    ws = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(ws))  # its config was just written: younger than the racy limit
    first, second = sources.discover(ws), sources.discover(ws)
    assert len(finds) == 2
    assert first == second and first is not second
