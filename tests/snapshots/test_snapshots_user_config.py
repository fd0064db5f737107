"""The user's repository config as the store reads it: values git allows that a naive read trips on."""

from __future__ import annotations

from pathlib import Path

from agentcli.snapshots import SnapshotStore
from snaphelpers import ls_tree, write


def test_a_valueless_excludesfile_flag_names_no_file(repo: Path, data_dir: Path) -> None:
    """`[core] excludesFile` with no `=` reads as None (a flag): captures go on, honouring .gitignore."""
    with open(repo / ".git" / "config", "a", encoding="utf-8") as fh:
        fh.write("[core]\n\texcludesFile\n")
    write(repo / "debug.log", "ignored by .gitignore\n")
    write(repo / "new.py", "print('hi')\n")
    store = SnapshotStore(repo, data_dir)
    result = store.capture(session_id="S", reason="start")
    paths = set(ls_tree(store, result.tree))
    assert "new.py" in paths
    assert "debug.log" not in paths
