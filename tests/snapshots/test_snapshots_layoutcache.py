"""The layout cache learns a restore's writes from their stat data (`LayoutCache.wrote`).

What it concludes must be what a scan of the workspace finds: no record left below a folder a
file replaced, no empty folder that now holds something, and every case it cannot judge alone
(an unusual mode, a `.gitignore`) handed back to be looked at.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from snaphelpers import write

from agentcli.snapshots.layout import scan_layout
from agentcli.snapshots.layoutcache import LayoutCache

MASK = 0o022


def _written(path: Path, text: str, mode: int = 0o644) -> os.stat_result:
    """Writes a file as a restore does (a new inode renamed into place); its descriptor's stat."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, text.encode())
        os.fchmod(fd, mode)
        os.replace(tmp, path)
        return os.fstat(fd)
    finally:
        os.close(fd)


def test_learnt_writes_leave_the_layout_a_scan_finds(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / ".gitignore", "build/\n")
    write(ws / "dirA" / "x.sh", "#!/bin/sh\n", mode=0o700)  # an unusual mode: recorded
    (ws / "dirA" / "empty").mkdir()
    (ws / "e1").mkdir()
    (ws / "e2" / "sub").mkdir(parents=True)
    (ws / "build").mkdir()
    write(ws / "secret.txt", "old\n")
    cache = LayoutCache(ws)
    before = cache.current(MASK, trusted=True)
    assert before.modes == {"dirA/x.sh": 0o700}
    assert set(before.empty_dirs) == {"dirA/empty", "e1", "e2/sub"}  # not build/: ignored

    shutil.rmtree(ws / "dirA")  # a folder with records becomes a file
    files = {
        "dirA": _written(ws / "dirA", "now a file\n"),
        "e1/new.txt": _written(ws / "e1" / "new.txt", "fills e1\n"),
        "e2/sub/f.txt": _written(ws / "e2" / "sub" / "f.txt", "fills e2/sub\n"),
        "build/tracked.txt": _written(ws / "build" / "tracked.txt", "under an ignored folder\n"),
        "secret.txt": _written(ws / "secret.txt", "private\n", mode=0o600),
    }
    os.symlink("dirA", ws / "link")
    rest = cache.wrote({path: ("0" * 40, st) for path, st in files.items()}, ["link"], MASK)
    assert rest == ["secret.txt"]  # its record depends on the ignore rules: looked at
    cache.note(rest)

    after = cache.current(MASK, trusted=True)

    assert after == scan_layout(ws, MASK)
    assert after.modes == {"secret.txt": 0o600} and after.empty_dirs == ()


def test_a_written_gitignore_is_handed_back_and_the_cache_starts_over(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / ".gitignore", "")
    write(ws / "logs" / "a.log", "x\n", mode=0o600)
    cache = LayoutCache(ws)
    assert cache.current(MASK, trusted=True).modes == {"logs/a.log": 0o600}

    st = _written(ws / ".gitignore", "logs/\n")
    rest = cache.wrote({".gitignore": ("0" * 40, st)}, [], MASK)
    assert rest == [".gitignore"]
    cache.note(rest)

    assert cache.current(MASK, trusted=True) == scan_layout(ws, MASK)  # logs/ now ignored: no record
    assert scan_layout(ws, MASK).modes == {}


def test_nothing_is_learnt_without_a_layout_kept(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "a.txt", "a\n")
    cache = LayoutCache(ws)  # never looked: nothing kept, the next look scans
    st = _written(ws / "a.txt", "b\n", mode=0o600)
    assert cache.wrote({"a.txt": ("0" * 40, st)}, [], MASK) == []
    assert cache.current(MASK, trusted=True) == scan_layout(ws, MASK)
