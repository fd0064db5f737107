"""A restore's result entry takes its line counts from the plan's blob pairs (`restorestats.py`)
instead of a diff; they must be the diff's, file for file, whatever the files hold."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from snaphelpers import write

from agentcli.snapshots import SnapshotStore
from agentcli.snapshots import store as store_module
from agentcli.snapshots.diff import file_stats, tree_diff
from agentcli.snapshots.models import FileStat

pytestmark = [
    pytest.mark.may_skip(reason="the shortcut needs the watcher, which uses inotify (Linux only)"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only"),
]


def _content(rng: random.Random) -> bytes:
    """Text, CRLF text, no final newline, empty, binary, or long with scattered edits."""
    kind = rng.choice(["text", "crlf", "nonl", "empty", "binary", "long"])
    lines = [f"line {rng.randint(0, 9)} {'x' * rng.randint(0, 30)}" for _ in range(rng.randint(1, 12))]
    if kind == "text":
        return ("\n".join(lines) + "\n").encode()
    if kind == "crlf":
        return ("\r\n".join(lines) + "\r\n").encode()
    if kind == "nonl":
        return "\n".join(lines).encode()
    if kind == "empty":
        return b""
    if kind == "binary":
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))) + b"\0"
    return ("".join(f"{i} {rng.choice(['a', 'b', 'c'])}\n" for i in range(rng.randint(200, 2000)))).encode()


@pytest.fixture
def used(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[FileStat] | None]]:
    """What the shortcut answered for each restore (None: it left the counts to the diff)."""
    answers: list[list[FileStat] | None] = []
    real = store_module.restore_file_stats

    def recording(*args: object, **kwargs: object) -> tuple[list[FileStat], int] | None:
        answer = real(*args, **kwargs)  # type: ignore[arg-type]
        answers.append(answer[0] if answer is not None else None)
        return answer

    monkeypatch.setattr(store_module, "restore_file_stats", recording)
    yield answers


@pytest.mark.parametrize("seed", range(6))
def test_result_line_counts_equal_the_diffs(
    repo: Path, data_dir: Path, used: list[list[FileStat] | None], seed: int
) -> None:
    rng = random.Random(seed)
    names = [f"d{i % 3}/f{i}.txt" for i in range(24)]
    for name in names[:16]:
        write(repo / name, _content(rng))
    store = SnapshotStore(repo, data_dir, watch=True)
    try:
        target = store.capture(session_id="s", reason="start", record_layout=True)
        assert target.snapshot is not None
        for _ in range(3):  # several restores in a row, each from a different state of the files
            for name in rng.sample(names, 10):
                path = repo / name
                if path.exists() and rng.random() < 0.3:
                    path.unlink()
                else:
                    write(path, _content(rng))
            store.capture(session_id="s", reason="changed", watched=True)
            result = store.restore(target.snapshot, session_id="s")
            assert result.matches_target and result.after is not None
            expected, omitted = file_stats(tree_diff(store._shadow.repo, result.undo.tree, result.tree, context=0))
            assert result.after.files == expected
            assert result.after.files_omitted == omitted
    finally:
        store.close()
    assert used and all(answer is not None for answer in used), "the shortcut was not taken"
