"""Diff, timeline and snapshot references, cross-checked with `git diff` on the shadow repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.snapshots import AmbiguousSnapshotRef, SnapshotNotFound, SnapshotStore
from snaphelpers import shadow_git, write


def _numstat(store: SnapshotStore, a: str, b: str) -> dict[str, tuple[str, str]]:
    out = {}
    for line in shadow_git(store, "diff", "--numstat", "--no-renames", a, b).splitlines():
        added, removed, path = line.split("\t")
        out[path] = (added, removed)
    return out


def test_diff_between_snapshots_matches_git_diff(store: SnapshotStore, repo: Path) -> None:
    a = store.capture(session_id="s", reason="start").snapshot
    write(repo / "src" / "app.py", "def main():\n    x = 1\n    return x\n")
    write(repo / "logo.png", b"\x89PNG\x00" + bytes(range(256)))
    (repo / "src" / "util.py").unlink()
    write(repo / "docs" / "guide.md", "one\ntwo\nthree\n")
    b = store.capture(session_id="s", reason="edit").snapshot
    assert a is not None and b is not None

    result = store.diff(a, b, context=1)

    expected = _numstat(store, a.tree, b.tree)
    ours = {f.path: ("-", "-") if f.binary else (str(f.added), str(f.removed)) for f in result.files}
    assert ours == expected
    assert {f.path: f.status for f in result.files} == {
        "docs/guide.md": "added",
        "logo.png": "added",
        "src/app.py": "modified",
        "src/util.py": "deleted",
    }
    app = next(f for f in result.files if f.path == "src/app.py")
    git_patch = shadow_git(store, "diff", "-U1", a.tree, b.tree, "--", "src/app.py")
    assert app.patch.splitlines()[-4:] == git_patch.splitlines()[-4:]
    assert result.totals.added == sum(f.added for f in result.files) and result.totals.files == 4


def test_diff_against_working_tree_records_nothing(store: SnapshotStore, repo: Path) -> None:
    store.capture(session_id="s", reason="start")
    write(repo / "README.md", "# demo\nnew line\n")
    write(repo / "scratch.log", "ignored\n")

    result = store.diff("1")

    assert result.working_tree
    assert [(f.path, f.added, f.removed) for f in result.files] == [("README.md", 1, 0)]
    assert len(store.timeline("s")) == 1


def test_diff_detects_renames(store: SnapshotStore, repo: Path) -> None:
    write(repo / "long.txt", "".join(f"line {i}\n" for i in range(50)))
    a = store.capture(session_id="s", reason="start").snapshot
    (repo / "long.txt").rename(repo / "moved.txt")
    b = store.capture(session_id="s", reason="mv").snapshot
    files = store.diff(a, b).files  # type: ignore[arg-type]
    assert [(f.status, f.old_path, f.path) for f in files] == [("renamed", "long.txt", "moved.txt")]


def test_timeline_across_sessions_and_resolution(store: SnapshotStore, repo: Path) -> None:
    s1 = store.capture(session_id="alpha", reason="start").snapshot
    write(repo / "a.txt", "a\n")
    s2 = store.capture(session_id="alpha", reason="a").snapshot
    write(repo / "b.txt", "b\n")
    t1 = store.capture(session_id="beta", reason="start").snapshot
    assert s1 and s2 and t1

    assert [s.id for s in store.timeline()] == [s1.id, s2.id, t1.id]
    assert [s.seq for s in store.timeline("alpha")] == [1, 2]
    assert store.resolve("2") == s2  # only alpha has a #2
    assert store.resolve("1", session_id="beta") == t1
    assert store.resolve("beta:1") == t1
    assert store.resolve(s2.id[:4]) == s2
    assert store.resolve(s2.id.upper()) == s2
    assert store.resolve(t1.tree[:12]) == t1
    with pytest.raises(AmbiguousSnapshotRef, match="--session"):
        store.resolve("1")
    with pytest.raises(SnapshotNotFound, match="no snapshot '9' in session alpha"):
        store.resolve("9", session_id="alpha")
    with pytest.raises(SnapshotNotFound):
        store.resolve("zzzz")


def test_timeline_survives_a_torn_last_line(store: SnapshotStore, repo: Path, data_dir: Path) -> None:
    store.capture(session_id="s", reason="start")
    timeline_file = store.path / "agentcli" / "timeline" / "s.jsonl"
    with open(timeline_file, "ab") as fh:
        fh.write(b'{"id": "abc", "seq": 2, "sess')  # a crash mid-write
    fresh = SnapshotStore(repo, data_dir)
    assert [s.seq for s in fresh.timeline("s")] == [1]
    write(repo / "x.txt", "x\n")
    second = fresh.capture(session_id="s", reason="after crash").snapshot
    assert second is not None and second.seq == 2
    assert [s.seq for s in SnapshotStore(repo, data_dir).timeline("s")] == [1, 2]


def test_snapshot_refs_keep_every_tree(store: SnapshotStore, repo: Path) -> None:
    trees = []
    for i in range(3):
        write(repo / f"f{i}.txt", f"{i}\n")
        trees.append(store.capture(session_id="s", reason=str(i)).tree)
    refs = shadow_git(store, "for-each-ref", "--format=%(refname) %(objectname)", "refs/agentcli/").splitlines()
    assert refs == [f"refs/agentcli/s/{i + 1} {tree}" for i, tree in enumerate(trees)]
