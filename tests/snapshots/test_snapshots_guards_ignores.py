"""Workspace guards, git's ignore semantics, import hygiene and concurrent use."""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentcli.snapshots import SnapshotStore, is_unsafe_workspace
from agentcli.snapshots.ignores import GitIgnoreRules
from snaphelpers import git, git_add_all_tree, write

PACKAGE = Path(__file__).resolve().parents[2] / "agentcli" / "snapshots"


def test_home_root_and_parents_of_home_are_unsafe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "users" / "me"
    project = home / "code" / "project"
    project.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))

    assert "home directory" in (is_unsafe_workspace(home) or "")
    assert "contains your home directory" in (is_unsafe_workspace(tmp_path / "users") or "")
    assert "filesystem root" in (is_unsafe_workspace(Path("/")) or "")
    assert is_unsafe_workspace(project) is None
    assert is_unsafe_workspace(home / "code" / ".." / "code" / "project") is None


def test_workspace_must_exist(tmp_path: Path) -> None:
    from agentcli.snapshots import SnapshotError

    with pytest.raises(SnapshotError, match="not a directory"):
        SnapshotStore(tmp_path / "missing", tmp_path / "data")


def test_importing_the_package_is_cheap_and_loads_no_heavy_module() -> None:
    script = (
        "import sys, agentcli.snapshots;"
        "print(sorted(m for m in ('pygit2', 'pydantic', 'textual', 'rich', 'litellm') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=PACKAGE.parents[1]
    ).stdout
    assert out.strip() == "[]"


def test_the_package_is_a_leaf() -> None:
    allowed_top = {"pygit2", "pydantic", "agentcli"}
    for source in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in allowed_top, f"{source.name} imports {name}"
                if top == "agentcli":
                    assert name.startswith("agentcli.snapshots"), f"{source.name} imports {name}"


def test_concurrent_captures_from_two_stores_and_threads(repo: Path, data_dir: Path, tmp_path: Path) -> None:
    stores = [SnapshotStore(repo, data_dir), SnapshotStore(repo, data_dir)]
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(8):
                write(repo / f"w{n}" / f"f{i}.txt", f"{n}-{i}\n")
                stores[n % 2].capture(session_id=f"s{n}", reason="bash")
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    final = stores[0].capture(session_id="final", reason="check")
    assert final.tree == git_add_all_tree(repo, tmp_path / "x")
    for n in range(4):
        seqs = [s.seq for s in stores[1].timeline(f"s{n}")]
        assert seqs == list(range(1, len(seqs) + 1))


# -- git's ignore rules, checked against `git check-ignore` ------------------------------------

IGNORE_FILES = {
    ".gitignore": "*.log\n/build\ndocs/*.tmp\n**/cache/\n!important.log\n\\#hash\n# comment\ntrailing\\ \n[Tt]emp?\nout/**\n",
    "pkg/.gitignore": "!debug.log\ngenerated/\n*.o\n!keep.o\nsub/**/deep.txt\n",
    "pkg/inner/.gitignore": "!*.tmp\n",
    "d/.gitignore": "sub/\n",
    "d/x/.gitignore": "!sub/\n",
}
PATHS = [
    ("a.log", False), ("important.log", False), ("pkg/debug.log", False), ("pkg/other.log", False),
    ("build", True), ("lib/build", False), ("src/build", True), ("docs/a.tmp", False), ("docs/deep/a.tmp", False),
    ("x/cache", True), ("x/cache/f", False), ("cache", False), ("#hash", False), ("trailing ", False),
    ("Temp1", False), ("temp12", False), ("out/a/b", False), ("out", True), ("pkg/generated", True),
    ("pkg/generated/x.py", False), ("pkg/a.o", False), ("pkg/keep.o", False), ("pkg/sub/a/b/deep.txt", False),
    ("pkg/sub/deep.txt", False), ("pkg/inner/n.tmp", False), ("d/sub", True), ("d/sub/f", False),
    ("d/x/sub", True), ("d/x/sub/f", False), ("pkg/inner/z.log", False),
]


def _git_ignored(repo: Path, paths: list[tuple[str, bool]]) -> set[str]:
    for path, is_dir in paths:
        target = repo / path
        if is_dir:
            target.mkdir(parents=True, exist_ok=True)
        elif not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x")
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=repo,
        input="\0".join(p for p, _ in paths) + "\0",
        capture_output=True,
        text=True,
    )
    return {p for p in proc.stdout.split("\0") if p}


def test_ignore_rules_agree_with_git_check_ignore(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    for rel, text in IGNORE_FILES.items():
        write(ws / rel, text)
    write(ws / ".git" / "info" / "exclude", "*.secret\n")
    expected = _git_ignored(ws, PATHS)
    rules = GitIgnoreRules(ws, ws / ".git" / "info" / "exclude", None, False)
    rules.configure(None, False)
    ours = {p for p, is_dir in PATHS if rules.is_ignored(p, is_dir)}
    assert ours == expected


_ATOMS = ["a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "x", "[a-c]", "[]a]", "\\*", "[", "**/", "/**", " ", "[[:alpha:]]"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(patterns=[(False, ["a", "**/", "b"])])  # git matches the literal prefix first: `ab` is ignored
@example(patterns=[(False, ["a", "/", "/"])])  # only one trailing slash is stripped: matches nothing
@given(
    patterns=st.lists(
        st.tuples(st.booleans(), st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=5)), min_size=1, max_size=4
    )
)
def test_wildmatch_translation_agrees_with_git(tmp_path: Path, patterns: list[tuple[bool, list[str]]]) -> None:
    ws = Path(tempfile.mkdtemp(dir=tmp_path))  # hypothesis reuses tmp_path across examples
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    text = "".join(("!" if neg else "") + "".join(atoms) + "\n" for neg, atoms in patterns)
    write(ws / ".gitignore", text)
    paths = [
        ("a", False), ("b", False), ("ab", False), ("x/a", False), ("c/b", False),
        ("c/x/b", False), ("ba/x", False), ("xx", True), ("b2/a/x", False),
    ]
    expected = _git_ignored(ws, paths)
    rules = GitIgnoreRules(ws, ws / ".git" / "info" / "exclude", None, False)
    rules.configure(None, False)
    assert {p for p, d in paths if rules.is_ignored(p, d)} == expected, text
